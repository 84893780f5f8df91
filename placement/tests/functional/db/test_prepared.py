"""Prepared statements answer as ``conn.execute`` does, and fail as it
does: wrapped errors, a lost connection invalidated and re-run."""

import datetime

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import api as db_api
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement.tests import fixtures

_RP = tables.resource_providers
_INV = tables.inventories


@pytest.fixture
def db():
    database, cleanup = fixtures.new_database()
    yield database
    cleanup()


def _provider(conn, uuid, name):
    created = datetime.datetime(2024, 2, 29, 23, 59, 58)
    result = conn.execute(sa.insert(_RP).values(
        uuid=uuid, name=name, generation=3, created_at=created))
    provider_id = result.inserted_primary_key[0]
    conn.execute(sa.insert(_INV).values(
        resource_provider_id=provider_id, resource_class_id=0, total=8,
        reserved=1, min_unit=1, max_unit=8, step_size=2,
        allocation_ratio=1.5, created_at=created))
    return provider_id


_JOINED = (sa.select(_RP.c.uuid, _RP.c.generation, _RP.c.created_at,
                     _RP.c.updated_at, _INV.c.allocation_ratio,
                     _INV.c.step_size)
           .join(_INV, _INV.c.resource_provider_id == _RP.c.id)
           # A bound literal next to a named parameter.
           .where(_RP.c.name == sa.bindparam('name'), _INV.c.total > 2)
           .order_by(_RP.c.id))


def test_rows_equal_those_of_execute(db):
    statement = prepared.Prepared(_JOINED)
    with db.transaction(write=True) as conn:
        _provider(conn, 'a' * 32, 'one')
        _provider(conn, 'b' * 32, 'two')
    with db.transaction(write=False) as conn:
        expected = [tuple(row) for row in
                    conn.execute(_JOINED, {'name': 'two'})]
        assert statement.rows(conn, name='two') == expected
        # Again, with the processors learnt, and with no row at all.
        assert statement.rows(conn, name='two') == expected
        assert statement.rows(conn, name='three') == []
        assert statement.first(conn, name='three') is None
    uuid, generation, created, updated, ratio, step = expected[0]
    assert (uuid, generation, updated, ratio, step) == (
        'b' * 32, 3, None, 1.5, 2)
    assert created == datetime.datetime(2024, 2, 29, 23, 59, 58)


def test_an_update_returns_what_it_changed(db):
    """DML with RETURNING: its rows are those it returns, its bound
    values (a datetime among them) processed as for a SELECT."""
    bump = prepared.Prepared(
        sa.update(_RP).where(_RP.c.name == sa.bindparam('name'))
        .values(generation=_RP.c.generation + 1,
                updated_at=sa.bindparam('now'))
        .returning(_RP.c.uuid, _RP.c.generation, _RP.c.updated_at))
    if not db.engine.dialect.update_returning:
        pytest.skip('no UPDATE ... RETURNING on this database')
    now = datetime.datetime(2025, 1, 2, 3, 4, 5)
    with db.transaction(write=True) as conn:
        _provider(conn, 'a' * 32, 'one')
        _provider(conn, 'b' * 32, 'two')
        assert bump.rows(conn, name='two', now=now) == [('b' * 32, 4, now)]
        assert bump.rows(conn, name='three', now=now) == []
    with db.transaction(write=False) as conn:
        assert conn.execute(sa.select(_RP.c.name, _RP.c.generation,
                                      _RP.c.updated_at)
                            .order_by(_RP.c.name)).all() == [
            ('one', 3, None), ('two', 4, now)]


def test_a_missing_parameter_is_refused(db):
    with db.transaction(write=False) as conn:
        with pytest.raises(KeyError):
            prepared.Prepared(_JOINED).rows(conn)


def test_expanding_parameters_are_refused_when_compiled(db):
    statement = prepared.Prepared(
        sa.select(_RP.c.id).where(_RP.c.id.in_([1, 2])))
    with db.transaction(write=False) as conn:
        with pytest.raises(ValueError):
            statement.rows(conn)


def test_run_prepares_few_values_and_expands_many(db):
    """Up to ``UP_TO`` values in every list ``build`` is given their
    numbers and the ``Prepared`` runs on the driver's cursor; beyond, it
    is given None for each list and SQLAlchemy runs the expanding
    statement. Either is built once per shape."""
    built = []

    def named(column, names, uuids=False):
        built.append((column, names, uuids))
        stmt = sa.select(_RP.c[column]).where(
            prepared.in_(_RP.c.name, 'names', names))
        if uuids is not False:
            stmt = stmt.where(prepared.in_(_RP.c.uuid, 'uuids', uuids))
        return stmt.where(_RP.c.generation == sa.bindparam('generation'))

    names = ['n%d' % index for index in range(prepared.UP_TO + 1)]
    with db.transaction(write=True) as conn:
        for index, name in enumerate(names):
            _provider(conn, '%032d' % index, name)
    executed = []

    def count(*args):
        executed.append(args[2])

    def run(conn, lists):
        return sorted(prepared.run(conn, named, lists, {'generation': 3},
                                   args=('name',)))

    sa.event.listen(db.engine, 'before_cursor_execute', count)
    try:
        with db.transaction(write=False) as conn:
            for _ in range(2):
                assert run(conn, {'names': names[:2]}) == [('n0',), ('n1',)]
                assert not executed
                assert run(conn, {'names': names}) == [
                    (name,) for name in names]
                assert len(executed) == 1
                del executed[:]
            # One list over ``UP_TO`` expands them all.
            assert run(conn, {'names': names,
                              'uuids': ['%032d' % 1]}) == [('n1',)]
    finally:
        sa.event.remove(db.engine, 'before_cursor_execute', count)
    assert built == [('name', 2, False), ('name', None, False),
                     ('name', None, None)]


def test_run_inserts_few_rows_prepared_and_many_at_once(db):
    def inserting(rows):
        insert = sa.insert(_RP)
        if rows is not None:
            insert = insert.values(prepared.rows_of(
                _RP, ('uuid', 'name', 'generation'), rows))
        return insert.returning(_RP.c.name)

    rows = [{'uuid': '%032d' % index, 'name': 'r%d' % index,
             'generation': 0} for index in range(prepared.UP_TO + 2)]
    with db.transaction(write=True) as conn:
        if not conn.dialect.insert_returning:
            pytest.skip('INSERT returns no rows here')
        few = prepared.run(conn, inserting, rows=rows[:1])
        many = prepared.run(conn, inserting, rows=rows[1:])
    assert list(few) == [('r0',)]
    assert sorted(many) == [('r%d' % index,) for index in range(1, 5)]


def test_driver_errors_leave_as_sqlalchemy_errors(db):
    statement = prepared.Prepared(
        sa.select(sa.column('x')).select_from(sa.table('nowhere')))

    @db_api.reader
    def broken(ctx):
        return statement.rows(ctx.conn)

    with pytest.raises(sa_exc.DBAPIError) as caught:
        broken(context.AdminContext(db))
    assert not caught.value.connection_invalidated
    assert not failures.is_unavailable(caught.value)


def test_driver_errors_reach_the_engines_error_listeners(db):
    """A ``handle_error`` listener may call an error a lost connection
    (``Database`` does for MySQL's broken triggers): a prepared
    statement's error is heard and invalidates the connection as that
    of ``conn.execute`` would."""
    statement = prepared.Prepared(
        sa.select(sa.column('x')).select_from(sa.table('nowhere')))
    heard = []

    def listener(context):
        heard.append(context.original_exception)
        context.is_disconnect = True

    sa.event.listen(db.engine, 'handle_error', listener)
    try:
        with pytest.raises(sa_exc.DBAPIError) as caught:
            with db.transaction(write=False) as conn:
                statement.rows(conn)
    finally:
        sa.event.remove(db.engine, 'handle_error', listener)
    assert heard[0] is caught.value.orig
    assert caught.value.connection_invalidated


def test_a_lost_connection_is_invalidated_and_the_reader_rerun(db):
    with db.transaction(write=True) as conn:
        _provider(conn, 'c' * 32, 'lost')
    statement = prepared.Prepared(_JOINED)
    attempts = []

    @db_api.reader
    def read(ctx):
        attempts.append(ctx.conn)
        if len(attempts) == 1:
            # The server went away under a pooled connection.
            _close_underneath(ctx.conn)
        return statement.rows(ctx.conn, name='lost')

    rows = read(context.AdminContext(db))
    assert [row[0] for row in rows] == ['c' * 32]
    # A reader is re-run only after an error that invalidated its
    # connection.
    assert len(attempts) == 2
    # And the dead connection left the pool: every later reader works.
    for _ in range(3):
        assert len(read(context.AdminContext(db))) == 1
    assert len(attempts) == 5


def _close_underneath(conn):
    """Make the connection unusable the way a dead server does, from
    outside it (so that SQLAlchemy does not see it happen)."""
    dialect = conn.dialect.name
    if dialect == 'sqlite':
        conn.connection.dbapi_connection.close()
        return
    ask, kill = (('SELECT pg_backend_pid()', 'SELECT pg_terminate_backend(%d)')
                 if dialect == 'postgresql'
                 else ('SELECT CONNECTION_ID()', 'KILL CONNECTION %d'))
    server_id = conn.exec_driver_sql(ask).scalar()
    with conn.engine.connect() as other:
        other.exec_driver_sql(kill % server_id)
        other.commit()


def _on_postgresql(db):
    if db.engine.dialect.name != 'postgresql':
        pytest.skip('server-side statements are prepared on PostgreSQL')


def _server_prepared(conn, name):
    """(generic plans, custom plans) the session ran statement ``name``
    with, or None if it is not prepared in the session."""
    row = conn.exec_driver_sql(
        'SELECT generic_plans + custom_plans FROM pg_prepared_statements '
        'WHERE name = %(name)s', {'name': name}).first()
    return None if row is None else row[0]


def test_postgresql_prepares_once_per_connection_and_reuses_it(db):
    _on_postgresql(db)
    with db.transaction(write=True) as conn:
        _provider(conn, 'd' * 32, 'four')
    statement = prepared.Prepared(_JOINED)
    with db.transaction(write=False) as conn:
        for _ in range(3):
            assert [row[0] for row in statement.rows(conn, name='four')] == [
                'd' * 32]
        name = statement._for(conn.dialect).name
        # Three executions of one statement prepared once.
        assert _server_prepared(conn, name) == 3


def test_a_prepared_statement_outlives_a_rolled_back_transaction(db):
    _on_postgresql(db)
    # One pooled connection: the second transaction gets the first's.
    single = db_api.Database(db.url, pool_size=1, max_overflow=0)
    statement = prepared.Prepared(_JOINED)
    backends = []

    class Failed(Exception):
        pass

    try:
        with pytest.raises(Failed):
            with single.transaction(write=True) as conn:
                backends.append(conn.exec_driver_sql(
                    'SELECT pg_backend_pid()').scalar())
                statement.rows(conn, name='none')  # prepared in this one
                raise Failed()
        with single.transaction(write=False) as conn:
            backends.append(conn.exec_driver_sql(
                'SELECT pg_backend_pid()').scalar())
            # The same session: its statement is still there, and is not
            # prepared a second time (which would fail).
            assert backends[0] == backends[1]
            assert statement.rows(conn, name='none') == []
            assert _server_prepared(
                conn, statement._for(conn.dialect).name) == 2
    finally:
        single.dispose()


def test_prepared_parameters_accept_what_plain_statements_accept(db):
    with db.transaction(write=True) as conn:
        _provider(conn, 'e' * 32, 'five')
    statement = prepared.Prepared(
        sa.select(sa.literal(7, sa.Integer).label('kind'), _RP.c.uuid)
        .where(_RP.c.name == sa.bindparam('name'),
               _RP.c.generation < sa.bindparam('below', type_=sa.Integer)))
    with db.transaction(write=False) as conn:
        # A selected literal keeps its type.
        assert list(statement.rows(conn, name='five', below=4)) == [
            (7, 'e' * 32)]
        # Longer than the column, larger than its type: nothing found,
        # as the plain statement finds nothing.
        assert not statement.rows(conn, name='x' * 300, below=2 ** 40)


@pytest.mark.parametrize('enabled', [True, False])
def test_the_option_decides_whether_postgresql_prepares(db, enabled):
    _on_postgresql(db)
    from placement import deploy
    conf = fixtures.new_conf(
        placement_database__connection=db.url.render_as_string(
            hide_password=False),
        placement_database__postgresql_prepared_statements=enabled)
    configured = deploy.create_database(conf)
    statement = prepared.Prepared(_JOINED)
    try:
        with configured.transaction(write=False) as conn:
            assert statement.rows(conn, name='none') == []
            name = statement._for(conn.dialect).name
            assert (_server_prepared(conn, name) == 1) is enabled
    finally:
        configured.dispose()
