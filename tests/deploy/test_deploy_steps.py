"""What docs/deploy.md tells an operator to run, and the Kubernetes objects
that make the server reachable: the catalog shipped beside it, the headless
Service of each StatefulSet, the Ingress example.

The ``install`` steps of the docs run for real, with ``/etc`` moved into a
temporary folder; the init container's wait for the catalog runs under this
machine's ``sh`` against a real PostgreSQL server (tests/postgres_server.py)
and against a port where none listens. The rest is read from the files and
held to the server's settings and to the other manifests.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time

import pytest
import yaml
from sqlalchemy.engine import make_url

from endpoint.serve import CATALOG_VARIABLE
from endpoint.settings import Settings
from tests.deploy import manifests
from tests.deploy.commands import kubernetes_expand
from tests.endpoint.rivulet_process import free_port
from tests.postgres_server import running_postgres, why_no_postgres

INGRESS = manifests.KUBERNETES / "ingress" / "ingress.yaml"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def _shell_blocks() -> list[str]:
    return FENCE.findall(manifests.DOCS.read_text())


def _catalog_url_shown() -> str:
    """The catalog-url the docs put in the Secret, with the password variable filled in."""
    (url,) = re.findall(r'--from-literal=catalog-url="([^"]+)"', manifests.DOCS.read_text())
    return url.replace("$PASSWORD", "secret")


# ------------------------------------------------------------ docs' steps
def test_every_install_step_of_the_docs_succeeds_in_a_fresh_root(tmp_path):
    """A file installed under /etc needs its folder made first (compose's /etc/rivulet was not)."""
    ran = 0
    for number, block in enumerate(_shell_blocks()):
        root = tmp_path / f"root-{number}"  # each block on a machine of its own
        (root / "etc" / "systemd" / "system").mkdir(parents=True)  # there on every systemd machine
        for line in block.splitlines():
            if not line.startswith("install "):
                continue
            words = shlex.split(line, comments=True)
            moved = [str(root) + word if word.startswith("/etc/") or word == "/etc" else word
                     for word in words]
            done = subprocess.run(moved, cwd=manifests.REPO, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, f"{line}: {done.stderr}"
            ran += 1
    assert ran >= 4
    (env_file,) = tmp_path.glob("root-*/etc/rivulet/compose.env")
    assert env_file.stat().st_mode & 0o777 == 0o600


# ------------------------------------------------------- headless Services
def test_every_statefulset_is_governed_by_a_headless_service_of_its_pods():
    for workload in manifests.kubernetes("StatefulSet"):
        spec = workload["spec"]
        service = manifests.kubernetes_named("Service", spec["serviceName"])
        assert service["spec"].get("clusterIP") == "None", f"{service['metadata']['name']} is not headless"
        labels = spec["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items()


def test_no_service_selects_the_pods_of_another_workload():
    pods = {w["metadata"]["name"]: w["spec"]["template"]["metadata"]["labels"]
            for w in manifests.kubernetes("StatefulSet")}
    for service in manifests.kubernetes("Service"):
        selector = service["spec"]["selector"].items()
        selected = [name for name, labels in pods.items() if selector <= labels.items()]
        assert len(selected) == 1, (service["metadata"]["name"], selected)


# ------------------------------------------------------------- the catalog
def test_the_shipped_catalog_is_the_one_the_docs_point_the_server_at():
    url = make_url(_catalog_url_shown())
    assert url.drivername == "postgresql+psycopg"
    service = manifests.kubernetes_named("Service", url.host)
    workload = manifests.kubernetes_named("StatefulSet", url.host)
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("postgres:")
    assert [p["port"] for p in service["spec"]["ports"]] == [url.port]
    (port,) = container["ports"]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"] and port["containerPort"] == url.port
    env = {v["name"]: v for v in container["env"]}
    assert (env["POSTGRES_USER"]["value"], env["POSTGRES_DB"]["value"]) == (url.username, url.database)
    password = env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    shown = rf"kubectl create secret generic {password['name']}(?![\w-]) --from-literal={password['key']}="
    assert re.search(shown, manifests.DOCS.read_text()), "the docs do not create the catalog's password"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    claims = {t["metadata"]["name"] for t in workload["spec"]["volumeClaimTemplates"]}
    (claim,) = claims
    assert env["PGDATA"]["value"].startswith(mounts[claim] + "/"), "PGDATA must be a folder inside the volume"


def _wait_script() -> list[str]:
    """The server pod's init container, as Kubernetes hands it to the container's ``sh``."""
    spec = manifests.kubernetes_named("StatefulSet", "rivulet")["spec"]["template"]["spec"]
    (init,) = spec["initContainers"]
    env = {v["name"]: v for v in init["env"]}
    assert env[CATALOG_VARIABLE]["valueFrom"]["secretKeyRef"] == {"name": "rivulet", "key": "catalog-url"}
    return kubernetes_expand(init["command"], {})


def test_the_server_pod_waits_for_a_catalog_that_takes_connections(tmp_path):
    reason = why_no_postgres() or (None if shutil.which("pg_isready") else "pg_isready is not installed")
    if reason:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    script = _wait_script()
    nobody = make_url(_catalog_url_shown()).set(host="127.0.0.1", port=free_port())
    waiting = subprocess.Popen(script, env={CATALOG_VARIABLE: nobody.render_as_string(hide_password=False),
                                            "PATH": "/usr/bin:/bin"},
                               stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        assert waiting.poll() is None, "the wait ended although no PostgreSQL listens"
    finally:
        waiting.kill()
        waiting.wait(timeout=10)
    with running_postgres() as url:
        done = subprocess.run(script, env={CATALOG_VARIABLE: url, "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr


# --------------------------------------------------------------- the Ingress
def test_the_ingress_example_reaches_the_service_and_keeps_events_flowing():
    (ingress,) = [d for d in yaml.safe_load_all(INGRESS.read_text()) if d]
    assert ingress["kind"] == "Ingress" and ingress["apiVersion"] == "networking.k8s.io/v1"
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    service = manifests.kubernetes_named("Service", backend["name"])
    assert service["spec"].get("clusterIP") != "None", "an Ingress needs a Service with a cluster IP"
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    assert (path["path"], path["pathType"]) == ("/", "Prefix")
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/proxy-buffering"] == "off", "SSE would be held back"
    read_timeout = float(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"])
    assert read_timeout > 2 * Settings().sse_ping, "a quiet event stream would be cut between pings"
    (settings,) = manifests.kubernetes("ConfigMap")
    body = notes["nginx.ingress.kubernetes.io/proxy-body-size"]
    assert body.endswith("m") and int(body[:-1]) >= int(settings["data"]["RIVULET_MAX_BODY_MB"])
    assert "ingress/ingress.yaml" in manifests.DOCS.read_text()
