"""One scenario end to end: generate, expect, drive, compare; and the
report a failure prints."""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.stream.scenarios import inprocess
from tests.stream.scenarios.actual import Actual
from tests.stream.scenarios.compare import Difference, compare
from tests.stream.scenarios.features import KNOWN_BROKEN, UNSETTLED
from tests.stream.scenarios.generator import generate
from tests.stream.scenarios.model import Scenario
from tests.stream.scenarios.oracle import Ambiguous, Expected, expect
from tests.stream.scenarios.serialise import dump

#: runs a scenario; it may read the expected events, to know how long to wait for them
Driver = Callable[[Scenario, Expected], Actual]


@dataclass
class Outcome:
    """``status``: ``pass``, ``fail``, ``ambiguous`` (the oracle would not
    answer) or ``oracle-error`` (the oracle or generator broke): the last
    two are the tester's bugs, counted apart and never passes."""

    scenario: Scenario
    status: str
    differences: list[Difference] = field(default_factory=list)
    expected: Expected | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def causes(self) -> frozenset[str]:
        """The known-broken or unsettled features the scenario exercised (empty: news)."""
        if self.expected is None:
            return frozenset()
        return frozenset(self.expected.exercised & (set(KNOWN_BROKEN) | set(UNSETTLED)))

    @property
    def windows(self) -> int:
        return 0 if self.expected is None else sum(len(e) for e in self.expected.events.values())

    def report(self) -> str:
        """The failure as a self-contained reproduction."""
        lines = [
            f"=== scenario seed {self.scenario.seed}: {self.status}",
            f"exercised: {', '.join(sorted(self.expected.exercised)) if self.expected else '-'}",
            f"attributed to: {', '.join(sorted(self.causes)) or 'nothing known: a new bug?'}",
            self.scenario.describe(),
            "--- differences",
        ]
        lines += [d.show() for d in self.differences]
        if self.reason:
            lines.append(self.reason)
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({"scenario": dump(self.scenario), "report": self.report()})


def check(scenario: Scenario, driver: Driver = inprocess.run) -> Outcome:
    """Run ``scenario`` through ``driver`` and compare it with the oracle."""
    try:
        expected = expect(scenario)
    except Ambiguous as error:
        return Outcome(scenario, "ambiguous", reason=str(error))
    except Exception:  # noqa: BLE001 - the oracle or the generator is wrong: counted apart, never a pass
        return Outcome(scenario, "oracle-error", reason=traceback.format_exc())
    actual = driver(scenario, expected)
    differences = compare(scenario, expected, actual)
    return Outcome(scenario, "fail" if differences else "pass", differences, expected, notes=actual.notes)


def check_seed(
    seed: int,
    features: frozenset[str],
    driver: Driver = inprocess.run,
    tag: str = "",
    force: frozenset[str] = frozenset(),
) -> Outcome:
    return check(generate(seed, features, tag, force), driver)
