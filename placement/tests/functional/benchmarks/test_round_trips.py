"""Round trips of each request of the cloud mix stay within budget.

Counted at the driver (``benchmarks.round_trips``), BEGIN and COMMIT
included, on the test database (SQLite, PostgreSQL or MariaDB 10.5 and
later): a round trip that comes back to a write or read path fails
here.
"""

import pytest

from benchmarks import round_trips
from benchmarks.toolkit import mix_requests
from placement.tests import fixtures

#: Most round trips per request on SQLite, where every request has its
#: BEGIN and COMMIT. Not candidates or the first sharing listing: how
#: many their index refresh takes depends on what the writes before them
#: changed (the listing after it only asks whether anything did).
UNBUDGETED = {'GET candidates', 'GET sharing'}
SQLITE_BUDGETS = {
    'GET in_tree': 3, 'GET inventories': 3, 'GET traits': 3,
    'GET aggregates': 4, 'GET sharing again': 3, 'PUT inventories': 5,
    'PUT allocations': 8, 'GET allocations': 3,
    'POST allocations': 9, 'DELETE allocations': 4,
    'DELETE allocations (instance)': 4, 'GET usages': 3,
    'GET provider usages': 3}
#: On PostgreSQL readers run in autocommit: one statement each, no BEGIN
#: or COMMIT. A writer's BEGIN is a round trip of its own (psycopg2).
POSTGRESQL_BUDGETS = {
    'GET in_tree': 1, 'GET inventories': 1, 'GET traits': 1,
    'GET aggregates': 1, 'GET sharing again': 1, 'PUT inventories': 5,
    'PUT allocations': 8, 'GET allocations': 1,
    'POST allocations': 9, 'DELETE allocations': 4,
    'DELETE allocations (instance)': 4, 'GET usages': 1,
    'GET provider usages': 1}
#: On MariaDB (PyMySQL) connections are in autocommit mode: a reader is
#: its statements alone, a writer sends BEGIN and COMMIT; UPDATE returns
#: no rows, so a write's provider lock and bump are two statements.
MYSQL_BUDGETS = {
    'GET in_tree': 1, 'GET inventories': 1, 'GET traits': 1,
    'GET aggregates': 1, 'GET sharing again': 1, 'PUT inventories': 6,
    'PUT allocations': 9, 'GET allocations': 1,
    'POST allocations': 10, 'DELETE allocations': 4,
    'DELETE allocations (instance)': 4, 'GET usages': 1,
    'GET provider usages': 1}
BUDGETS = {'sqlite': SQLITE_BUDGETS, 'postgresql': POSTGRESQL_BUDGETS,
           'mysql': MYSQL_BUDGETS}


@pytest.fixture
def cloud(tmp_path, unchecked_followers):
    backend = fixtures.backend_name()
    if backend not in BUDGETS:
        pytest.skip('round trips are counted on SQLite, PostgreSQL and '
                    'MySQL')
    app = round_trips.build(fixtures.fresh_database_url(tmp_path,
                                                        'round_trips'))
    return backend, mix_requests.Cloud(app, 3, 2)


def test_every_request_of_the_mix_stays_within_its_budget(cloud):
    backend, cloud = cloud
    # The first round also loads the candidates index and creates the
    # MIGRATION consumer type.
    round_trips.measure(cloud, 1)
    found = round_trips.measure(cloud, 2)
    counts = {kind: max(len(sample[0]) for sample in samples)
              for kind, samples in found.items()}
    assert counts.keys() == BUDGETS[backend].keys() | UNBUDGETED
    over = {kind: (count, BUDGETS[backend][kind])
            for kind, count in counts.items()
            if count > BUDGETS[backend].get(kind, count)}
    assert not over, over
    # The counter sees the transaction's edges where there are some.
    assert found['PUT inventories'][0][0][-1][0] == 'COMMIT'
    assert all(cpu > 0 for samples in found.values()
               for _, _, cpu in samples)


@pytest.fixture
def pg_cloud(cloud):
    """The cloud, on PostgreSQL only: statements are prepared on the
    server there."""
    backend, cloud = cloud
    if backend != 'postgresql':
        pytest.skip('statements are prepared on the server on PostgreSQL')
    return cloud


def _sent(statements):
    """The statements of one request other than its transaction's edges
    and the PREPAREs (a statement is prepared once per connection)."""
    return [sql for sql, _seconds in statements
            if sql not in ('BEGIN (implicit)', 'COMMIT')
            and not sql.startswith('PREPARE ')]


def test_postgresql_plans_the_consumer_allocations_read_once(pg_cloud):
    """GET /allocations/{consumer} joins six tables: planned on every
    call, it cost the server ten times what running it did."""
    found = round_trips.measure(pg_cloud, 2)
    sent = [sql for statements, _, _ in found['GET allocations']
            for sql, _seconds in statements]
    assert sent and all(sql.startswith(('PREPARE ', 'EXECUTE '))
                        for sql in sent), sent


def test_postgresql_plans_put_inventories_reads_once(pg_cloud):
    """The provider's lock and bump and the read of its inventory rows:
    the statements of the most frequent write of the mix other than the
    rows' update are prepared on the server."""
    found = round_trips.measure(pg_cloud, 2)
    for statements, _, _ in found['PUT inventories']:
        sent = _sent(statements)
        planned = [sql for sql in sent if not sql.startswith('EXECUTE ')]
        assert len(sent) == 3 and len(planned) == 1, sent
        assert 'UPDATE inventories' in planned[0], sent


def test_postgresql_plans_allocation_writes_once(pg_cloud):
    """Every statement of PUT and POST allocations is prepared on the
    server: the lookup of the project, user, type and consumer ids, the
    insert of a new consumer, the provider lock, the consumers'
    compare-and-set, the delete of the old rows, the inventory read and
    the insert of the new rows (planning each cost more than running
    it)."""
    round_trips.measure(pg_cloud, 1)  # creates the MIGRATION consumer type
    found = round_trips.measure(pg_cloud, 2)
    for kind in ('PUT allocations', 'POST allocations'):
        for statements, _, _ in found[kind]:
            sent = _sent(statements)
            assert sent and all(sql.startswith('EXECUTE ')
                                for sql in sent), statements


def test_postgresql_plans_delete_allocations_once(pg_cloud):
    """Both statements of DELETE /allocations/{consumer} are prepared on
    the server."""
    found = round_trips.measure(pg_cloud, 2)
    for statements, _, _ in found['DELETE allocations']:
        sent = _sent(statements)
        assert len(sent) == 2 and all(
            sql.startswith('EXECUTE ') for sql in sent), sent


def test_the_report_lists_every_kind_and_the_statements_asked_for(cloud):
    _backend, cloud = cloud
    found = round_trips.measure(cloud, 1)
    lines = round_trips.report(found, ['DELETE allocations'])
    assert len(lines) == 1 + len(found) + 2 + len(
        found['DELETE allocations'][0][0])
    assert lines[-1].split('ms  ', 1)[1].startswith('COMMIT')
