"""The deployment files of deploy/, read once, and every command line they run.

Each reader lives in its own module (containerfile, unit_file, commands);
this one knows where the files are and how they fit together: compose runs
the image with its ``entrypoint``/``command`` overrides and the settings of
``compose.env.example``; the StatefulSet runs it with its ``args`` and the
variables of the ConfigMap; systemd runs the installed command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.deploy import containerfile, unit_file
from tests.deploy.commands import (
    ShellCommand,
    compose_interpolate,
    container_argv,
    kubernetes_expand,
    rivulet_commands,
)

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CONTAINERFILE = DEPLOY / "container" / "Containerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE = DEPLOY / "compose.yaml"
COMPOSE_ENV = DEPLOY / "compose.env.example"
KUBERNETES = DEPLOY / "kubernetes"
SYSTEMD_UNIT = DEPLOY / "systemd" / "rivulet.service"
SYSTEMD_ENV = DEPLOY / "systemd" / "rivulet.env.example"
DOCS = REPO / "docs" / "deploy.md"

_ASSIGNMENT = re.compile(r"^\s*(#?)\s*([A-Z_][A-Z0-9_]*)=(.*)$")


@dataclass(frozen=True)
class EnvFile:
    """An example environment file: the variables set, and those shown commented out with
    their defaults."""

    set: dict[str, str]
    commented: dict[str, str]


def env_file(path: Path) -> EnvFile:
    """Read ``NAME=value`` lines, and ``#NAME=value`` lines (a setting left at its default)."""
    given: dict[str, str] = {}
    commented: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _ASSIGNMENT.match(line)
        if match:
            (commented if match[1] else given)[match[2]] = match[3]
    return EnvFile(given, commented)


@cache
def stages() -> tuple[containerfile.Stage, ...]:
    return tuple(containerfile.stages(containerfile.parse(CONTAINERFILE.read_text())))


def image() -> containerfile.Image:
    """What a container of the image runs (its last stage)."""
    return containerfile.image(stages()[-1])


def compose_raw() -> dict[str, Any]:
    """compose.yaml as written (merge keys resolved, variables not substituted)."""
    return yaml.safe_load(COMPOSE.read_text())


def compose() -> dict[str, Any]:
    """compose.yaml with the variables of compose.env.example substituted, as compose reads it."""
    return compose_interpolate(compose_raw(), env_file(COMPOSE_ENV).set)


def rivulet_services(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The compose services that run the Rivulet image (built from the Containerfile)."""
    return {name: service for name, service in document["services"].items()
            if service.get("build", {}).get("dockerfile") == "deploy/container/Containerfile"}


@cache
def _kubernetes_documents() -> tuple[dict[str, Any], ...]:
    return tuple(document for path in sorted(KUBERNETES.glob("*.yaml"))
                 for document in yaml.safe_load_all(path.read_text()) if document)


def kubernetes(kind: str) -> list[dict[str, Any]]:
    """The Kubernetes objects of that kind in deploy/kubernetes/."""
    return [document for document in _kubernetes_documents() if document["kind"] == kind]


def kubernetes_all() -> list[dict[str, Any]]:
    return list(_kubernetes_documents())


def kubernetes_named(kind: str, name: str) -> dict[str, Any]:
    """The one Kubernetes object of that kind and name in deploy/kubernetes/."""
    (found,) = [document for document in kubernetes(kind) if document["metadata"]["name"] == name]
    return found


def runs_the_image(container: dict[str, Any]) -> bool:
    """Whether a container runs the Rivulet image (the catalog's runs PostgreSQL's)."""
    return container["image"].split(":")[0] == "rivulet"


def container_environment(container: dict[str, Any]) -> dict[str, str]:
    """The variables a StatefulSet container gets from ConfigMaps (envFrom) and literal ``env``
    values; variables from Secrets are named with a placeholder value."""
    maps = {m["metadata"]["name"]: m.get("data", {}) for m in kubernetes("ConfigMap")}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        name = source["configMapRef"]["name"]
        assert name in maps, f"envFrom names ConfigMap {name!r}, which deploy/kubernetes does not define"
        env.update(maps[name])
    for variable in container.get("env", []):
        env[variable["name"]] = variable.get("value", f"<from {variable.get('valueFrom')}>")
    return env


def systemd_unit() -> unit_file.Unit:
    return unit_file.parse(SYSTEMD_UNIT.read_text())


@dataclass(frozen=True)
class Command:
    """A ``rivulet`` command line some manifest runs, and where it is written."""

    where: str
    line: ShellCommand
    env: dict[str, str]


def commands() -> list[Command]:
    """Every ``rivulet`` command line of every manifest, as the runtime would build it."""
    built = image()
    found = [Command("Containerfile ENTRYPOINT + CMD", line, built.env)
             for line in rivulet_commands(container_argv(built.entrypoint, built.cmd), built.env)]
    for name, service in rivulet_services(compose()).items():
        argv = container_argv(built.entrypoint, built.cmd, service.get("entrypoint"), service.get("command"))
        env = {**built.env, **service.get("environment", {})}
        found += [Command(f"compose service {name}", line, env) for line in rivulet_commands(argv, env)]
    for workload in kubernetes("StatefulSet"):
        for container in filter(runs_the_image, workload["spec"]["template"]["spec"]["containers"]):
            env = {**built.env, **container_environment(container)}
            overrides = container.get("command"), container.get("args")
            argv = kubernetes_expand(container_argv(built.entrypoint, built.cmd, *overrides), env)
            where = f"StatefulSet {workload['metadata']['name']} container {container['name']}"
            found += [Command(where, line, env) for line in rivulet_commands(argv, env)]
    for value in systemd_unit().values("Service", "ExecStart"):
        found.append(Command("systemd ExecStart", ShellCommand(unit_file.command_line(value), None), {}))
    return found
