"""The server's collector policy (endpoint/collector.py): what start-up made
is frozen out of the collector's reach, the young generation is collected
less often, and a block run as in a server leaves the process as it was."""

import gc

from endpoint.collector import YOUNG_THRESHOLD, as_in_a_server


def test_a_block_runs_with_the_servers_policy_and_the_process_gets_its_own_back() -> None:
    before = gc.get_threshold()
    made_at_start_up = [[i] for i in range(1000)]  # tracked containers alive before the block
    with as_in_a_server():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        assert gc.get_freeze_count() >= len(made_at_start_up)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
