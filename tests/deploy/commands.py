"""The command lines a deployment runs, as the container engine, compose,
Kubernetes or a shell would build them, and their check by the real CLI.

- :func:`compose_interpolate`: compose's ``${VAR}``, ``${VAR:-default}``,
  ``${VAR:?message}`` and ``$$`` substitution over a parsed compose file;
- :func:`kubernetes_expand`: Kubernetes' ``$(VAR)`` references in ``command``/``args``;
- :func:`container_argv`: what a container runs, from the image's
  ENTRYPOINT/CMD and the overrides (compose ``entrypoint``/``command``,
  Kubernetes ``command``/``args``: the same rule);
- :func:`shell_commands`: the simple commands of an ``sh -c`` script (the
  ``if``/``&&``/``;`` forms the manifests use), with the ``cd`` before each;
- :func:`rivulet_arguments`: an argv parsed by ``endpoint.cli.build_parser()``,
  so that an unknown option or a bad value fails the test that asked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from endpoint.cli import build_parser

_COMPOSE_VARIABLE = re.compile(r"\$(?:(\$)|\{([^}]*)\}|([A-Za-z_]\w*))")
_SHELL_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
#: ``$$`` (a ``$`` written as such) or ``$(NAME)`` (a reference), as Kubernetes reads them
_KUBERNETES_VARIABLE = re.compile(r"\$(\$|\(([^)]*)\))")
#: the shell keywords around simple commands (before them, or alone), which are not commands
_SHELL_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "exec", "!"}
_SHELL_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")"}


class UnsetVariable(KeyError):
    """A manifest uses a variable that has no value and no default."""


def _compose_value(expression: str, env: Mapping[str, str]) -> str:
    for operator in (":-", ":?", "-", "?"):
        name, found, rest = expression.partition(operator)
        if found and re.fullmatch(r"[A-Za-z_]\w*", name):
            value = env.get(name)
            unset = value is None or (operator.startswith(":") and value == "")
            if not unset:
                return value
            if operator.endswith("-"):
                return rest
            raise UnsetVariable(f"{name}: {rest}")
    if expression not in env:
        raise UnsetVariable(expression)
    return env[expression]


def compose_interpolate(node: Any, env: Mapping[str, str]) -> Any:
    """The compose file with every variable of its values replaced from ``env``."""
    if isinstance(node, dict):
        return {key: compose_interpolate(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [compose_interpolate(item, env) for item in node]
    if isinstance(node, str):
        def substitute(match: re.Match) -> str:
            if match[1]:
                return "$"
            return _compose_value(match[2] if match[2] is not None else match[3], env)

        return _COMPOSE_VARIABLE.sub(substitute, node)
    return node


def kubernetes_expand(words: list[str], env: Mapping[str, str]) -> list[str]:
    """``$(VAR)`` replaced by the container's variable; ``$$`` is a ``$`` (so ``$$(VAR)`` is a
    literal ``$(VAR)``), and an undefined reference stays as written (Kubernetes' rules)."""
    def substitute(match: re.Match) -> str:
        if match[1] == "$":
            return "$"
        return env.get(match[2], match[0])

    return [_KUBERNETES_VARIABLE.sub(substitute, word) for word in words]


def _words(value: list[str] | str | None) -> list[str] | None:
    return shlex.split(value) if isinstance(value, str) else value


def container_argv(entrypoint: list[str], cmd: list[str], entrypoint_override: list[str] | str | None = None,
                   command_override: list[str] | str | None = None) -> list[str]:
    """The argv of a container: a new entrypoint drops the image's CMD; a command replaces CMD."""
    entry = _words(entrypoint_override)
    command = _words(command_override)
    if entry is not None:
        return [*entry, *(command or [])]
    return [*entrypoint, *(cmd if command is None else command)]


@dataclass(frozen=True)
class ShellCommand:
    """One simple command of a script, and the directory the script changed to before it."""

    argv: list[str]
    cwd: str | None


def shell_commands(script: str, env: Mapping[str, str]) -> list[ShellCommand]:
    """The simple commands of ``script``, ``$VAR`` expanded from ``env`` first (so an unquoted
    value splits into words, as the shell does; globbing is left to the caller)."""
    def substitute(match: re.Match) -> str:
        name = match[1] or match[2]
        if name not in env:
            raise UnsetVariable(name)
        return env[name]

    lexer = shlex.shlex(_SHELL_VARIABLE.sub(substitute, script), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in _SHELL_SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    commands: list[ShellCommand] = []
    cwd = None
    for words in segments:
        while words and words[0] in _SHELL_KEYWORDS:
            words = words[1:]
        if words[:1] == ["cd"] and len(words) == 2:
            cwd = words[1]
        elif words:
            commands.append(ShellCommand(words, cwd))
    return commands


def rivulet_commands(argv: list[str], env: Mapping[str, str]) -> list[ShellCommand]:
    """The ``rivulet`` command lines an argv runs: itself, or those of its ``sh -c`` script."""
    if argv[:2] in (["sh", "-c"], ["/bin/sh", "-c"]):
        return [c for c in shell_commands(argv[2], env) if PurePosixPath(c.argv[0]).name == "rivulet"]
    if PurePosixPath(argv[0]).name == "rivulet":
        return [ShellCommand(argv, None)]
    return []


def rivulet_arguments(argv: list[str]) -> argparse.Namespace:
    """``argv`` (``rivulet`` and its arguments) parsed by the real command line; an
    AssertionError with argparse's message when the CLI would refuse it."""
    assert PurePosixPath(argv[0]).name == "rivulet", f"not a rivulet command: {argv}"
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        raise AssertionError(f"rivulet refuses {shlex.join(argv)}:\n{errors.getvalue()}") from exc
