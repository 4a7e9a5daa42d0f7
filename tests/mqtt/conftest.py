"""Real Mosquitto brokers and real ``rivulet serve`` processes for the MQTT tests.

``broker(users=None, persistent=False)`` starts a broker on a free loopback
port (:mod:`tests.mqtt.mosquitto`); ``rivulet(*options)`` starts a server as
an operator runs it (:class:`~tests.endpoint.rivulet_process.RivuletProcess`).
Both are stopped when the test ends; without Mosquitto every test here
skips and says why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.endpoint.rivulet_process import RivuletProcess
from tests.mqtt.mosquitto import Mosquitto, why_no_mosquitto


@pytest.fixture
def broker() -> Iterator[Callable[..., Mosquitto]]:
    reason = why_no_mosquitto()
    if reason:
        pytest.skip(f"MQTT tests not run: {reason}")
    started: list[Mosquitto] = []

    def start(users: dict[str, str] | None = None, persistent: bool = False) -> Mosquitto:
        started.append(Mosquitto(users, persistent))
        return started[-1]

    yield start
    for each in started:
        each.close()


@pytest.fixture(scope="session")
def plain_server() -> Iterator[RivuletProcess]:
    """One in-memory server for the tests of refusals (they change nothing)."""
    server = RivuletProcess()
    yield server
    server.stop()


@pytest.fixture
def rivulet() -> Iterator[Callable[..., RivuletProcess]]:
    started: list[RivuletProcess] = []

    def start(*options: str) -> RivuletProcess:
        started.append(RivuletProcess(*options))
        return started[-1]

    yield start
    for each in started:
        if each.process.poll() is None:
            each.process.kill()
            each.process.wait(timeout=15)
