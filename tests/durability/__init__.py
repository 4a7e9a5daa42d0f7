"""Durability: the real server, killed with SIGKILL under load, must lose no acknowledged write.

These tests run ``rivulet serve --data-dir`` as a child process (a kill must
hit a real process: a server in a thread of the test cannot be killed
without killing the test) and check what a client was promised against what
the restarted server holds. The log's own faults (torn tails, damage,
kills inside checkpoints and recovery) are injected by crash_harness.py
into copies of a data directory opened in process (test_log_faults.py runs
a sample; ``python -m tests.durability.crash_harness`` a long run).
"""
