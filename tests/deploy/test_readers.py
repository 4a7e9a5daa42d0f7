"""The readers tests/deploy checks the manifests with, on small inputs whose reading is known:
a reader that misread would let a disagreement between the manifests pass."""

from __future__ import annotations

import pytest

from tests.deploy import containerfile, ignore_file, unit_file
from tests.deploy.commands import (
    UnsetVariable,
    compose_interpolate,
    container_argv,
    kubernetes_expand,
    rivulet_commands,
    shell_commands,
)

CONTAINERFILE = """# syntax=docker/dockerfile:1
ARG BASE=python:3.11-slim
FROM ${BASE} AS build
RUN pip wheel \\
    # a comment inside a continued instruction
    --wheel-dir /wheels .

FROM ${BASE}
ENV A=1 \\
    B="two words"
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels pip install x
CMD ["old"]
ENTRYPOINT ["rivulet"]
USER 10001:10001
VOLUME /data /more
EXPOSE 8000/tcp
HEALTHCHECK --interval=5s CMD python -c 'print(1)'
"""


def test_containerfile_stages_instructions_and_image():
    build, runtime = containerfile.stages(containerfile.parse(CONTAINERFILE))
    assert (build.base, build.name, runtime.base, runtime.name) == (
        "python:3.11-slim", "build", "python:3.11-slim", None)
    (wheel,) = build.all("RUN")
    assert wheel.value == "pip wheel --wheel-dir /wheels ."
    mount_run = runtime.all("RUN")[0]
    assert mount_run.options == {"mount": "type=bind,from=build,source=/wheels,target=/wheels"}
    assert mount_run.value == "pip install x"
    image = containerfile.image(runtime)
    assert image.entrypoint == ["rivulet"] and image.cmd == [], "a later ENTRYPOINT drops the CMD"
    assert image.env == {"A": "1", "B": "two words"}
    assert (image.user, image.volumes, image.exposed) == ("10001:10001", ["/data", "/more"], [8000])
    assert image.healthcheck == ["/bin/sh", "-c", "python -c 'print(1)'"]


def test_containerfile_reader_refuses_what_it_does_not_know():
    with pytest.raises(containerfile.ContainerfileError, match="ONBUILD"):
        containerfile.parse("FROM x\nONBUILD RUN true\n")
    with pytest.raises(containerfile.ContainerfileError, match="ends inside"):
        containerfile.parse("FROM x\nRUN true \\\n")


def test_unit_file_sections_repeats_resets_and_continuations():
    unit = unit_file.parse("""# comment
[Service]
ExecStart=/bin/prog \\
  --flag "a b"
ReadWritePaths=/a
ReadWritePaths=
ReadWritePaths=/b
; another comment
CapabilityBoundingSet=
[Install]
WantedBy=multi-user.target
""")
    (start,) = unit.values("Service", "ExecStart")
    assert unit_file.command_line(start) == ["/bin/prog", "--flag", "a b"]
    assert unit_file.command_line("-/bin/prog x") == ["/bin/prog", "x"]
    assert unit.values("Service", "ReadWritePaths") == ["/b"]
    assert unit.value("Service", "CapabilityBoundingSet") == ""
    assert unit.value("Service", "Missing") is None
    assert unit.values("Install", "WantedBy") == ["multi-user.target"]
    with pytest.raises(unit_file.UnitFileError):
        unit_file.parse("Key=value outside a section\n")


def test_compose_interpolation():
    env = {"SET": "yes", "EMPTY": ""}
    doc = {"a": "${SET}-$SET-$${SET}", "b": ["${UNSET:-fallback}", "${EMPTY:-fallback}", "${EMPTY-kept}"],
           "c": 3}
    assert compose_interpolate(doc, env) == {"a": "yes-yes-${SET}", "b": ["fallback", "fallback", ""], "c": 3}
    with pytest.raises(UnsetVariable, match="say why"):
        compose_interpolate("${UNSET:?say why}", env)
    with pytest.raises(UnsetVariable):
        compose_interpolate("${UNSET}", env)


def test_kubernetes_expansion():
    expanded = kubernetes_expand(["--t", "$(T)", "$$(T)", "$(NOPE)"], {"T": "30"})
    assert expanded == ["--t", "30", "$(T)", "$(NOPE)"]


def test_container_argv_follows_the_override_rules():
    image = (["rivulet"], ["serve", "--port", "8000"])
    assert container_argv(*image) == ["rivulet", "serve", "--port", "8000"]
    assert container_argv(*image, None, ["load", "x"]) == ["rivulet", "load", "x"]
    assert container_argv(*image, None, "load 'a b'") == ["rivulet", "load", "a b"]
    assert container_argv(*image, ["sh", "-c"], None) == ["sh", "-c"], "a new entrypoint drops CMD"
    assert container_argv(*image, ["sh", "-c"], ["echo"]) == ["sh", "-c", "echo"]


def test_shell_commands_of_a_script():
    script = ('if [ -e "/s/$NAME/m" ]; then echo "exists"; else cd /in && '
              'exec rivulet load $FILES --out "/s/$NAME" --conf "k=$V"; fi')
    commands = shell_commands(script, {"NAME": "cur rent", "FILES": "a.nt b.nt", "V": "2g"})
    assert [c.argv[0] for c in commands] == ["[", "echo", "rivulet"]
    rivulet = commands[-1]
    assert rivulet.argv == ["rivulet", "load", "a.nt", "b.nt", "--out", "/s/cur rent", "--conf", "k=2g"]
    assert rivulet.cwd == "/in"
    with pytest.raises(UnsetVariable):
        shell_commands("rivulet $MISSING", {})
    found = rivulet_commands(["sh", "-c", script], {"NAME": "n", "FILES": "f", "V": "v"})
    assert [c.argv for c in found] == [["rivulet", "load", "f", "--out", "/s/n", "--conf", "k=v"]]
    assert rivulet_commands(["/opt/rivulet/bin/rivulet", "serve"], {})[0].argv[1] == "serve"
    assert rivulet_commands(["python", "-c", "1"], {}) == []


def test_dockerignore_rules():
    rules = ignore_file.parse("# c\n*\n!keep\n**/__pycache__\n!/top.txt\n")
    assert rules.excluded("other/file") and rules.excluded(".hidden")
    assert not rules.excluded("keep") and not rules.excluded("keep/deep/file.py")
    assert rules.excluded("keep/deep/__pycache__/x.pyc")
    assert not rules.excluded("top.txt")
