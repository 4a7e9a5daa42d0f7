"""benchmarks.scale_serving at a tiny size, with both real servers: the stores are built,
both servers give as many rows for every query and method, the writes and checkpoints
leave what they should, and a second look at the workdir keeps the stores. Not a timing test."""

import pytest

from benchmarks.scale_serving import main, stores
from benchmarks.serving import BIN, check

pytestmark = pytest.mark.skipif(not (BIN / "oxigraph").exists(),
                                reason="the oxigraph server is not installed")


def test_the_mix_matches_and_the_checkpoint_keeps_the_writes(tmp_path):
    ox, riv = main(["--triples", "5000", "--runs", "5", "--mix", "20", "--seconds", "0.3", "--clients", "1",
                    "--no-write", "--workdir", str(tmp_path)])
    assert len(ox.timings) == len(riv.timings) == 8
    assert all(check(a, riv.timings[key]) == "ok" for key, a in ox.timings.items())
    assert sum(t.rows for t in ox.timings.values()) > 0
    assert all(t.answers > 0 and t.failed == 0 for r in (ox, riv) for t in r.throughput.values())
    assert [s.name.split(",")[0].split(":")[0] for s in riv.writes] == [
        "INSERT DATA", "DELETE DATA", "checkpoint", "undo", "checkpoint after the undo"]
    assert [s.server_s != "-" for s in riv.writes] == [False, False, True, False, True]
    assert len(riv.checks) == 4 and all(c.startswith("ok") for c in riv.checks), riv.checks
    kept = stores(tmp_path / "lsbench-5000.nq", tmp_path, [])
    assert not kept["rivulet"]["this_run"] and not kept["oxigraph"]["this_run"]
