"""A reader for systemd unit files (deploy/systemd/rivulet.service).

configparser does not fit: a unit may repeat a key (each ``ReadWritePaths=``
adds, an empty ``ExecStart=`` resets) and values may be empty. This reader
keeps every assignment in order, per section, and knows systemd's line
syntax: ``#`` and ``;`` comments, a trailing ``\\`` continuing a line.
:func:`command_line` splits an ``Exec*=`` value into its argv.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

#: characters an Exec*= value may start with to change how systemd runs it
EXEC_PREFIXES = "-@:+!"


class UnitFileError(ValueError):
    """A line that is neither a section, an assignment, a comment nor blank."""


@dataclass(frozen=True)
class Unit:
    """The assignments of each section, in the order they were written."""

    sections: dict[str, list[tuple[str, str]]]

    def values(self, section: str, key: str) -> list[str]:
        """Every value given to ``key`` (an empty one resets the list, as systemd does)."""
        found: list[str] = []
        for name, value in self.sections.get(section, []):
            if name == key:
                found = [] if value == "" else [*found, value]
        return found

    def value(self, section: str, key: str) -> str | None:
        """The value that counts for a single-valued key: the last one."""
        given = [value for name, value in self.sections.get(section, []) if name == key]
        return given[-1] if given else None


def parse(text: str) -> Unit:
    """Read a unit file."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    pending = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line[:1] in ("#", ";") or (not line and not pending):
            continue  # comments, also inside a continued line
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            sections.setdefault(current, [])
            continue
        key, equals, value = line.partition("=")
        if not equals or current is None:
            raise UnitFileError(f"line {number}: {raw!r} is not an assignment inside a section")
        sections[current].append((key.strip(), value.strip()))
    return Unit(sections)


def command_line(value: str) -> list[str]:
    """The argv of an ``Exec*=`` value: its prefixes dropped, split with shell-like quoting
    (systemd's rules for the quoting this unit uses; it has no ``$`` references)."""
    return shlex.split(value.lstrip(EXEC_PREFIXES))
