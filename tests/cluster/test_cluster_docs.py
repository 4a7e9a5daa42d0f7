"""The cluster commands of docs/operations.md ("Running a cluster") give the
endpoint a port that none of Ray's takes, and every one of them is a command
line the real parser accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from endpoint.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
#: Ray's fixed default ports (GCS, dashboard, Ray Client, dashboard agent) and its workers' range
RAY_PORTS = {6379, 8265, 10001, 52365}
RAY_WORKER_PORTS = range(10002, 20000)


def _cluster_commands() -> list[list[str]]:
    text = DOCS.read_text()
    start = text.index("\n## Running a cluster\n")
    section = text[start:text.index("\n## ", start + 1)]
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["rivulet"]:
                commands.append(words[1:])
    return commands


def test_the_documented_endpoint_ports_are_clear_of_rays():
    commands = _cluster_commands()
    assert len(commands) >= 4
    ports = []
    for argv in commands:
        args = build_parser().parse_args(argv)
        if getattr(args, "port", None) is not None and "--port" in argv:
            ports.append(args.port)
            assert args.port not in RAY_PORTS and args.port not in RAY_WORKER_PORTS, argv
    assert ports, "no documented endpoint port was checked"
    assert any(argv[:2] == ["cluster", "down"] for argv in commands)
