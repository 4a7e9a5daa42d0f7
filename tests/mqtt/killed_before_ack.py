"""``rivulet serve`` that SIGKILLs itself between a durable write and its acknowledgement.

Run as ``python -m tests.mqtt.killed_before_ack serve ...`` (what
``rivulet serve`` takes) with ``RIVULET_TEST_KILL_AT_ACK=N``: the stream
sources acknowledge as usual until the N-th acknowledgement, which they
never send: the process kills itself then, when the group of messages it
belongs to is in the log and the broker has not heard of it. The broker
delivers that group again to the next server; the test checks that no
window counts it twice.
"""

from __future__ import annotations

import os
import signal
import sys

from endpoint.brokers.mqtt import MqttInlet
from endpoint.cli import main

KILL_AT = int(os.environ["RIVULET_TEST_KILL_AT_ACK"])
_acknowledge = MqttInlet.acknowledge
_count = [0]


def acknowledge_or_die(self: MqttInlet, delivery) -> None:
    _count[0] += 1
    if _count[0] >= KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    _acknowledge(self, delivery)


MqttInlet.acknowledge = acknowledge_or_die

if __name__ == "__main__":
    sys.exit(main())
