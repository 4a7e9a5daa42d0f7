"""A reader for the Containerfile instructions deploy/container/Containerfile uses.

There is no container engine on the test machines, so the image is checked
by reading its definition: this module turns the file into instructions
(continuation lines joined, comments dropped, ``--flag=value`` options
split off, exec-form JSON arrays decoded) and the last stage into an
:class:`Image` that says what a container of it would run. It knows the
instructions the file uses and refuses any other, so a new instruction
cannot slip past the checks unread.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

KNOWN = {"ARG", "FROM", "WORKDIR", "COPY", "RUN", "ENV", "USER", "VOLUME", "EXPOSE", "HEALTHCHECK",
         "ENTRYPOINT", "CMD"}
_ARGUMENT = re.compile(r"\$\{(\w+)\}|\$(\w+)")


class ContainerfileError(ValueError):
    """The file holds something this reader does not know; the message names the line."""


@dataclass(frozen=True)
class Instruction:
    """One instruction: its keyword, its ``--name=value`` options, and the rest of it, as a
    list when it was written as a JSON array (exec form), else as the text (shell form)."""

    keyword: str
    options: dict[str, str]
    value: list[str] | str
    line: int


@dataclass
class Stage:
    """One ``FROM`` and the instructions after it."""

    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclass(frozen=True)
class Image:
    """What a container of the final stage runs, and with what."""

    entrypoint: list[str]
    cmd: list[str]
    user: str
    volumes: list[str]
    exposed: list[int]
    healthcheck: list[str]
    env: dict[str, str]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines with comments dropped and ``\\`` continuations joined, each with its first line number."""
    joined: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or not stripped:
            continue  # comments (and parser directives) and blank lines, also inside continuations
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined.append((start, " ".join(part for part in pending if part)))
        pending = []
    if pending:
        raise ContainerfileError(f"line {start}: the file ends inside a continued instruction")
    return joined


def _split_options(rest: str) -> tuple[dict[str, str], str]:
    options: dict[str, str] = {}
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        name, equals, value = word[2:].partition("=")
        if not equals:
            raise ContainerfileError(f"option {word!r} has no value")
        options[name] = value
        rest = rest.lstrip()
    return options, rest


def _value(rest: str) -> list[str] | str:
    if rest.startswith("["):
        try:
            decoded = json.loads(rest)
        except json.JSONDecodeError:
            return rest  # Docker too takes a malformed array as shell form
        if isinstance(decoded, list) and all(isinstance(item, str) for item in decoded):
            return decoded
    return rest


def parse(text: str) -> list[Instruction]:
    """The instructions of a Containerfile, in order."""
    instructions = []
    for line, logical in _logical_lines(text):
        keyword, _, rest = logical.partition(" ")
        keyword = keyword.upper()
        if keyword not in KNOWN:
            raise ContainerfileError(f"line {line}: {keyword} is not an instruction this reader knows")
        options, rest = _split_options(rest.strip())
        instructions.append(Instruction(keyword, options, _value(rest), line))
    return instructions


def stages(instructions: list[Instruction]) -> list[Stage]:
    """The build stages, with ``ARG`` defaults given before the first ``FROM`` substituted in ``FROM``."""
    arguments: dict[str, str] = {}
    found: list[Stage] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            words = _ARGUMENT.sub(lambda m: arguments.get(m[1] or m[2], ""), instruction.value).split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            if len(words) not in (1, 3) or (len(words) == 3 and name is None):
                raise ContainerfileError(f"line {instruction.line}: FROM {instruction.value!r}")
            found.append(Stage(words[0], name))
        elif not found:
            if instruction.keyword != "ARG":
                raise ContainerfileError(f"line {instruction.line}: {instruction.keyword} before FROM")
            name, _, default = instruction.value.partition("=")
            arguments[name.strip()] = default.strip()
        else:
            found[-1].instructions.append(instruction)
    return found


def _env(instruction: Instruction) -> dict[str, str]:
    words = shlex.split(instruction.value)
    if "=" not in words[0]:  # the old one-variable form: ENV NAME value
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words)


def _as_list(instruction: Instruction) -> list[str]:
    """An exec-form value as it is; a shell form as Docker runs it, through ``/bin/sh -c``."""
    if isinstance(instruction.value, list):
        return instruction.value
    return ["/bin/sh", "-c", instruction.value]


def _healthcheck(instruction: Instruction) -> list[str]:
    value = instruction.value
    if isinstance(value, list) or not value.upper().startswith("CMD "):
        raise ContainerfileError(f"line {instruction.line}: HEALTHCHECK without CMD")
    return _as_list(Instruction("CMD", {}, _value(value[4:].strip()), instruction.line))


def image(stage: Stage) -> Image:
    """The image the stage makes (the last of each setting counts, as in Docker)."""
    env: dict[str, str] = {}
    result = {"entrypoint": [], "cmd": [], "user": "root", "healthcheck": []}
    volumes: list[str] = []
    exposed: list[int] = []
    for instruction in stage.instructions:
        match instruction.keyword:
            case "ENV":
                env.update(_env(instruction))
            case "ENTRYPOINT":
                result["entrypoint"] = _as_list(instruction)
                result["cmd"] = []  # a new ENTRYPOINT drops the CMD of before
            case "CMD":
                result["cmd"] = _as_list(instruction)
            case "USER":
                result["user"] = instruction.value
            case "VOLUME":
                value = instruction.value
                volumes.extend(value if isinstance(value, list) else value.split())
            case "EXPOSE":
                exposed.extend(int(port.split("/")[0]) for port in instruction.value.split())
            case "HEALTHCHECK":
                result["healthcheck"] = _healthcheck(instruction)
    return Image(volumes=volumes, exposed=exposed, env=env, **result)
