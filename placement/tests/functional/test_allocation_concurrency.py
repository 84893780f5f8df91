"""Allocation writes are race-proof and crash-safe, seen from outside.

A real gunicorn with several workers (processes, so the database is the
only thing they share) takes many concurrent writes from the
``benchmarks.allocation_writes`` load: new consumers by PUT and POST,
POSTs moving consumers between providers, DELETEs, with demand beyond
capacity. Everything is then read back through the API and compared with
what the clients were told (``benchmarks.allocation_ledger``).

Runs on SQLite, and on a fresh server database when
``PLACEMENT_TEST_DB_URL`` is set.
"""

import io
import os
import random
import signal
import threading
import time

import pytest

from benchmarks import allocation_writes
from placement.tests import fixtures
from placement.tests import gunicorn_server

WORKERS = 3
CLIENTS = 10
ATTEMPTS = 300
#: The code of the 409 for exceeding capacity: the only 409 without a
#: specific code that this load can cause.
CAPACITY_REFUSAL = 'placement.undefined_code'


@pytest.fixture
def server(tmp_path):
    url = fixtures.server_url()
    if url:
        db_url = fixtures.create_server_database(url, 'gunicorn')
    else:
        db_url = 'sqlite:///%s' % (tmp_path / 'placement.sqlite')
    server = gunicorn_server.GunicornServer(
        db_url, tmp_path / 'gunicorn.log', workers=WORKERS)
    server.start()
    yield server
    server.stop()


def _mixed_load(server, seed):
    load = allocation_writes.AllocationLoad(
        server.url, mode='mixed', clients=CLIENTS, attempts=ATTEMPTS,
        seed=seed)
    load.prepare()
    return load


def _summary(load, verification, server):
    """The benchmark's report plus the server's errors."""
    out = io.StringIO()
    allocation_writes.report(load, verification, out)
    return out.getvalue() + server.errors()


def _consumer_generation_conflicts(tally):
    """Each consumer has one writer, so these mean lost updates."""
    return [detail for detail in tally.conflict_samples.values()
            if 'consumer generation conflict' in (detail or '')]


def test_concurrent_writes_keep_usages_exact_and_within_capacity(server):
    load = _mixed_load(server, seed=7)
    load.run()
    verification = load.verify()

    summary = _summary(load, verification, server)
    assert verification.ok, summary
    tally = load.tally
    assert tally.server_errors == 0, summary
    assert not tally.unanswered and not tally.other_statuses, summary
    assert verification.uncertain_writes == 0
    # Every kind of write got through, and demand beyond capacity was
    # refused, so both sides of the capacity check were exercised.
    assert set(tally.successes_by_kind) == set(
        allocation_writes.MIXED_KINDS), tally.successes_by_kind
    assert tally.conflicts[CAPACITY_REFUSAL], (
        'no write was refused for capacity; the load proves nothing')
    assert not _consumer_generation_conflicts(tally)


def _kill_workers_during(load, server, fractions):
    """Run ``load`` and SIGKILL a random worker as each fraction of its
    attempts has been answered; return the successes at the last kill."""
    runner = threading.Thread(target=load.run)
    runner.start()
    rng = random.Random(len(fractions))
    successes_at_last_kill = None
    for fraction in fractions:
        while (runner.is_alive()
               and load.tally.attempts < fraction * len(load.planned)):
            time.sleep(0.01)
        assert runner.is_alive(), 'the load ended before the kill'
        os.kill(rng.choice(server.worker_pids()), signal.SIGKILL)
        successes_at_last_kill = load.tally.successes
    runner.join()
    return successes_at_last_kill


def test_killed_workers_leave_only_whole_acknowledged_writes(server):
    load = _mixed_load(server, seed=11)
    successes_at_last_kill = _kill_workers_during(
        load, server, fractions=(0.2, 0.45, 0.7))
    server.wait_for_workers()
    verification = load.verify()

    # Acknowledged writes are all there; cut-off writes (including
    # multi-consumer POSTs) are entirely there or entirely absent; usages
    # equal the consumers' allocations.
    summary = _summary(load, verification, server)
    assert verification.ok, summary
    tally = load.tally
    assert not tally.other_statuses, summary
    assert sum(tally.unanswered.values()) >= 1, (
        'no write was in flight at any kill')
    assert tally.successes > successes_at_last_kill, (
        'no write succeeded after the last kill')
    assert not _consumer_generation_conflicts(tally)
