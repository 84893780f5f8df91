"""Allocation writes are race-proof and crash-safe, seen from outside.

A real gunicorn with several workers (processes, so the database is the
only thing they share) takes many concurrent writes from the
``benchmarks.toolkit.allocation_load`` load: new consumers by PUT and POST,
POSTs moving consumers between providers, DELETEs, with demand beyond
capacity. Everything is then read back through the API and compared with
what the clients were told (``benchmarks.toolkit.allocation_ledger``).

Runs on SQLite, and on a fresh server database when
``PLACEMENT_TEST_DB_URL`` is set.
"""

import io
import os
import random
import signal
import threading
import time
import uuid

import pytest

from benchmarks.toolkit import allocation_ledger
from benchmarks.toolkit import allocation_load
from placement.tests import gunicorn_server
from placement.tests import placement_http

WORKERS = 3
CLIENTS = 10
ATTEMPTS = 300


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    """One server for the module: every test uses its own providers."""
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'concurrency', WORKERS) as server:
        yield server


def _mixed_load(server, seed):
    load = allocation_load.AllocationLoad(
        server.url, mode='mixed', clients=CLIENTS, attempts=ATTEMPTS,
        seed=seed)
    load.prepare()
    return load


def _summary(load, verification, server):
    """The benchmark's report plus the server's errors."""
    out = io.StringIO()
    allocation_load.report(load, verification, out)
    return out.getvalue() + server.errors()


def _consumer_generation_conflicts(tally):
    """Each consumer has one writer, so these mean lost updates."""
    return [message for message in tally.conflict_messages
            if 'consumer generation conflict' in message]


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
        allocation_load.MIXED_KINDS), tally.successes_by_kind
    assert any('exceed the capacity' in message
               for message in tally.conflict_messages), (
        'no write was refused for capacity; the load proves nothing')
    assert not _consumer_generation_conflicts(tally)


def _kill_workers_during(load, server, fractions, spare=(0.8, 0.85, 0.9)):
    """Run ``load`` and SIGKILL a random worker as each fraction of its
    attempts has been answered, and at the ``spare`` fractions too while
    no kill has cut a write off yet (on a loaded machine the clients can
    fall behind the workers, and a kill find both idle); return the
    successes at the last kill."""
    runner = threading.Thread(target=load.run)
    runner.start()
    successes_at_last_kill = None
    for fraction in fractions + spare:
        if fraction in spare and sum(load.tally.unanswered.values()):
            break
        while (runner.is_alive()
               and load.tally.attempts < fraction * len(load.planned)):
            time.sleep(0.01)
        if fraction in spare and not runner.is_alive():
            break
        assert runner.is_alive(), 'the load ended before the kill'
        os.kill(random.choice(server.worker_pids()), signal.SIGKILL)
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


def _race(url, requests):
    """Send ``(method, path, body)`` requests from one thread each, all
    at once; return the responses in the same order."""
    barrier = threading.Barrier(len(requests))
    responses = [None] * len(requests)

    def send(index):
        client = placement_http.Client(url)
        client.checked('GET', '/')  # connect before the start line
        barrier.wait()
        responses[index] = client.request(*requests[index])
        client.close()

    threads = [threading.Thread(target=send, args=(i,))
               for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def _one_winner(responses, server):
    """Index of the only 204; all others lost on the consumer generation."""
    statuses = [r.status for r in responses]
    assert sorted(statuses) == [204] + [409] * (len(statuses) - 1), (
        responses, server.errors())
    assert {r.error_code for r in responses if r.status == 409} == {
        'placement.concurrent_update'}
    return statuses.index(204)


def _states(rp, project):
    """One distinct allocation per racer."""
    return [allocation_ledger.ConsumerState({rp: {'VCPU': amount}}, project)
            for amount in range(1, CLIENTS + 1)]


@pytest.fixture
def provider(server):
    client = placement_http.Client(server.url)
    yield allocation_load.create_provider(
        client, 'contended-%s' % uuid.uuid4().hex[:8], CLIENTS * 10)
    client.close()


def test_one_of_many_writers_of_the_same_consumer_wins(server, provider):
    client = placement_http.Client(server.url)
    consumer = str(uuid.uuid4())
    path = '/allocations/%s' % consumer
    for generation in (None, 1):
        states = _states(provider, 'contended')
        responses = _race(server.url, [
            ('PUT', path, allocation_ledger.allocation_body(s, generation))
            for s in states])

        winner = states[_one_winner(responses, server)]
        assert allocation_ledger.read_consumer(client, consumer) == winner
        usages = client.checked(
            'GET', '/resource_providers/%s/usages' % provider)['usages']
        assert usages == winner.allocations[provider]
    client.close()


def test_one_of_many_posts_over_the_same_consumers_wins(server, provider):
    """Racers name the same two consumers, half of them in reverse
    order, so writers that lock consumers in request order deadlock."""
    client = placement_http.Client(server.url)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    start = allocation_ledger.ConsumerState({provider: {'VCPU': 1}}, 'start')
    client.checked('POST', '/allocations', {
        c: allocation_ledger.allocation_body(start, None)
        for c in (first, second)}, expect=(204,))
    states = _states(provider, 'contended')
    orders = [(first, second), (second, first)]
    responses = _race(server.url, [
        ('POST', '/allocations',
         {c: allocation_ledger.allocation_body(state, 1)
          for c in orders[i % 2]})
        for i, state in enumerate(states)])

    winner = states[_one_winner(responses, server)]
    for consumer in (first, second):
        assert allocation_ledger.read_consumer(client, consumer) == winner
    client.close()


def test_one_of_many_deletes_of_the_same_consumer_wins(server, provider):
    """Parallel DELETEs (PostgreSQL runs them side by side) must not all
    answer 204: exactly one deletes, the others find nothing."""
    client = placement_http.Client(server.url)
    consumer = str(uuid.uuid4())
    path = '/allocations/%s' % consumer
    state = allocation_ledger.ConsumerState({provider: {'VCPU': 1}}, 'gone')
    client.checked('PUT', path, allocation_ledger.allocation_body(
        state, None), expect=(204,))

    responses = _race(server.url, [('DELETE', path, None)] * CLIENTS)

    statuses = sorted(r.status for r in responses)
    assert statuses == [204] + [404] * (CLIENTS - 1), (
        responses, server.errors())
    assert client.checked('GET', path)['allocations'] == {}
    client.close()


def test_posts_creating_the_same_new_consumers_race_without_5xx(
        server, provider):
    """Racers POST the same 60 new consumers (half of them in reverse
    order; on a database server all racers insert them at once) of a
    project and user nobody has used yet: one wins, the others are
    refused on the consumer generation, none fails."""
    client = placement_http.Client(server.url)
    consumers = [str(uuid.uuid4()) for _ in range(60)]
    project = 'race-%s' % uuid.uuid4().hex[:8]
    states = [allocation_ledger.ConsumerState({provider: {'VCPU': 1}},
                                              project)] * CLIENTS
    orders = [consumers, consumers[::-1]]
    responses = _race(server.url, [
        ('POST', '/allocations',
         {c: allocation_ledger.allocation_body(state, None)
          for c in orders[i % 2]})
        for i, state in enumerate(states)])

    _one_winner(responses, server)
    for consumer in consumers:
        assert allocation_ledger.read_consumer(
            client, consumer) == states[0]
    usages = client.checked('GET', '/usages?project_id=%s' % project)
    assert usages['usages'] == {
        'INSTANCE': {'VCPU': 60, 'consumer_count': 60}}
    client.close()


def test_posts_creating_the_same_project_and_user_all_succeed(
        server, provider):
    """Racers each create their own new consumers of one new project and
    user: every write lands, and the project and user exist once."""
    client = placement_http.Client(server.url)
    project = 'shared-%s' % uuid.uuid4().hex[:8]
    state = allocation_ledger.ConsumerState({provider: {'VCPU': 1}}, project)
    responses = _race(server.url, [
        ('POST', '/allocations',
         {str(uuid.uuid4()): allocation_ledger.allocation_body(state, None)
          for _ in range(5)})
        for _ in range(CLIENTS)])

    assert [r.status for r in responses] == [204] * CLIENTS, (
        responses, server.errors())
    usages = client.checked('GET', '/usages?project_id=%s' % project)
    assert usages['usages'] == {
        'INSTANCE': {'VCPU': 5 * CLIENTS, 'consumer_count': 5 * CLIENTS}}
    client.close()
