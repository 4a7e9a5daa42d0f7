"""``python -m tests.stream.scenarios --count N --seed S``: a longer run than
CI's, in-process and (``--http M``) over HTTP, with the failures grouped by
the feature they are put down to and, with ``--shrink``, a minimal
reproduction of each group."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from tests.stream.scenarios import features, http
from tests.stream.scenarios.runner import Outcome, check, check_seed
from tests.stream.scenarios.serialise import load
from tests.stream.scenarios.shrink import shrink


def _group(outcome: Outcome) -> str:
    """The cause a failure is put down to: the known-broken or unsettled
    features it exercised, else (news) the kind and place of its first difference."""
    if outcome.status != "fail":
        return outcome.status
    if outcome.causes:
        return "+".join(sorted(outcome.causes))
    first = outcome.differences[0]
    detail = first.detail.splitlines()[0][:80] if first.kind == "error" else ""
    return f"NEW: {first.kind} {detail}".strip()


def _run(label: str, seeds: range, check_one, log) -> list[Outcome]:
    outcomes = []
    started = time.monotonic()
    for number, seed in enumerate(seeds, 1):
        outcome = check_one(seed)
        outcomes.append(outcome)
        if outcome.status != "pass":
            log(f"{label} seed {seed}: {_group(outcome)}")
        if number % 100 == 0:
            log(f"{label}: {number}/{len(seeds)} in {time.monotonic() - started:.0f} s")
    return outcomes


def _summary(label: str, outcomes: list[Outcome], seconds: float) -> list[str]:
    statuses = Counter(o.status for o in outcomes)
    lines = [
        f"== {label}: {len(outcomes)} scenarios in {seconds:.0f} s: "
        + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())),
        f"   windows compared: {sum(o.windows for o in outcomes)}",
    ]
    noted = [o for o in outcomes if o.notes]
    if noted:
        lines.append(
            f"   notes in {len(noted)} scenarios, e.g. seed {noted[0].scenario.seed}: {noted[0].notes[0]}"
        )
    made = Counter(f for o in outcomes for f in o.scenario.features)
    lines.append(
        "   scenarios per feature: " + ", ".join(f"{f} {made[f]}" for f in features.FEATURES if made[f])
    )
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.status != "pass":
            groups[_group(outcome)].append(outcome)
    for group, members in sorted(groups.items()):
        lines.append(
            f"   {group}: {len(members)} (seeds {', '.join(str(o.scenario.seed) for o in members[:12])}"
            + (" ..." if len(members) > 12 else "")
            + ")"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.stream.scenarios", description=__doc__)
    parser.add_argument("--count", type=int, default=500, help="in-process scenarios (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--http", type=int, default=0, help="scenarios over HTTP against rivulet serve")
    parser.add_argument(
        "--features",
        default="default",
        help="'default', 'all', or a comma list; '+name'/'-name' change the default set",
    )
    parser.add_argument("--force", default="", help="features on in every scenario (comma list)")
    parser.add_argument("--shrink", action="store_true", help="shrink one failure of each group (in-process)")
    parser.add_argument("--out", type=Path, help="write each failing scenario (JSON) and report here")
    parser.add_argument("--replay", type=Path, help="run one scenario saved with --out and print its report")
    args = parser.parse_args(argv)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    # the engine warns once per window it cannot report (e.g. an output stream
    # taken over, issue 26 item 4): thousands of lines the differences already say
    logging.getLogger("rivulet").setLevel(logging.ERROR)

    if args.replay:
        outcome = check(load(json.loads(args.replay.read_text())["scenario"]))
        print(outcome.report())
        return 0 if outcome.status == "pass" else 1
    enabled = features.parse(args.features)
    force = frozenset(f for f in args.force.split(",") if f)
    outcomes: dict[str, list[Outcome]] = {}
    seconds: dict[str, float] = {}
    if args.count:
        started = time.monotonic()
        outcomes["in-process"] = _run(
            "in-process",
            range(args.seed, args.seed + args.count),
            lambda seed: check_seed(seed, enabled, force=force),
            log,
        )
        seconds["in-process"] = time.monotonic() - started
    if args.http:
        started = time.monotonic()
        server = http.Server()
        try:
            driver = functools.partial(http.run, server=server)
            outcomes["http"] = _run(
                "http",
                range(args.seed, args.seed + args.http),
                lambda seed: check_seed(seed, enabled, driver, f"h{seed}", force),
                log,
            )
        finally:
            server.stop()
        seconds["http"] = time.monotonic() - started
    print(f"features enabled: {', '.join(sorted(enabled))}")
    for label, found in outcomes.items():
        print("\n".join(_summary(label, found, seconds[label])))
    failures = [o for found in outcomes.values() for o in found if o.status != "pass"]
    if args.out and failures:
        args.out.mkdir(parents=True, exist_ok=True)
        for outcome in failures:
            name = f"{outcome.scenario.tag or 'seed'}-{outcome.scenario.seed}"
            (args.out / f"{name}.json").write_text(outcome.to_json())
    if args.shrink:
        shown: set[str] = set()
        for outcome in failures:
            group = _group(outcome)
            if group in shown or outcome.status != "fail":
                continue
            shown.add(group)
            log(f"shrinking seed {outcome.scenario.seed} ({group})")
            # shrunk in-process: an HTTP failure that does not show there stays as it is
            small = shrink(outcome)
            print(f"\n##### {group}: minimal reproduction\n{small.report()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
