"""A reader for ``.dockerignore``: which paths of the checkout reach the image build.

Docker's rules, for the patterns the file uses: one pattern a line, ``#``
comments, a leading ``!`` re-includes, the last pattern that matches a path
decides, ``*`` and ``?`` stay inside one path segment, ``**`` spans any
number of them, and a path is matched when it or one of its parent folders is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath


def _regex(pattern: str) -> re.Pattern:
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out))


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns, in order, each with whether it re-includes (``!``)."""

    patterns: tuple[tuple[re.Pattern, bool], ...]

    def excluded(self, path: str) -> bool:
        """Whether ``path`` (relative to the build context) is left out of it."""
        candidates = [str(PurePosixPath(path))]
        candidates += [str(parent) for parent in PurePosixPath(path).parents if str(parent) != "."]
        verdict = False
        for regex, include in self.patterns:
            if any(regex.fullmatch(candidate) for candidate in candidates):
                verdict = not include
        return verdict


def parse(text: str) -> IgnoreFile:
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        include = line.startswith("!")
        pattern = str(PurePosixPath(line.lstrip("!").strip().lstrip("/")))
        patterns.append((_regex(pattern), include))
    return IgnoreFile(tuple(patterns))
