"""``rivulet load``: RDF files in, a memory-mappable sharded store out.

Two Spark jobs; the input is read and parsed once:

1. parse + dictionary -- statements saved as term hashes, distinct terms
   numbered by hash (``dictionary_build``);
2. encode + shards -- hashes to IDs, shuffled by (direction, vertex shard),
   written as CSR arrays (``shard_build``).

Everything is written under a hidden directory beside ``--out`` that is
renamed to ``--out`` only after the manifest is written, so a failed or
interrupted load leaves nothing that looks like a store. ``--out`` must be
on a file system that the driver and every executor see (any local path in
``local[*]`` mode; a shared volume on a cluster).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
import uuid
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

from engine.loader.dictionary_build import MAX_SAMPLES, Counters, build_dictionary
from engine.loader.parse_lines import BAD_LINE_MARK, ERROR_MARK, LoadError, locate_line
from engine.loader.progress import Progress
from engine.loader.shard_build import build_shards
from engine.loader.spark_log import new_log, stderr_to
from engine.store.layout import TERMS, Manifest

DEFAULT_MASTER = "local[*]"
#: SQL settings for the load's jobs (bigger Arrow batches: fewer Python round trips)
SQL_CONF = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "131072",
    "spark.sql.files.maxPartitionBytes": str(64 << 20),
}
#: the JVM's heap in local mode: it only moves the shuffles' records (spilling
#: to disk when they do not fit); the Python tasks do the work. 1 GB loaded
#: 100M triples with the JVM at 1.5 GB resident; ``--conf spark.driver.memory=``
#: overrides it
LOCAL_DRIVER_MEMORY = "1g"


@dataclass
class LoadOptions:
    files: list[Path]
    out: Path
    master: str = DEFAULT_MASTER
    shards: int = 1
    graph: str | None = None
    skip_invalid: bool = False
    progress: bool = True
    #: extra Spark settings (``--conf key=value``) for a session the load creates
    spark_conf: dict[str, str] = field(default_factory=dict)


@dataclass
class LoadReport:
    triples: int
    terms: int
    shards: int
    graphs: int
    invalid_lines: int
    #: "file:line: text" of the first skipped lines
    invalid_samples: list[str]
    store_bytes: int
    term_bytes: int
    string_bytes: int
    seconds: float
    steps: dict[str, float]
    stages: dict[str, float]

    def summary(self) -> str:
        mb = lambda n: f"{n / 1e6:,.1f} MB"  # noqa: E731
        per = lambda n: f"{n / max(self.triples, 1):.1f} B/triple"  # noqa: E731
        lines = [
            f"loaded {self.triples:,} triples, {self.terms:,} terms, {self.graphs} graph(s) "
            f"in {self.shards} shard(s) in {self.seconds:.1f} s "
            f"({self.triples / max(self.seconds, 1e-9):,.0f} triples/s)",
            f"store {mb(self.store_bytes)} ({per(self.store_bytes)}), term index {mb(self.term_bytes)} "
            f"({per(self.term_bytes)}), strings {mb(self.string_bytes)} ({per(self.string_bytes)})",
        ]
        if self.invalid_lines:
            lines.append(f"skipped {self.invalid_lines:,} malformed line(s):")
            lines += [f"  {s}" for s in self.invalid_samples]
        return "\n".join(lines)


@contextmanager
def spark_session(master: str, conf: dict[str, str]):
    """A session for one load, stopped afterwards. In local mode the Python
    workers run this interpreter and import the engine from where it is; on a
    cluster the engine package is shipped to the executors as a zip."""
    local = master.startswith("local")
    if local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        root = str(Path(__file__).resolve().parents[2])
        paths = os.environ.get("PYTHONPATH", "")
        if root not in paths.split(os.pathsep):
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, paths) if p)
    builder = SparkSession.builder.master(master).appName("rivulet-load")
    settings = {"spark.ui.showConsoleProgress": "false", **SQL_CONF}
    if local:
        settings["spark.driver.memory"] = LOCAL_DRIVER_MEMORY
    for key, value in {**settings, **conf}.items():
        builder = builder.config(key, value)
    spark_log = new_log()
    try:
        with stderr_to(spark_log):  # the JVM started here writes its log there, not on the terminal
            spark = builder.getOrCreate()
    except Exception as exc:
        raise LoadError(f"Spark did not start ({exc}); its log: {spark_log}") from None
    if not local:
        spark.sparkContext.addPyFile(_engine_zip())
    keep_log = False
    try:
        yield spark
    except LoadError:  # a message of its own (a bad line, a missing file): the log adds nothing
        raise
    except BaseException:
        keep_log = True
        raise
    finally:
        spark.stop()
        if keep_log:
            print(f"rivulet load: Spark's log is in {spark_log}", file=sys.stderr)
        else:
            spark_log.unlink(missing_ok=True)


def _engine_zip() -> str:
    import tempfile

    package = Path(__file__).resolve().parents[1]
    target = Path(tempfile.mkdtemp(prefix="rivulet-engine-")) / "engine.zip"
    with zipfile.ZipFile(target, "w") as z:
        for path in package.rglob("*.py"):
            z.write(path, path.relative_to(package.parent))
    return str(target)


def _spark_error(exc: Exception) -> LoadError | None:
    """The load error a task raised, with the bad line's number looked up."""
    text = str(exc)
    at = text.find(BAD_LINE_MARK)
    if at >= 0:
        file, _, line = text[at + len(BAD_LINE_MARK) :].split("\n", 1)[0].partition("\t")
        return LoadError(_bad_line(file, line) + " (use --skip-invalid to skip such lines)")
    match = re.search(re.escape(ERROR_MARK) + r"(.*)", text)
    return LoadError(match.group(1).strip()) if match else None


def _bad_line(file: str, line: str) -> str:
    number = locate_line(Path(file), line)
    where = f"{file}:{number}" if number else file
    return f"{where}: malformed N-Triples/N-Quads statement: {line[:200]}"


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def load(options: LoadOptions, spark: SparkSession | None = None) -> LoadReport:
    """Run the load; with ``spark`` given, use that session (tests) instead of
    starting one for ``options.master``."""
    if options.shards < 1:
        raise LoadError("--shards must be at least 1")
    for path in options.files:
        if not path.is_file():
            raise LoadError(f"{path}: no such file")
    out = options.out.resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LoadError(f"{out} already exists; remove it or choose another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.loading-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        if spark is None:
            with spark_session(options.master, options.spark_conf) as session:
                report = _run(session, options, staging)
        else:
            report = _run(spark, options, staging)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
        return report
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _run(spark: SparkSession, options: LoadOptions, staging: Path) -> LoadReport:
    start = time.perf_counter()
    for key, value in SQL_CONF.items():
        spark.conf.set(key, value)
    work = staging / "_work"
    counters = Counters.create(spark)
    progress = Progress(spark, counters.triples, options.progress)
    steps: dict[str, float] = {}
    try:
        progress.step("parse + dictionary")
        t = time.perf_counter()
        dictionary = build_dictionary(spark, options.files, options.graph, not options.skip_invalid, work,
                                      staging / TERMS, counters)
        steps["parse + dictionary"] = time.perf_counter() - t
        progress.step("encode + shards")
        t = time.perf_counter()
        shards = build_shards(spark, counters.quad_files.value, dictionary.hashes, dictionary.terms,
                              options.shards, staging)
        steps["encode + shards"] = time.perf_counter() - t
    except LoadError:
        raise
    except Exception as exc:
        error = _spark_error(exc)
        if error is None:
            raise
        raise error from None
    finally:
        progress.close()
    shutil.rmtree(work)
    graphs = dict(shards.graphs)
    graphs.setdefault(0, 0)
    triples = sum(graphs.values())
    samples = [_bad_line(file, line) for file, line in counters.samples.value[:MAX_SAMPLES]]
    manifest = Manifest(triples=triples, terms=dictionary.terms, shards=options.shards,
                        graphs={str(g): n for g, n in sorted(graphs.items())},
                        invalid_lines=counters.bad.value, sources=[str(p) for p in options.files])
    manifest.write(staging)
    term_bytes = _dir_bytes(staging / TERMS) - dictionary.string_bytes
    return LoadReport(
        triples=triples, terms=dictionary.terms, shards=options.shards, graphs=len(graphs),
        invalid_lines=counters.bad.value, invalid_samples=samples, store_bytes=shards.nbytes,
        term_bytes=term_bytes, string_bytes=dictionary.string_bytes,
        seconds=time.perf_counter() - start, steps=steps, stages=progress.stage_seconds(),
    )
