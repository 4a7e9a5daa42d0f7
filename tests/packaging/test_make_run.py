"""``make run`` as the README gives it: another port with ``PORT=``."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from endpoint.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_serves_the_demo_on_the_port_given(tmp_path):
    make = shutil.which("make")
    if make is None:
        reason = "make is not installed: the Makefile's run target is not checked"
        print(reason)
        pytest.skip(reason)
    # -n prints the recipe without running it (the virtual environment is not built)
    done = subprocess.run([make, "-n", "run", "PORT=8123", f"VENV={tmp_path / 'venv'}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    (line,) = [line for line in done.stdout.splitlines() if "rivulet serve" in line]
    argv = shlex.split(line)
    args = build_parser().parse_args(argv[argv.index("serve"):])
    assert (args.port, args.demo, args.data_dir) == (8123, True, ".rivulet-data")
