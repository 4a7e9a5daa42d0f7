"""The ``rivulet`` commands' user errors: one line naming the file and the
position, exit status 1, never a traceback.

``rivulet query`` is run in this process (``endpoint.cli.main``, the
console script's function) over many generated bad inputs, and once more as
the real command for each kind of error; ``rivulet replay`` with nothing
listening, ``rivulet serve --data`` with a bad file and ``rivulet load``
(a real Spark job) with a bad line run as subprocesses.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from endpoint.cli import main
from tests.endpoint.rivulet_process import free_port

REPO = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
#: well-formed Turtle, one statement a line (line k+1 holds statement k)
GOOD_LINES = [f'<{EX}s{k}> <{EX}p> "v{k}" .' for k in range(12)]
#: ways to break one line so that no Turtle parser can accept it
BREAKS = [
    lambda line: line.replace('" .', " ."),            # an unterminated string
    lambda line: line.replace("> <", "> <bad iri "),   # a space inside an IRI
    lambda line: line.replace(" .", " ;;; ]"),         # a bracket never opened
    lambda line: line.replace("<", "<<<", 1),          # a triple term without its end
    lambda line: line.rstrip(" .") + " @@ .",          # a malformed language tag
]


def command(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real ``rivulet`` command (``python -m endpoint.cli``) with this checkout first."""
    return subprocess.run([sys.executable, "-m", "endpoint.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})


def one_line(stderr: str, command_name: str) -> str:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{stderr}"
    assert lines[0].startswith(f"rivulet {command_name}: "), lines[0]
    return lines[0]


def test_generated_bad_files_are_named_with_their_line(tmp_path, capsys):
    rng = random.Random(29)
    for case in range(40):
        bad = rng.randrange(len(GOOD_LINES))
        lines = list(GOOD_LINES)
        lines[bad] = rng.choice(BREAKS)(lines[bad])
        path = tmp_path / f"case-{case}.ttl"
        path.write_text("\n".join(lines) + "\n")
        assert main(["query", "--data", str(path), "SELECT * WHERE { ?s ?p ?o }"]) == 1, lines[bad]
        message = one_line(capsys.readouterr().err, "query")
        assert f"{path}: " in message, message
        assert f"line {bad + 1}" in message, (lines[bad], message)


def test_generated_bad_queries_give_their_line_and_column(tmp_path, capsys):
    rng = random.Random(7)
    data = tmp_path / "data.ttl"
    data.write_text("\n".join(GOOD_LINES))
    words = ["SELECT", "*", "WHERE", "{", "}", "?s", "?p", "?o", "FILTER(", ")", ".", "LIMIT", "1", "GRAPH"]
    failed = 0
    for _ in range(60):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 9)))
        status = main(["query", "--data", str(data), text])
        captured = capsys.readouterr()
        if status == 0:
            continue  # a random text may well be a query
        failed += 1
        message = one_line(captured.err, "query")
        assert message.startswith("rivulet query: malformed query: line 1, column "), message
    assert failed > 30


def test_a_missing_file_is_one_line(tmp_path, capsys):
    missing = tmp_path / "data.ttl"
    assert main(["query", "--data", str(missing), "SELECT * WHERE { ?s ?p ?o } LIMIT 5"]) == 1
    assert one_line(capsys.readouterr().err, "query") == f"rivulet query: {missing}: no such file"


def test_the_real_command_prints_one_line_for_each_kind(tmp_path):
    """The README's own line, with no data.ttl beside it; a bad query; bad RDF."""
    done = command("query", "--data", "data.ttl", "SELECT * WHERE { ?s ?p ?o } LIMIT 5")
    assert done.returncode == 1
    assert one_line(done.stderr, "query") == "rivulet query: data.ttl: no such file"
    good = tmp_path / "good.ttl"
    good.write_text("\n".join(GOOD_LINES))
    done = command("query", "--data", str(good), "SELECT * { ?x ?y }")
    assert done.returncode == 1
    assert "malformed query: line 1, column 18" in one_line(done.stderr, "query")
    bad = tmp_path / "bad.ttl"
    bad.write_text("\n".join([*GOOD_LINES[:3], '<a> <b> "unterminated .']))
    done = command("query", "--data", str(bad), "SELECT * WHERE { ?s ?p ?o }")
    assert done.returncode == 1
    message = one_line(done.stderr, "query")
    assert f"{bad}: " in message and "line 4" in message, message


def test_replay_with_nothing_listening_is_one_line(tmp_path):
    recording = tmp_path / "readings.nt"
    recording.write_text(f'1700000001000 <{EX}g> <{EX}levelCm> "1" .\n')
    server = f"http://127.0.0.1:{free_port()}"
    done = command("replay", str(recording), "--stream", "gauges", "--server", server)
    assert done.returncode == 1
    message = one_line(done.stderr, "replay")
    assert f"cannot reach the server at {server}/streams/gauges" in message, message
    done = command("replay", str(tmp_path / "none.nt"), "--stream", "gauges", "--server", server)
    assert one_line(done.stderr, "replay") == f"rivulet replay: {tmp_path / 'none.nt'}: no such file"


def test_serve_names_the_file_that_does_not_parse(tmp_path):
    good, bad = tmp_path / "good.ttl", tmp_path / "bad.ttl"
    good.write_text("\n".join(GOOD_LINES))
    bad.write_text("\n".join([*GOOD_LINES[:5], f"<{EX}s> <{EX}p> <bad iri> ."]))
    done = command("serve", "--data", str(good), "--data", str(bad), "--port", str(free_port()))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"rivulet serve: could not load the data: {bad}: "), last
    assert "line 6" in last, last


def test_load_with_a_bad_line_prints_only_its_message(tmp_path):
    if shutil.which("java") is None:
        reason = "no Java runtime: rivulet load (Spark) cannot run here"
        print(reason)
        pytest.skip(reason)
    broken = REPO / "tests" / "loader" / "data" / "broken.nt"
    done = command("load", str(broken), "--out", str(tmp_path / "store"), "--no-progress", timeout=300)
    assert done.returncode == 1
    message = one_line(done.stderr, "load")
    assert f"{broken}:4: malformed N-Triples/N-Quads statement" in message, message
    assert not (tmp_path / "store").exists()
