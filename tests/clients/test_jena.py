"""Apache Jena's command-line clients, ``rsparql`` and ``rupdate`` (Debian's
libapache-jena-java, Jena 4.5), against a real server.

Jena's HTTP client is Java's, which offers every request an upgrade to
HTTP/2 (``Connection: Upgrade, HTTP2-Settings``, ``Upgrade: h2c``): each test
also checks that the server answered without a warning in its log.

Two things about running Debian's Jena, set up here rather than on the
system: it installs jars but no ``rsparql`` script, so the commands run as
``java -cp ... arq.rsparql``; and its jena-core.jar moves the bundled Xerces
classes to the package ``xerces`` but leaves their message bundles under
``org/apache/jena/ext/xerces``, so those classes find no messages and every
command dies at start ("RuntimeException: internal error" in
XSSimpleTypeDecl). The fixture copies the bundles to where the classes look,
a directory put first on the class path.

Jena 4.5 takes credentials from the service URL (``http://user:password@...``):
it sends the request without them, and answers a 401 with a ``Basic``
challenge by sending them."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
import rdflib
from rdflib.compare import isomorphic

from tests.clients.demo_queries import (
    EX,
    INTO_RHINE,
    INTO_RHINE_TRIPLES,
    ISAR,
    LONGEST,
    TOP3,
)

JARS = Path("/usr/share/java")
#: Jena's jars that rsparql and rupdate load, and the libraries they use (the package's dependencies)
CLASSPATH_JARS = [
    "jena-arq.jar", "jena-base.jar", "jena-cmds.jar", "jena-core.jar", "jena-iri.jar",
    "jena-dboe-base.jar", "jena-shacl.jar", "jena-shex.jar", "jena-tdb.jar", "jena-tdb2.jar",
    "jena-dboe-index.jar", "jena-dboe-storage.jar", "jena-dboe-trans-data.jar", "jena-dboe-transaction.jar",
    "jena-rdfconnection.jar", "commons-cli.jar", "commons-codec.jar", "commons-compress.jar",
    "commons-csv.jar", "commons-io.jar", "commons-lang3.jar", "dexx.collection.jar", "gson.jar",
    "guava.jar", "jackson-core.jar", "jackson-databind.jar", "jakarta.json-api.jar", "jsonld-java.jar",
    "titanium-json-ld.jar", "protobuf.jar", "thrift.jar", "slf4j-api.jar", "slf4j-simple.jar",
]
XERCES_MESSAGES = "org/apache/jena/ext/xerces/"



@pytest.fixture(scope="module")
def classpath(tmp_path_factory) -> str:
    if shutil.which("java") is None:
        pytest.skip("Jena tests skipped: no java on PATH (apt-get install default-jre-headless)")
    missing = [name for name in CLASSPATH_JARS if not (JARS / name).exists()]
    if missing:
        pytest.skip(f"Jena tests skipped: {', '.join(missing)} missing "
                    "(apt-get install libapache-jena-java; .ci/run installs it)")
    messages = tmp_path_factory.mktemp("jena-messages")
    with zipfile.ZipFile(JARS / "jena-core.jar") as jar:
        for entry in jar.namelist():
            if entry.startswith(XERCES_MESSAGES) and entry.endswith(".properties"):
                target = messages / "xerces" / entry.removeprefix(XERCES_MESSAGES)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(jar.read(entry))
    return ":".join([str(messages), *(str(JARS / name) for name in CLASSPATH_JARS)])


def jena(classpath: str, command: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``arq.<command>`` (60 s at most); its output, checked to have succeeded."""
    done = subprocess.run(["java", "-cp", classpath, f"arq.{command}", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def server(recorded):
    return recorded()


def offered_h2c(server) -> bool:
    return all(r.header("upgrade") == "h2c" for r in server.recorder.requests)


@pytest.mark.parametrize("results", ["json", "xml", "csv", "tsv"])
def test_rsparql_select(classpath, server, server_warnings, results):
    out = jena(classpath, "rsparql", "--service", server.sparql, "--results", results, LONGEST).stdout
    if results == "json":
        bindings = json.loads(out)["results"]["bindings"]
        rows = [(b["river"]["value"], b["km"]["value"]) for b in bindings]
    elif results == "xml":
        ns = {"r": "http://www.w3.org/2005/sparql-results#"}
        rows = [(r.find("r:binding[@name='river']/r:uri", ns).text,
                 r.find("r:binding[@name='km']/r:literal", ns).text)
                for r in ElementTree.fromstring(out).iterfind(".//r:result", ns)]
    elif results == "csv":
        rows = [tuple(row) for row in csv.reader(io.StringIO(out))][1:]
    else:
        rows = [tuple(line.split("\t")) for line in out.splitlines()[1:]]
        rows = [(river.strip("<>"), str(rdflib.util.from_n3(km))) for river, km in rows]
    assert rows == TOP3, server.show()
    assert offered_h2c(server)
    assert server_warnings() == []


def test_rsparql_construct(classpath, server, server_warnings):
    out = jena(classpath, "rsparql", "--service", server.sparql, "--results", "ttl", INTO_RHINE).stdout
    graph = rdflib.Graph().parse(data=out, format="turtle")
    assert isomorphic(graph, rdflib.Graph().parse(data=INTO_RHINE_TRIPLES, format="nt")), server.show()
    assert offered_h2c(server)
    assert server_warnings() == []


def test_rupdate_with_credentials(classpath, recorded, server_warnings):
    server = recorded(update_token="s3cret")
    service = server.sparql.replace("http://", "http://admin:s3cret@")
    done = subprocess.run(["java", "-cp", classpath, "arq.rupdate", "--service", service, ISAR],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"rupdate failed:\n{done.stderr}\nrequests:\n{server.show()}"
    assert server.recorder.requests[-1].header("authorization").startswith("Basic ")
    ask = jena(classpath, "rsparql", "--service", server.sparql, "--results", "json",
               f"ASK {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}").stdout
    assert json.loads(ask)["boolean"] is True
    assert offered_h2c(server)
    assert server_warnings() == []
