"""The KubeRay manifests (deploy/kuberay) agree with the code, the image and each other.

No Kubernetes, KubeRay operator or Ray cluster runs here, so the files are
read as the operator and the kubelet would build their pods: the RayCluster
keeps its own container commands (``ray.io/overwrite-container-cmd``) and
receives the operator's variables (``$KUBERAY_GEN_RAY_START_CMD``, the
``ray start`` command it generates), the Job and the Pod run as written.
Every ``rivulet`` command line is then parsed by the real argparse parser,
and the numbers that must be one number (shards, worker replicas, the
load's ``--shards``), the shared volume's paths, the ports, probes, image,
user and secret keys are held to each other and to the Containerfile.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from functools import cache
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from endpoint.app import create_app
from endpoint.serve import TOKEN_VARIABLE
from engine.api import Store
from tests.deploy import manifests
from tests.deploy.commands import (
    ShellCommand,
    container_argv,
    kubernetes_expand,
    rivulet_arguments,
    rivulet_commands,
    shell_commands,
)

KUBERAY = manifests.DEPLOY / "kuberay"
README = KUBERAY / "README.md"
OPERATIONS = manifests.REPO / "docs" / "operations.md"
#: the annotation that makes KubeRay run the Ray containers' own command and args
OVERWRITE = "ray.io/overwrite-container-cmd"
#: what KubeRay's generated command of each kind of node looks like (KUBERAY_GEN_RAY_START_CMD)
GENERATED = {
    "head": "ray start --head --block --dashboard-agent-listen-port=52365 --dashboard-host=0.0.0.0 "
            "--metrics-export-port=8080 --num-cpus=2 --memory=4294967296",
    "worker": "ray start --address=rivulet-head-svc.default.svc.cluster.local:6379 --block "
              "--dashboard-agent-listen-port=52365 --metrics-export-port=8080 --num-cpus=2",
}


# ------------------------------------------------------------------ reading
@cache
def _documents() -> tuple[dict[str, Any], ...]:
    return tuple(document for path in sorted(KUBERAY.glob("*.yaml"))
                 for document in yaml.safe_load_all(path.read_text()) if document)


def _objects(kind: str) -> list[dict[str, Any]]:
    return [document for document in _documents() if document["kind"] == kind]


def _cluster() -> dict[str, Any]:
    (cluster,) = _objects("RayCluster")
    return cluster


def _head() -> dict[str, Any]:
    return _cluster()["spec"]["headGroupSpec"]


def _worker_group() -> dict[str, Any]:
    (group,) = _cluster()["spec"]["workerGroupSpecs"]
    return group


def _job() -> dict[str, Any]:
    (job,) = _objects("Job")
    return job


def _pods() -> dict[str, dict[str, Any]]:
    """Every pod spec of the manifests, by where it is written."""
    found = {"head": _head()["template"]["spec"], "worker": _worker_group()["template"]["spec"],
             "load": _job()["spec"]["template"]["spec"]}
    found |= {f"Pod {pod['metadata']['name']}": pod["spec"] for pod in _objects("Pod")}
    return found


def _ray_container(kind: str) -> dict[str, Any]:
    """KubeRay takes the first container of a Ray pod for Ray's own."""
    return _pods()[kind]["containers"][0]


def _environment(container: dict[str, Any], operator: dict[str, str]) -> dict[str, str]:
    """The container's variables: the image's, its own (Secrets named by a placeholder),
    and those the operator adds."""
    env = {**manifests.image().env, **operator}
    for variable in container.get("env", []):
        env[variable["name"]] = variable.get("value", f"<from {variable.get('valueFrom')}>")
    return env


def _operator_variables(kind: str) -> dict[str, str]:
    if kind not in GENERATED:
        return {}
    address = "127.0.0.1:6379" if kind == "head" else "rivulet-head-svc.default.svc.cluster.local:6379"
    return {"KUBERAY_GEN_RAY_START_CMD": GENERATED[kind], "RAY_ADDRESS": address, "RAY_PORT": "6379"}


def _argv(container: dict[str, Any], env: dict[str, str]) -> list[str]:
    built = manifests.image()
    return kubernetes_expand(container_argv(built.entrypoint, built.cmd, container.get("command"),
                                            container.get("args")), env)


def _script_commands(kind: str, container: dict[str, Any]) -> list[ShellCommand]:
    """Every simple command the container runs (its ``sh -c`` script's, or its argv)."""
    env = _environment(container, _operator_variables(kind))
    argv = _argv(container, env)
    if argv[:2] in (["sh", "-c"], ["/bin/sh", "-c"]):
        return shell_commands(argv[2], env)
    return [ShellCommand(argv, None)]


def _commands() -> list[manifests.Command]:
    found = []
    for kind, pod in _pods().items():
        for container in pod["containers"]:
            env = _environment(container, _operator_variables(kind))
            where = f"{kind} container {container['name']}"
            lines = rivulet_commands(_argv(container, env), env)
            found += [manifests.Command(where, line, env) for line in lines]
    return found


def _command(where: str) -> manifests.Command:
    (command,) = [c for c in _commands() if c.where == where]
    return command


def _serve():
    return rivulet_arguments(_command("head container ray-head").line.argv)


def _load():
    return rivulet_arguments(_command("load container load").line.argv)


def _uid_gid(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and gid.isdigit(), f"USER {user}: Kubernetes can only check a numeric user"
    return int(uid), int(gid)


def _port_number(container: dict[str, Any], port: int | str) -> int:
    """A probe's or a Service's port, a name resolved against the container's ports."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
    return number


def _shared_claims() -> set[str]:
    return {claim["metadata"]["name"] for claim in _objects("PersistentVolumeClaim")}


def _shared_mount(kind: str, container: dict[str, Any]) -> str:
    """Where the container mounts the shared claim."""
    claims = {volume["name"] for volume in _pods()[kind].get("volumes", [])
              if volume.get("persistentVolumeClaim", {}).get("claimName") in _shared_claims()}
    (mount,) = [m["mountPath"] for m in container["volumeMounts"] if m["name"] in claims]
    return mount


def _under(path: str, directory: str) -> bool:
    return PurePosixPath(path).is_relative_to(PurePosixPath(directory))


# ------------------------------------------------------------- command lines
EXPECTED_COMMANDS = {"head container ray-head": "serve", "load container load": "load"}


def test_the_manifests_run_rivulet_where_expected():
    assert {c.where: c.line.argv[1] for c in _commands()} == EXPECTED_COMMANDS


@pytest.mark.parametrize("where", sorted(EXPECTED_COMMANDS))
def test_every_rivulet_command_line_is_accepted_by_the_cli(where):
    args = rivulet_arguments(_command(where).line.argv)
    if args.command == "serve":
        assert args.cluster == "auto", "the coordinator joins the Ray cluster its pod is the head of"
        assert args.host == "0.0.0.0", "a server in a container must listen beyond loopback"
        assert args.log_format == "json", "the deployments log JSON lines for their log collectors"


def test_the_parser_would_catch_a_wrong_cluster_option():
    argv = _command("head container ray-head").line.argv
    with pytest.raises(AssertionError, match="invalid choice"):
        rivulet_arguments([*argv, "--transport", "infiniband"])


def test_kuberay_keeps_the_commands_written_here():
    """Without the annotation KubeRay replaces the Ray containers' commands with its own
    `bash -lc "ray start ..."` (and a login shell loses /opt/rivulet/bin from PATH)."""
    assert _cluster()["metadata"]["annotations"].get(OVERWRITE) == "true"


def test_the_head_starts_ray_first_then_becomes_the_endpoint():
    container = _ray_container("head")
    commands = [c.argv for c in _script_commands("head", container)]
    ray_start = shlex.split(GENERATED["head"])
    # (the reader keeps a redirection's words in the command: compare the command's start)
    starts = [i for i, argv in enumerate(commands) if argv[:len(ray_start)] == ray_start]
    assert starts, "the head does not run KubeRay's ray start command"
    serve = _command("head container ray-head").line.argv
    assert starts[0] < commands.index(serve)
    assert re.search(r"\bexec rivulet serve\b", container["args"][0]), \
        "the endpoint must replace the shell, to get the pod's SIGTERM"


def test_every_worker_runs_ray_start():
    commands = [c.argv for c in _script_commands("worker", _ray_container("worker"))]
    assert commands[-1] == shlex.split(GENERATED["worker"])


# ----------------------------------------------------------------- the numbers
def test_shards_workers_and_the_load_are_one_number():
    group = _worker_group()
    shards = _serve().shards
    assert shards is not None and shards > 0
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == shards
    assert _load().shards == shards, "the store must be loaded in as many shards as the cluster has"
    assert _cluster()["spec"].get("enableInTreeAutoscaling") is False


def test_kuberay_values_have_the_types_the_api_takes():
    """rayStartParams are strings (map[string]string), and so are environment values."""
    for group in (_head(), _worker_group()):
        for key, value in group["rayStartParams"].items():
            assert isinstance(value, str), f"rayStartParams {key}: {value!r} is not a string"
    for kind, pod in _pods().items():
        for container in pod["containers"]:
            for variable in container.get("env", []):
                assert isinstance(variable.get("value", ""), str), (kind, variable)


# ---------------------------------------------------------------------- paths
def test_every_pod_mounts_the_shared_volume_at_the_image_volume():
    (volume,) = manifests.image().volumes
    (claim,) = _objects("PersistentVolumeClaim")
    assert "ReadWriteMany" in claim["spec"]["accessModes"], "shards may run on any node: the volume is shared"
    for kind, pod in _pods().items():
        for container in pod["containers"]:
            assert _shared_mount(kind, container) == volume, (kind, container["name"])


def test_the_commands_read_and_write_on_the_shared_volume():
    serve, load = _serve(), _load()
    head = _shared_mount("head", _ray_container("head"))
    assert _under(serve.data_dir, head) and _under(serve.store, head)
    assert not _under(serve.data_dir, serve.store) and not _under(serve.store, serve.data_dir)
    assert str(load.out) == serve.store, "the coordinator opens the store the job writes"
    load_container = _pods()["load"]["containers"][0]
    assert _under(str(load.out), _shared_mount("load", load_container))
    cwd = _command("load container load").line.cwd
    assert cwd is not None and _under(cwd, _shared_mount("load", load_container)), \
        "the load reads its files from the shared volume"
    assert all(not PurePosixPath(str(f)).is_absolute() for f in load.files)
    (importer,) = _objects("Pod")
    assert [cwd] == [w for c in _script_commands(f"Pod {importer['metadata']['name']}",
                                                 importer["spec"]["containers"][0])
                     for w in c.argv if w.startswith("/")], "the import pod makes the folder the load reads"


def test_every_mount_names_a_volume_of_its_pod():
    for kind, pod in _pods().items():
        declared = {volume["name"] for volume in pod.get("volumes", [])}
        for container in pod["containers"]:
            assert {m["name"] for m in container["volumeMounts"]} <= declared, (kind, container["name"])
        for volume in pod.get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in _shared_claims(), kind
            if "configMap" in volume:
                assert volume["configMap"]["name"] in {m["metadata"]["name"] for m in _objects("ConfigMap")}


def test_login_shells_of_the_workers_find_the_image_commands(tmp_path):
    """KubeRay's init container runs `ray health-check` under `bash -lc`; Debian's /etc/profile
    resets PATH, then sources /etc/profile.d/*.sh, where the workers get the image's PATH back."""
    first = manifests.image().env["PATH"].split(":")[0]
    container = _ray_container("worker")
    volumes = {v["name"]: v for v in _pods()["worker"]["volumes"]}
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"].startswith("/etc/profile.d/")]
    assert mount["mountPath"].endswith(".sh")
    maps = {m["metadata"]["name"]: m["data"] for m in _objects("ConfigMap")}
    snippet = maps[volumes[mount["name"]]["configMap"]["name"]][mount["subPath"]]
    (tmp_path / "profile.sh").write_text(snippet)
    done = subprocess.run(["sh", "-c", f". {tmp_path / 'profile.sh'}; echo \"$PATH\""], capture_output=True,
                          text=True, env={"PATH": "/usr/local/bin:/usr/bin:/bin"}, timeout=30, check=True)
    assert done.stdout.strip().split(":")[0] == first


# --------------------------------------------------------- ports and probes
def _kuberay_head_labels() -> dict[str, str]:
    """The labels KubeRay gives the head pod, over the template's own."""
    return {**_head()["template"]["metadata"].get("labels", {}),
            "ray.io/cluster": _cluster()["metadata"]["name"], "ray.io/node-type": "head",
            "ray.io/group": "headgroup", "ray.io/is-ray-node": "yes"}


def test_the_service_reaches_the_endpoint_on_the_head():
    (port,) = manifests.image().exposed
    container = _ray_container("head")
    assert _serve().port == port
    assert _port_number(container, "http") == port
    (service,) = _objects("Service")
    assert service["spec"]["selector"].items() <= _kuberay_head_labels().items()
    assert [_port_number(container, p["targetPort"]) for p in service["spec"]["ports"]] == [port]


def test_the_head_probes_call_routes_of_the_endpoint():
    paths = {getattr(route, "path", None) for route in create_app(Store()).routes}
    container = _ray_container("head")
    expected = {"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"}
    for probe, path in expected.items():
        assert container[probe]["httpGet"]["path"] == path and path in paths, probe
        assert _port_number(container, container[probe]["httpGet"]["port"]) == _serve().port, probe


def test_the_worker_probes_check_the_raylet_port():
    """Probes given keep KubeRay from adding its own, which call wget (not in the image)."""
    container = _ray_container("worker")
    raylet = int(_worker_group()["rayStartParams"]["node-manager-port"])
    for probe in ("livenessProbe", "readinessProbe"):
        assert _port_number(container, container[probe]["tcpSocket"]["port"]) == raylet, probe


# ------------------------------------------------------ image, user, secrets
def _all_containers() -> list[tuple[str, dict[str, Any]]]:
    return [(kind, c) for kind, pod in _pods().items() for c in pod["containers"]]


def test_every_container_runs_the_project_image():
    version = tomllib.loads((manifests.REPO / "pyproject.toml").read_text())["project"]["version"]
    image = f"rivulet:{version}"
    assert f"-t {image} " in manifests.CONTAINERFILE.read_text(), "the Containerfile builds another tag"
    statefulset = manifests.kubernetes_named("StatefulSet", "rivulet")
    assert statefulset["spec"]["template"]["spec"]["containers"][0]["image"] == image
    for kind, container in _all_containers():
        assert container["image"] == image, (kind, container["name"])


def test_every_pod_runs_as_the_image_user_and_not_as_root():
    uid, gid = _uid_gid(manifests.image().user)
    assert uid != 0
    for kind, pod in _pods().items():
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True, kind
        assert (context["runAsUser"], context["runAsGroup"], context["fsGroup"]) == (uid, gid, gid), kind
        for container in pod["containers"]:
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, (kind, container["name"])
            assert security["capabilities"]["drop"] == ["ALL"], (kind, container["name"])
            assert not security["capabilities"].get("add"), (kind, container["name"])
            assert "runAsUser" not in security or security["runAsUser"] == uid


def test_every_container_has_resource_requests_and_limits():
    for kind, container in _all_containers():
        for bound in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(container["resources"][bound]), (kind, container["name"], bound)


def _secrets(container: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {v["name"]: v["valueFrom"]["secretKeyRef"] for v in container.get("env", []) if "valueFrom" in v}


def test_every_ray_process_shows_the_same_ray_token():
    """Ray's token authentication: a worker or a driver with another token (or none) is refused,
    and a mode left unset is guessed differently by `ray start` and `ray health-check`."""
    containers = [_ray_container("head"), _ray_container("worker")]
    modes = [{v["name"]: v.get("value") for v in c["env"]}.get("RAY_AUTH_MODE") for c in containers]
    assert modes == ["token", "token"]
    references = [_secrets(c).get("RAY_AUTH_TOKEN") for c in containers]
    assert references[0] is not None and references[0] == references[1]


def test_the_tokens_come_from_a_secret_the_readme_creates():
    secrets = _secrets(_ray_container("head"))
    assert set(secrets) == {TOKEN_VARIABLE, "RAY_AUTH_TOKEN"}
    assert set(_secrets(_ray_container("worker"))) == {"RAY_AUTH_TOKEN"}
    readme = README.read_text()
    for reference in secrets.values():
        shown = rf"kubectl create secret generic {reference['name']}\b(?:[^\n]*\\\n)*[^\n]*"
        command = re.search(shown, readme)
        assert command, f"README.md does not show how to create secret {reference['name']}"
        assert f"--from-literal={reference['key']}=" in command[0], reference


# ----------------------------------------------------------------------- docs
def test_the_readme_applies_every_manifest():
    readme = README.read_text()
    for path in sorted(KUBERAY.glob("*.yaml")):
        assert f"deploy/kuberay/{path.name}" in readme, path.name


def test_the_docs_link_the_kuberay_manifests_and_list_the_cluster_options():
    assert "(../deploy/kuberay/)" in manifests.DOCS.read_text() or \
        "(../deploy/kuberay/README.md)" in manifests.DOCS.read_text()
    operations = OPERATIONS.read_text()
    assert "## Running a cluster" in operations
    rows = re.findall(r"^\| `(--[\w-]+)", operations, flags=re.MULTILINE)
    # the options the rows name are the real command line's
    rivulet_arguments(["rivulet", "serve", "--cluster", "auto", "--shards", "3", "--transport", "tcp"])
    for option in ("--cluster", "--shards", "--transport"):
        assert option in rows, f"docs/operations.md's options table has no row for {option}"
