"""SQLite readers on the pooled driver connection (``ReaderConnection``)
answer and fail as readers on a SQLAlchemy Connection do."""

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement import context
from placement import exception
from placement.db import api as db_api
from placement.db import prepared

_T = sa.Table('t', sa.MetaData(), sa.Column('v', sa.Integer))
_VALUES = prepared.Prepared(sa.select(_T.c.v).order_by(_T.c.v))


@pytest.fixture(params=['memory', 'file'])
def db(request, tmp_path):
    url = ('sqlite://' if request.param == 'memory'
           else 'sqlite:///%s' % (tmp_path / 'reader.sqlite'))
    database = db_api.Database(url)
    with database.transaction(write=True) as conn:
        conn.exec_driver_sql('CREATE TABLE t (v INTEGER)')
        conn.exec_driver_sql('INSERT INTO t VALUES (1), (2)')
    yield database
    database.dispose()


def _values(conn):
    return [row[0] for row in conn.execute(sa.select(_T.c.v).order_by(
        _T.c.v))]


def _assert_nothing_left_behind(db):
    if not db.in_memory:  # a static pool does not count
        assert db.engine.pool.checkedout() == 0
    with db.engine.connect() as conn:
        assert not conn.connection.dbapi_connection.in_transaction
        assert db_api._BEGUN not in conn.connection.info


def test_a_reader_answers_as_a_connection_does(db):
    with db.transaction(write=True) as conn:
        expected = _values(conn)
    with db.transaction(write=False) as conn:
        assert isinstance(conn, db_api.ReaderConnection)
        assert [row[0] for row in _VALUES.rows(conn)] == expected
        assert conn.dialect is db.engine.dialect
        # Anything else turns it into a Connection in the same
        # transaction.
        assert _values(conn) == expected
        assert conn.in_transaction()
        assert [row[0] for row in _VALUES.rows(conn)] == expected
    _assert_nothing_left_behind(db)


@pytest.mark.parametrize('upgraded', [False, True])
def test_a_reader_keeps_one_snapshot(db, upgraded):
    if db.in_memory:
        pytest.skip('one connection: no concurrent writer')
    other = sa.create_engine(db.url)
    try:
        with db.transaction(write=False) as conn:
            assert [row[0] for row in _VALUES.rows(conn)] == [1, 2]
            with other.begin() as writer:
                writer.exec_driver_sql('INSERT INTO t VALUES (3)')
            # The transaction begun on the driver holds its snapshot, as
            # the Connection that takes it over does (a second BEGIN
            # would fail, none would see the new row).
            assert [row[0] for row in _VALUES.rows(conn)] == [1, 2]
            if upgraded:
                assert _values(conn) == [1, 2]
        with db.transaction(write=False) as conn:
            assert [row[0] for row in _VALUES.rows(conn)] == [1, 2, 3]
    finally:
        other.dispose()
    _assert_nothing_left_behind(db)


@pytest.mark.parametrize('upgraded', [False, True])
def test_an_error_rolls_back_and_gives_the_connection_back(db, upgraded):
    with pytest.raises(ZeroDivisionError):
        with db.transaction(write=False) as conn:
            _VALUES.rows(conn)
            if upgraded:
                _values(conn)
            1 / 0
    _assert_nothing_left_behind(db)
    with db.transaction(write=False) as conn:
        assert [row[0] for row in _VALUES.rows(conn)] == [1, 2]


def test_a_statement_error_is_wrapped_as_execute_wraps_it(db):
    broken = prepared.Prepared(sa.select(sa.column('missing')).select_from(
        sa.table('no_such_table')))
    with pytest.raises(sa_exc.OperationalError) as caught:
        with db.transaction(write=False) as conn:
            broken.rows(conn)
    assert not caught.value.connection_invalidated
    _assert_nothing_left_behind(db)


@pytest.mark.parametrize('when', ['before a statement', 'before commit'])
def test_a_lost_connection_is_invalidated_and_the_reader_rerun(tmp_path,
                                                               when):
    db = db_api.Database('sqlite:///%s' % (tmp_path / 'lost.sqlite'))
    try:
        with db.transaction(write=True) as conn:
            conn.exec_driver_sql('CREATE TABLE t (v INTEGER)')
            conn.exec_driver_sql('INSERT INTO t VALUES (1)')
        attempts = []

        @db_api.reader
        def read(ctx):
            attempts.append(ctx.conn)
            if len(attempts) == 1 and when == 'before a statement':
                ctx.conn.connection.dbapi_connection.close()
            rows = _VALUES.rows(ctx.conn)
            if len(attempts) == 1 and when == 'before commit':
                ctx.conn.connection.dbapi_connection.close()
            return rows

        assert read(context.AdminContext(db)) == [(1,)]
        assert len(attempts) == 2
        _assert_nothing_left_behind(db)
    finally:
        db.dispose()


def test_statement_logging_keeps_the_connection(tmp_path):
    db = db_api.Database('sqlite:///%s' % (tmp_path / 'echo.sqlite'),
                         echo=True)
    try:
        with db.transaction(write=False) as conn:
            assert isinstance(conn, sa.engine.Connection)
    finally:
        db.dispose()


def test_writers_keep_the_connection(db):
    with db.transaction(write=True) as conn:
        assert isinstance(conn, sa.engine.Connection)


def test_a_database_that_cannot_be_opened_fails_as_a_connection_does(
        tmp_path):
    db = db_api.Database('sqlite:///%s' % (tmp_path / 'missing' / 'x.db'))
    try:
        with pytest.raises(sa_exc.OperationalError) as caught:
            with db.transaction(write=False):
                pass
        assert db_api.is_unavailable(caught.value)

        @db_api.reader
        def read(ctx):
            return _VALUES.rows(ctx.conn)

        with pytest.raises(exception.DatabaseUnavailable):
            read(context.AdminContext(db))
    finally:
        db.dispose()
