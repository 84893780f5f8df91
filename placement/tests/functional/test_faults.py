"""The fault harness (``placement.tests.faults``): a short run under faults
on each server database, and proof that its checker reports each rule
broken on purpose.

The PostgreSQL and MySQL passes each start a server of their own kind
(PostgreSQL with logical decoding, MariaDB with a binary log); the
Galera run (three nodes of its own) runs when
``PLACEMENT_TEST_FAULTS_GALERA=1``, as ``make test-galera`` sets it.
"""

import collections
import itertools
import os
import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement.tests import database_servers
from placement.tests.faults import checker
from placement.tests.faults import history as history_mod
from placement.tests.faults import run as run_mod
from placement.tests.faults import topology
from placement.tests import fixtures
from placement.tests import placement_http

GALERA_ENV = 'PLACEMENT_TEST_FAULTS_GALERA'
#: Writes and faults of each kind of the short runs.
OPERATIONS = 300
FAULTS_PER_KIND = 2


def _database():
    if database_servers.for_this_pass() is None:
        return None
    return {'postgresql': 'postgresql',
            'mysql': 'mariadb'}[fixtures.backend_name()]


DATABASE = _database()
needs_server = pytest.mark.skipif(
    DATABASE is None, reason='runs in the PostgreSQL and MySQL passes')


def _short_run(database, tmp_path):
    with run_mod.FaultRun(database, tmp_path, log=print) as fault_run:
        reached = fault_run.load(OPERATIONS, FAULTS_PER_KIND, seconds=300)
        result = fault_run.result(reached)
    text = result.text()
    print(text)
    assert result.ok, text
    outcomes = collections.Counter(
        entry.outcome for entry in fault_run.history.writes())
    # Contended (writes refused), and the faults were felt (outcomes
    # unknown): the run proves something.
    assert all(outcomes[outcome] for outcome in (
        history_mod.ACK, history_mod.REFUSED, history_mod.UNKNOWN)), text


@needs_server
def test_short_run_under_faults(tmp_path):
    _short_run(DATABASE, tmp_path)


@pytest.mark.skipif(not os.environ.get(GALERA_ENV),
                    reason='make test-galera sets %s=1' % GALERA_ENV)
def test_short_galera_multi_writer_run_under_faults(tmp_path):
    if not topology.Galera.installed():
        message = 'mariadb-server, galera-4 or rsync is not installed'
        if os.environ.get('REQUIRE_DB') == '1':
            pytest.fail(message)
        pytest.skip(message)
    _short_run('galera', tmp_path)


# -- the checker, proven on purpose ------------------------------------------

@pytest.fixture(scope='module')
def clean_run(tmp_path_factory):
    """A short load without faults whose check is clean; each test below
    then breaks one rule (in the database, or in a copy of the
    history)."""
    with run_mod.FaultRun(DATABASE, tmp_path_factory.mktemp('faults'),
                          seed=7) as fault_run:
        fault_run.load(150, 0, seconds=120, kinds=())
        report = fault_run.check()
        assert report.ok, report.text()
        yield fault_run


def _copy(history):
    copied = history_mod.History()
    copied.origin = history.origin
    copied.entries = list(history.entries)
    return copied


#: Ids of the requests the tests make up: unique across tests, since
#: the user ids they name stay in the database.
_FAKE_IDS = itertools.count(10 ** 6)


def _fake(history, kind, method, path, status, intent=None,
          retry_after=None):
    """A request the clients never sent, answered ``status``."""
    entry = history.begin(99, kind, method, path, 'sabotage')
    entry.id = next(_FAKE_IDS)
    if intent is not None:
        entry.intent = intent(entry)
    history.finish(entry, placement_http.Response(
        status, failure=None if status else 'timeout'), retry_after)
    return entry


def _sql(fault_run, *statements):
    """Run ``statements`` (callables of a connection) in one
    transaction."""
    engine = sa.create_engine(fault_run.topology.final_url())
    try:
        with engine.begin() as conn:
            return [statement(conn) for statement in statements]
    finally:
        engine.dispose()


def _provider_id(conn, rp_uuid):
    return conn.execute(sa.select(tables.resource_providers.c.id).where(
        tables.resource_providers.c.uuid == rp_uuid)).scalar_one()


def _write_consumer(conn, consumer, user, rp_uuid, used):
    """What an allocation write of ``user`` stores, written by hand."""
    template = conn.execute(sa.select(tables.consumers).limit(1)).first()
    user_id = conn.execute(tables.users.insert().values(
        external_id=user)).inserted_primary_key[0]
    conn.execute(tables.consumers.insert().values(
        uuid=consumer, project_id=template.project_id, user_id=user_id,
        generation=1, consumer_type_id=template.consumer_type_id))
    conn.execute(tables.allocations.insert().values(
        resource_provider_id=_provider_id(conn, rp_uuid),
        consumer_id=consumer, resource_class_id=0, used=used))


def _anomalies(report, rule):
    return '\n'.join(report.anomalies[rule])


@needs_server
def test_an_over_commit_written_with_sql_is_reported(clean_run):
    rp = clean_run.workload.providers[0]
    consumer = str(uuid.uuid4())
    _sql(clean_run, lambda conn: conn.execute(
        tables.allocations.insert().values(
            resource_provider_id=_provider_id(conn, rp),
            consumer_id=consumer, resource_class_id=0, used=1000)))
    report = clean_run.check()
    assert rp in _anomalies(report, 'a'), report.text()
    assert 'capacity' in _anomalies(report, 'a')
    assert consumer in _anomalies(report, 'b'), report.text()


@needs_server
def test_a_deleted_acknowledged_allocation_is_reported(clean_run):
    acknowledged = {
        consumer for entry in clean_run.history.writes()
        if entry.outcome == history_mod.ACK
        for consumer in entry.intent.get('consumers', ())}
    engine = sa.create_engine(clean_run.topology.final_url())
    try:
        with engine.connect() as conn:
            held = {row[0] for row in conn.execute(
                sa.select(tables.allocations.c.consumer_id))}
    finally:
        engine.dispose()
    victim = sorted(held & acknowledged)[0]
    _sql(clean_run, lambda conn: conn.execute(
        tables.allocations.delete().where(
            tables.allocations.c.consumer_id == victim)))
    report = clean_run.check()
    found = _anomalies(report, 'b')
    assert 'changed consumer %s to {}' % victim in found, report.text()
    assert 'no request explains it' in found


@needs_server
def test_a_half_applied_post_is_reported(clean_run):
    history = _copy(clean_run.history)
    rp = clean_run.workload.providers[1]
    written, lost = str(uuid.uuid4()), str(uuid.uuid4())
    post = _fake(history, 'move', 'POST', '/allocations', None,
                 lambda entry: {'consumers': {
                     consumer: {'user': checker.user_of(entry.id),
                                'allocations': {rp: 1}, 'generation': None}
                     for consumer in (written, lost)}})
    assert post.outcome == history_mod.UNKNOWN
    _sql(clean_run, lambda conn: _write_consumer(
        conn, written, checker.user_of(post.id), rp, 1))
    report = clean_run.check(history)
    found = _anomalies(report, 'd')
    assert ('applied 1 of the 2 consumers of the write: consumer %s '
            'holds {}' % lost) in found, report.text()
    assert post.describe() in found


@needs_server
def test_a_refused_write_that_left_something_is_reported(clean_run):
    history = _copy(clean_run.history)
    rp = clean_run.workload.providers[2]
    consumer = str(uuid.uuid4())
    refused = _fake(history, 'put', 'PUT', '/allocations/%s' % consumer,
                    409, lambda entry: {'consumers': {consumer: {
                        'user': checker.user_of(entry.id),
                        'allocations': {rp: 1}, 'generation': None}}})
    _sql(clean_run, lambda conn: _write_consumer(
        conn, consumer, checker.user_of(refused.id), rp, 1))
    report = clean_run.check(history)
    assert refused.describe() in _anomalies(report, 'c'), report.text()


@needs_server
def test_a_lost_acknowledged_write_is_reported(clean_run):
    history = _copy(clean_run.history)
    consumer = str(uuid.uuid4())
    acked = _fake(history, 'put', 'PUT', '/allocations/%s' % consumer,
                  204, lambda entry: {'consumers': {consumer: {
                      'user': checker.user_of(entry.id),
                      'allocations': {clean_run.workload.providers[0]: 1},
                      'generation': None}}})
    report = clean_run.check(history)
    found = _anomalies(report, 'b')
    assert 'acknowledged write not committed' in found, report.text()
    assert acked.describe() in found


@needs_server
def test_a_generation_going_backwards_is_reported(clean_run):
    rp = clean_run.workload.providers[1]
    _sql(clean_run, lambda conn: conn.execute(
        tables.resource_providers.update()
        .where(tables.resource_providers.c.uuid == rp)
        .values(generation=tables.resource_providers.c.generation - 1)))
    report = clean_run.check()
    assert 'moves provider %s from generation' % rp in _anomalies(
        report, 'e'), report.text()


@needs_server
def test_a_stale_read_is_reported(clean_run):
    history = _copy(clean_run.history)
    rp = clean_run.workload.providers[0]
    for generation in (10 ** 6 + 7, 10 ** 6 + 5):
        read = _fake(history, 'read', 'GET', '/resource_providers/%s' % rp,
                     200)
        read.observed = [(('provider', rp), generation)]
    report = clean_run.check(history)
    assert ('provider %s read at generation 1000005 after generation '
            '1000007 was read' % rp) in _anomalies(report, 'e'), report.text()


@needs_server
def test_two_acknowledged_writes_of_one_generation_are_reported(clean_run):
    history = _copy(clean_run.history)
    race = [entry for entry in history.writes()
            if entry.kind == 'race' and entry.outcome == history_mod.ACK][0]
    consumer, = race.intent['consumers']
    generation = race.intent['consumers'][consumer]['generation']
    _fake(history, 'race', 'PUT', race.path, 204, lambda entry: {
        'consumers': {consumer: {'user': checker.user_of(entry.id),
                                 'allocations': {}, 'generation':
                                     generation}}})
    report = clean_run.check(history)
    assert ('2 acknowledged writes sent consumer %s generation %s'
            % (consumer, generation)) in _anomalies(report, 'e'), (
                report.text())


@needs_server
def test_a_500_and_a_503_without_retry_after_are_reported(clean_run):
    history = _copy(clean_run.history)
    error = _fake(history, 'read', 'GET', '/usages', 500)
    unavailable = _fake(history, 'read', 'GET', '/usages', 503)
    fine = _fake(history, 'read', 'GET', '/usages', 503, retry_after='1')
    found = _anomalies(clean_run.check(history), 'f')
    assert error.describe() in found
    assert unavailable.describe() in found
    assert '503 without Retry-After' in found
    assert fine.describe() not in found
