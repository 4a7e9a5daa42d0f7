"""The deployment files agree with the code and with each other.

No container engine, cluster or systemd runs here, so each file is read
(tests/deploy/manifests.py) and held to what the server really does: every
``rivulet`` command line of every manifest is parsed by the real argparse
parser (an unknown option fails), the probes are routes the app serves, and
ports, paths, the user id, variable names and secret keys are the same
wherever they are written.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import PurePosixPath
from urllib.parse import urlsplit

import pytest
from sqlalchemy.engine import make_url

from endpoint.app import create_app
from endpoint.serve import CATALOG_VARIABLE, TOKEN_VARIABLE
from engine.api import Store
from tests.deploy import ignore_file, manifests
from tests.deploy.commands import rivulet_arguments
from tests.packaging.test_wheel import SOURCES as WHEEL_SOURCES

COMMANDS = manifests.commands()
#: where the manifests run rivulet; a command the readers stopped finding fails here
EXPECTED_COMMANDS = {
    "Containerfile ENTRYPOINT + CMD": "serve",
    "compose service endpoint": "serve",
    "compose service load": "load",
    "compose service reader": "serve",
    "StatefulSet rivulet container rivulet": "serve",
    "systemd ExecStart": "serve",
}
#: the commands that run the durable endpoint (the reader serves a loaded store instead)
DURABLE = [c for c in COMMANDS if c.where != "compose service reader" and c.line.argv[1] == "serve"]


def _arguments(where: str):
    return rivulet_arguments(next(c for c in COMMANDS if c.where == where).line.argv)


def _url_in(argv: list[str]) -> str:
    """The URL a health check command calls."""
    found = re.findall(r"https?://[^'\"\s]+", " ".join(argv))
    assert len(found) == 1, f"expected one URL in {argv}"
    return found[0]


def _uid_gid(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and gid.isdigit(), f"USER {user}: Kubernetes can only check a numeric user"
    return int(uid), int(gid)


def _container_port(mapping: str) -> int:
    return int(str(mapping).split(":")[-1].split("/")[0])


def _statefulset() -> dict:
    return manifests.kubernetes_named("StatefulSet", "rivulet")


def _container() -> dict:
    (container,) = _statefulset()["spec"]["template"]["spec"]["containers"]
    return container


def _named_port(port: int | str) -> int:
    """A probe's or a Service's port, a name resolved against the container's ports."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in _container()["ports"] if p.get("name") == port]
    return number


# ------------------------------------------------------------- command lines
def test_every_manifest_runs_rivulet_where_expected():
    assert {c.where: c.line.argv[1] for c in COMMANDS} == EXPECTED_COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.where)
def test_every_rivulet_command_line_is_accepted_by_the_cli(command):
    args = rivulet_arguments(command.line.argv)
    if args.command == "serve":
        assert args.host == "0.0.0.0", "a server in a container or behind a proxy must listen beyond loopback"
        assert args.log_format == "json", "the deployments log JSON lines for their log collectors"


def test_the_parser_would_catch_an_unknown_option():
    """The check above is only worth something if a wrong option fails it."""
    argv = [*COMMANDS[0].line.argv, "--no-such-option"]
    with pytest.raises(AssertionError, match="unrecognized arguments"):
        rivulet_arguments(argv)


def test_durable_servers_keep_their_data_in_the_image_volume():
    (volume,) = manifests.image().volumes
    for command in DURABLE:
        args = rivulet_arguments(command.line.argv)
        assert args.data_dir == volume, command.where
        assert args.store is None and not args.data and not args.demo, command.where


def test_the_settings_are_the_same_in_compose_and_kubernetes():
    """compose takes its defaults from compose.env.example's, Kubernetes from the ConfigMap."""
    compose, kubernetes = (_arguments("compose service endpoint"),
                           _arguments("StatefulSet rivulet container rivulet"))
    for option in ("timeout", "sync", "checkpoint_mb", "max_body"):
        assert getattr(compose, option) == getattr(kubernetes, option), option


# --------------------------------------------------------------------- ports
def test_every_place_names_the_same_port():
    built = manifests.image()
    (port,) = built.exposed
    for command in COMMANDS:
        if command.line.argv[1] == "serve":
            assert rivulet_arguments(command.line.argv).port == port, command.where
    assert urlsplit(_url_in(built.healthcheck)).port == port
    for name, service in manifests.rivulet_services(manifests.compose()).items():
        if "ports" in service:
            assert [_container_port(p) for p in service["ports"]] == [port], name
        if not service["healthcheck"].get("disable"):
            assert urlsplit(_url_in(service["healthcheck"]["test"][1:])).port == port, name
    container = _container()
    assert [p["containerPort"] for p in container["ports"]] == [port]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert _named_port(container[probe]["httpGet"]["port"]) == port, probe
    for name in ("rivulet", "rivulet-headless"):
        service = manifests.kubernetes_named("Service", name)
        assert [_named_port(p["targetPort"]) for p in service["spec"]["ports"]] == [port], name


# --------------------------------------------------------------------- probes
def test_probes_and_health_checks_call_routes_the_app_serves():
    paths = {getattr(route, "path", None) for route in create_app(Store()).routes}
    assert {"/healthz", "/readyz"} <= paths, "the app has no /healthz or /readyz route"
    container = _container()
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert urlsplit(_url_in(manifests.image().healthcheck)).path == "/healthz"
    for name, service in manifests.rivulet_services(manifests.compose()).items():
        if not service["healthcheck"].get("disable"):
            assert service["healthcheck"]["test"][0] == "CMD", name
            assert service["healthcheck"]["test"][1:] == manifests.image().healthcheck, name


# ---------------------------------------------------------------------- paths
def test_the_data_directory_is_the_volume_everywhere():
    built = manifests.image()
    (volume,) = built.volumes
    compose = manifests.compose()
    endpoint = compose["services"]["endpoint"]
    mounts = dict(reversed(m.split(":")[:2]) for m in endpoint["volumes"])
    assert mounts[volume] in compose["volumes"], "the endpoint's data is on a named volume"
    container = _container()
    claims = {t["metadata"]["name"] for t in _statefulset()["spec"]["volumeClaimTemplates"]}
    (claimed,) = [m for m in container["volumeMounts"] if m["name"] in claims]
    assert claimed["mountPath"] == volume
    unit = manifests.systemd_unit()
    (state,) = unit.values("Service", "StateDirectory")
    assert f"/var/lib/{state}" == volume
    assert volume in unit.value("Service", "ReadWritePaths").split()


def _install_directories() -> set[str]:
    """The folders the image makes with ``install -d -o UID -g GID``: owned by the server's user."""
    uid, gid = _uid_gid(manifests.image().user)
    made: set[str] = set()
    for run in manifests.stages()[-1].all("RUN"):
        for part in run.value.split("&&"):
            words = shlex.split(part)
            if words[:2] == ["install", "-d"]:
                assert words[words.index("-o") + 1] == str(uid) and words[words.index("-g") + 1] == str(gid)
                made |= {w for w in words[2:] if w.startswith("/")}
    return made


def test_every_named_volume_is_mounted_on_a_folder_the_image_gives_its_user():
    """A new named volume takes the owner of the image's folder: root's would be unwritable."""
    compose = manifests.compose()
    made = _install_directories()
    for name, service in manifests.rivulet_services(compose).items():
        for mount in service.get("volumes", []):
            source, target = mount.split(":")[:2]
            if source in compose["volumes"]:
                assert target in made, f"{name}: {target}"


def test_the_load_writes_where_the_reader_reads():
    compose = manifests.compose()
    load_line = next(c for c in COMMANDS if c.where == "compose service load").line
    load, reader = rivulet_arguments(load_line.argv), _arguments("compose service reader")
    assert str(load.out) == reader.store
    assert reader.read_only
    load_mounts = {m.split(":")[1]: m.split(":")[0] for m in compose["services"]["load"]["volumes"]}
    reader_mounts = {m.split(":")[1]: m.split(":")[0] for m in compose["services"]["reader"]["volumes"]}
    stores = str(PurePosixPath(reader.store).parent)
    assert load_mounts[stores] == reader_mounts[stores] and reader_mounts[stores] in compose["volumes"]
    assert load_line.cwd in load_mounts, "the load reads its files from the mounted import folder"
    assert all(not PurePosixPath(str(f)).is_absolute() for f in load.files)


# ------------------------------------------------------------------- the user
def test_the_server_runs_as_the_same_non_root_user_everywhere():
    built = manifests.image()
    uid, gid = _uid_gid(built.user)
    assert uid != 0
    (useradd,) = [part for run in manifests.stages()[-1].all("RUN") for part in run.value.split("&&")
                  if part.strip().startswith("useradd")]
    words = shlex.split(useradd)
    assert words[words.index("--uid") + 1] == str(uid) and words[words.index("--gid") + 1] == str(gid)
    pod = _statefulset()["spec"]["template"]["spec"]["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert (pod["runAsUser"], pod["runAsGroup"], pod["fsGroup"]) == (uid, gid, gid)
    assert _container()["securityContext"]["allowPrivilegeEscalation"] is False
    unit = manifests.systemd_unit()
    assert unit.value("Service", "User") not in (None, "root", "0")


# ------------------------------------------------------------ the image itself
def test_the_image_is_built_from_the_wheel_sources_in_a_build_stage():
    build, runtime = manifests.stages()
    assert build.name == "build" and build.base == runtime.base
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", runtime.base)
    copied = {PurePosixPath(source).as_posix().rstrip("/")
              for copy in build.all("COPY") for source in copy.value.split()[:-1]}
    assert copied == set(WHEEL_SOURCES)
    assert any("pip wheel" in run.value for run in build.all("RUN"))
    install = " ".join(run.value for run in runtime.all("RUN"))
    assert "openjdk-17-jre-headless" in install
    assert "--no-index" in install, "the runtime stage installs the built wheels, nothing downloaded"
    (mount,) = [run.options["mount"] for run in runtime.all("RUN") if "mount" in run.options]
    assert "from=build" in mount.split(",")


def test_dockerignore_lets_in_what_the_build_copies_and_nothing_else():
    rules = ignore_file.parse(manifests.DOCKERIGNORE.read_text())
    for source in WHEEL_SOURCES:
        assert not rules.excluded(source), source
    assert not rules.excluded("engine/rdf/terms.py")
    for left_out in (".venv/bin/python", ".git/HEAD", "tests/conftest.py", ".rivulet-data/wal/0.log",
                     "engine/__pycache__/api.cpython-311.pyc", "deploy/compose.yaml"):
        assert rules.excluded(left_out), left_out


# ------------------------------------------------------------------- compose
def _strings(node) -> list[str]:
    if isinstance(node, dict):
        return [text for value in node.values() for text in _strings(value)]
    if isinstance(node, list):
        return [text for item in node for text in _strings(item)]
    return [node] if isinstance(node, str) else []


def _compose_variables() -> dict[str, str | None]:
    """Each variable compose.yaml's values read, with its ``:-`` default (None: none)."""
    found: dict[str, str | None] = {}
    for text in _strings(manifests.compose_raw()):
        for match in re.finditer(r"(?<!\$)\$\{(\w+)(?::?([-?])([^}]*))?\}", text):
            found[match[1]] = match[3] if match[2] == "-" else found.get(match[1])
    return found


def test_compose_env_example_lists_every_variable_with_compose_defaults():
    example = manifests.env_file(manifests.COMPOSE_ENV)
    variables = _compose_variables()
    assert set(variables) == set(example.set) | set(example.commented)
    for name, default in variables.items():
        if default is None:
            assert name in example.set, f"{name} has no default: the example must set it"
        else:
            assert example.commented.get(name) == default, name


def test_compose_endpoint_waits_for_a_healthy_postgresql_catalog():
    compose = manifests.compose()
    catalog, endpoint = compose["services"]["catalog"], compose["services"]["endpoint"]
    assert catalog["image"].startswith("postgres:")
    assert "pg_isready" in catalog["healthcheck"]["test"]
    assert endpoint["depends_on"]["catalog"]["condition"] == "service_healthy"
    url = make_url(endpoint["environment"][CATALOG_VARIABLE])
    environment = catalog["environment"]
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.username, url.password, url.database) == (
        "catalog", environment["POSTGRES_USER"], environment["POSTGRES_PASSWORD"], environment["POSTGRES_DB"])
    assert endpoint["environment"][TOKEN_VARIABLE]


def test_compose_load_is_one_shot_and_the_reader_waits_for_it():
    services = manifests.compose()["services"]
    assert services["load"]["restart"] == "no" and services["load"]["healthcheck"]["disable"] is True
    assert services["reader"]["depends_on"]["load"]["condition"] == "service_completed_successfully"
    assert services["load"]["environment"]["SPARK_LOCAL_IP"] == "127.0.0.1"


# ----------------------------------------------------------------- Kubernetes
def test_kubernetes_objects_fit_together():
    workload = _statefulset()
    spec = workload["spec"]
    assert spec["replicas"] == 1, "writes, streams and queries live in one process, with one catalog"
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    service = manifests.kubernetes_named("Service", "rivulet")
    assert service["spec"]["selector"].items() <= labels.items()
    assert spec["serviceName"] != service["metadata"]["name"], "clients' Service is not the headless one"
    resources = _container()["resources"]
    for bound in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[bound]), bound
    mounted = {m["name"] for m in _container()["volumeMounts"]}
    declared = {v["name"] for v in spec["template"]["spec"].get("volumes", [])}
    declared |= {t["metadata"]["name"] for t in spec["volumeClaimTemplates"]}
    assert mounted <= declared
    for document in manifests.kubernetes_all():
        assert {"apiVersion", "kind", "metadata"} <= set(document), document


def test_kubernetes_arguments_take_every_setting_from_the_configmap():
    container = _container()
    (settings,) = manifests.kubernetes("ConfigMap")
    used = set(re.findall(r"\$\((\w+)\)", " ".join(container["args"])))
    assert used == set(settings["data"]), "a setting the ConfigMap holds is not used, or the reverse"


def test_kubernetes_secrets_feed_the_variables_the_server_reads_and_the_docs_create_them():
    secrets = {v["name"]: v["valueFrom"]["secretKeyRef"] for v in _container()["env"] if "valueFrom" in v}
    assert set(secrets) == {TOKEN_VARIABLE, CATALOG_VARIABLE}
    docs = manifests.DOCS.read_text()
    for reference in secrets.values():
        shown = rf"kubectl create secret generic {reference['name']}(?![\w-])(?:[^\n]*\\\n)*[^\n]*"
        command = re.search(shown, docs)
        assert command, f"docs/deploy.md does not show how to create secret {reference['name']}"
        assert f"--from-literal={reference['key']}=" in command[0], reference


# -------------------------------------------------------------------- systemd
def test_systemd_unit_is_hardened_and_reads_its_secrets_from_a_file():
    unit = manifests.systemd_unit()
    service = {key: unit.value("Service", key) for key in (
        "Restart", "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "EnvironmentFile")}
    assert service == {"Restart": "on-failure", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
                       "ProtectHome": "yes", "PrivateTmp": "yes",
                       "EnvironmentFile": "/etc/rivulet/rivulet.env"}
    assert unit.value("Service", "CapabilityBoundingSet") == ""
    assert unit.values("Install", "WantedBy") == ["multi-user.target"]
    example = manifests.env_file(manifests.SYSTEMD_ENV)
    assert set(example.set) == {TOKEN_VARIABLE} and set(example.commented) == {CATALOG_VARIABLE}
    assert "/etc/rivulet/rivulet.env" in manifests.DOCS.read_text()


def test_systemd_accepts_every_directive_of_the_unit(tmp_path):
    """systemd's own reader: an unknown or misspelt directive is reported, not silently ignored."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        reason = "systemd-analyze is not installed (Debian's systemd package): the unit is not verified"
        print(reason)
        pytest.skip(reason)
    unit = manifests.SYSTEMD_UNIT.read_text()
    (start,) = manifests.systemd_unit().values("Service", "ExecStart")
    program = shlex.split(start)[0]
    # the installed program is not on this machine: any executable stands in for it
    (tmp_path / "rivulet.service").write_text(unit.replace(program, sys.executable))
    done = subprocess.run([analyze, "verify", str(tmp_path / "rivulet.service")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr


def test_operations_doc_links_the_deployment_doc():
    assert "(deploy.md)" in (manifests.REPO / "docs" / "operations.md").read_text()
