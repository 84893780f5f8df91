"""Readers on the pooled driver connection (``ReaderConnection``), on
SQLite, on PostgreSQL through psycopg2 and on MariaDB through PyMySQL (in
the PostgreSQL and MySQL passes), answer and fail as readers on a
SQLAlchemy Connection do."""

import logging
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import api as db_api
from placement.db import connections
from placement.db import failures
from placement.db import prepared
from placement.db import pymysql_connection
from placement import exception
from placement.tests import fixtures
from placement.tests import gunicorn_server

_T = sa.Table('t', sa.MetaData(), sa.Column('v', sa.Integer))
_VALUES = prepared.Prepared(sa.select(_T.c.v).order_by(_T.c.v))


def _url(kind, tmp_path):
    if kind == 'memory':
        return 'sqlite://'
    if kind == 'file':
        return 'sqlite:///%s' % (tmp_path / 'reader.sqlite')
    if fixtures.backend_name() != kind:
        pytest.skip('the %s pass only' % kind)
    return fixtures.create_server_database(fixtures.server_url(), 'reader')


@pytest.fixture(params=['memory', 'file', 'postgresql', 'mysql'])
def db(request, tmp_path):
    database = db_api.Database(_url(request.param, tmp_path))
    with database.transaction(write=True) as conn:
        conn.exec_driver_sql('CREATE TABLE t (v INTEGER)')
        conn.exec_driver_sql('INSERT INTO t VALUES (1), (2)')
    yield database
    database.dispose()


def _values(conn):
    return [row[0] for row in conn.execute(sa.select(_T.c.v).order_by(
        _T.c.v))]


def _assert_nothing_left_behind(db):
    # The connection this thread keeps for its next read, given back,
    # must be as clean as any other the pool holds.
    db._give_back_kept(threading.get_native_id())
    if not db.in_memory:  # a static pool does not count
        assert db.engine.pool.checkedout() == 0
    with db.engine.connect() as conn:
        dbapi_conn = conn.connection.dbapi_connection
        if db.psycopg2:
            assert dbapi_conn.autocommit is False
            assert dbapi_conn.status == 1  # psycopg2's STATUS_READY
        elif db.pymysql:
            assert pymysql_connection.idle(dbapi_conn)
        else:
            assert not dbapi_conn.in_transaction
        assert connections.BEGUN not in conn.connection.info


def test_a_reader_answers_as_a_connection_does(db):
    with db.transaction(write=True) as conn:
        expected = _values(conn)
    with db.transaction(write=False) as conn:
        assert isinstance(conn, connections.ReaderConnection)
        assert [row[0] for row in _VALUES.rows(conn)] == expected
        assert conn.dialect is db.engine.dialect
        # Anything else turns it into a Connection in the same
        # transaction.
        assert _values(conn) == expected
        assert conn.in_transaction()
        assert [row[0] for row in _VALUES.rows(conn)] == expected
    _assert_nothing_left_behind(db)


def _snapshots(db, upgraded):
    """What a reader sees before and after a row committed by another
    connection during it, then what the next reader sees."""
    other = sa.create_engine(db.url)
    seen = []
    try:
        with db.transaction(write=False) as conn:
            seen.append([row[0] for row in _VALUES.rows(conn)])
            with other.begin() as writer:
                writer.exec_driver_sql('INSERT INTO t VALUES (3)')
            seen.append([row[0] for row in _VALUES.rows(conn)])
            if upgraded:
                seen.append(_values(conn))
        with db.transaction(write=False) as conn:
            seen.append([row[0] for row in _VALUES.rows(conn)])
        with db.transaction(write=True) as conn:
            conn.exec_driver_sql('DELETE FROM t WHERE v = 3')
    finally:
        other.dispose()
    return seen


@pytest.mark.parametrize('upgraded', [False, True])
def test_a_reader_sees_what_a_connection_sees(db, upgraded):
    if db.in_memory:
        pytest.skip('one connection: no concurrent writer')
    seen = _snapshots(db, upgraded)
    _assert_nothing_left_behind(db)
    db.light_reads = False
    assert _snapshots(db, upgraded) == seen
    if db.psycopg2 or db.pymysql:
        # Every statement its own snapshot (READ COMMITTED, autocommit).
        assert seen[1:] == [[1, 2, 3]] * (len(seen) - 1)
    else:
        # The transaction begun on the driver holds its snapshot, as
        # the Connection that takes it over does (a second BEGIN would
        # fail, none would see the new row).
        assert seen[:-1] == [[1, 2]] * (len(seen) - 1)
        assert seen[-1] == [1, 2, 3]


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
    expected = (sa_exc.OperationalError if db.dialect == 'sqlite'
                else sa_exc.ProgrammingError)
    with pytest.raises(expected) as caught:
        with db.transaction(write=False) as conn:
            broken.rows(conn)
    assert not caught.value.connection_invalidated
    _assert_nothing_left_behind(db)


def _lose(dbapi_conn):
    """Leave ``dbapi_conn`` as its driver does when it finds the server
    gone (PyMySQL's close would send a goodbye, then refuse a second
    close when the pool discards it)."""
    if hasattr(dbapi_conn, '_force_close'):  # PyMySQL's
        dbapi_conn._force_close()
    else:
        dbapi_conn.close()


@pytest.mark.parametrize('kind', ['file', 'postgresql', 'mysql'])
@pytest.mark.parametrize('when', ['before a statement', 'before commit'])
def test_a_lost_connection_is_invalidated_and_the_reader_rerun(
        tmp_path, caplog, when, kind):
    db = db_api.Database(_url(kind, tmp_path))
    try:
        with db.transaction(write=True) as conn:
            conn.exec_driver_sql('CREATE TABLE t (v INTEGER)')
            conn.exec_driver_sql('INSERT INTO t VALUES (1)')
        attempts = []

        @db_api.reader
        def read(ctx):
            attempts.append(ctx.conn)
            if len(attempts) == 1 and when == 'before a statement':
                _lose(ctx.conn.connection.dbapi_connection)
            rows = _VALUES.rows(ctx.conn)
            if len(attempts) == 1 and when == 'before commit':
                _lose(ctx.conn.connection.dbapi_connection)
            return rows

        assert list(read(context.AdminContext(db))) == [(1,)]
        if (db.psycopg2 or db.pymysql) and when == 'before commit':
            # Nothing to commit in autocommit: the rows read stand, and
            # the connection is discarded, not handed back.
            assert len(attempts) == 1
        else:
            assert len(attempts) == 2
        _assert_nothing_left_behind(db)
        # The pool had no connection to reset, so nothing to complain of.
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
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
        assert failures.is_unavailable(caught.value)

        @db_api.reader
        def read(ctx):
            return _VALUES.rows(ctx.conn)

        with pytest.raises(exception.DatabaseUnavailable):
            read(context.AdminContext(db))
    finally:
        db.dispose()


# -- the connection a thread keeps between its reads --------------------------

def _driver_connection(db):
    with db.transaction(write=False) as conn:
        _VALUES.rows(conn)
        return conn.connection.dbapi_connection


@pytest.fixture
def pooled_db(db):
    if db.in_memory:
        pytest.skip('one connection shared by every thread: none is kept')
    return db


def test_a_thread_reads_again_on_the_connection_it_kept(pooled_db):
    db = pooled_db
    first = _driver_connection(db)
    assert db.engine.pool.checkedout() == 1  # kept, not in the pool
    assert _driver_connection(db) is first
    others = []
    thread = threading.Thread(
        target=lambda: others.append(_driver_connection(db)))
    thread.start()
    thread.join()
    assert others[0] is not first  # another thread keeps its own
    assert db.engine.pool.checkedout() == 2
    # A thread that stopped reading has its connection given back by the
    # next read that ends a while later.
    db._swept = -float('inf')
    db._kept[thread.native_id] = (db._kept[thread.native_id][0],
                                  -float('inf'))
    assert _driver_connection(db) is first
    assert db.engine.pool.checkedout() == 1
    _assert_nothing_left_behind(db)


_GREEN_READERS = textwrap.dedent("""
    import eventlet
    eventlet.monkey_patch()
    import sys
    import sqlalchemy as sa
    from placement.db import api as db_api
    from placement.db import prepared

    db = db_api.Database(sys.argv[1], pool_size=2, max_overflow=0,
                         pool_timeout=5)
    values = prepared.Prepared(sa.select(sa.column('v')).select_from(
        sa.table('t')))

    def reader(_):
        for _round in range(3):
            with db.transaction(write=False) as conn:
                values.rows(conn)
            eventlet.sleep(0.01)  # idle between requests, as on a socket

    with eventlet.Timeout(60):
        list(eventlet.GreenPool(8).imap(reader, range(8)))
    print(db.engine.pool.checkedout())
    """)


def test_green_threads_keep_one_connection_per_thread(pooled_db):
    """Under gevent or eventlet (a gunicorn gevent worker serves every
    open connection in a green thread of its own) a connection is kept
    per thread of the system: one kept by each green thread would fill a
    small pool (eight kept on SQLite; a timeout on PostgreSQL, with room
    for two) and make other requests wait for it, then fail."""
    url = pooled_db.url.render_as_string(hide_password=False)
    result = subprocess.run(
        [sys.executable, '-W', 'ignore', '-c', _GREEN_READERS, url],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=gunicorn_server.CHECKOUT))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == '1'


def test_a_writer_gives_the_kept_connection_back_first(pooled_db):
    db = pooled_db
    kept = _driver_connection(db)
    with db.transaction(write=True) as conn:
        # The thread holds one connection at a time: its writer's.
        assert db.engine.pool.checkedout() == 1
        assert db._kept == {}
        conn.exec_driver_sql('INSERT INTO t VALUES (3)')
    assert _driver_connection(db) is kept  # the pool handed it back
    _assert_nothing_left_behind(db)


def test_a_kept_connection_goes_back_to_the_pool_after_a_while(
        pooled_db, monkeypatch):
    db = pooled_db
    first = _driver_connection(db)
    checkouts = []
    sa.event.listen(db.engine, 'checkout',
                    lambda *args: checkouts.append(args))
    _driver_connection(db)
    assert checkouts == []  # kept: the pool was not asked
    monkeypatch.setattr(db_api, 'KEEP_READER_SECONDS', 0.0)
    assert _driver_connection(db) is first  # back to the pool and out
    assert len(checkouts) == 1  # so the pool's checks ran again
    _assert_nothing_left_behind(db)


def test_a_failed_read_gives_its_connection_back(pooled_db):
    db = pooled_db
    with pytest.raises(ZeroDivisionError):
        with db.transaction(write=False) as conn:
            _VALUES.rows(conn)
            1 / 0
    assert db._kept == {}
    assert db.engine.pool.checkedout() == 0
    _assert_nothing_left_behind(db)


def test_a_forked_child_never_reads_on_its_parents_kept_connection(
        pooled_db):
    db = pooled_db
    inherited = _driver_connection(db)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: read, say on which connection, and leave
        answer = b'failed'
        try:
            own = _driver_connection(db)
            answer = b'own' if own is not inherited else b'inherited'
        finally:
            os.write(write, answer)
            os._exit(0)
    os.close(write)
    try:
        told = os.read(read, 64)
    finally:
        os.close(read)
        os.waitpid(child, 0)
    assert told == b'own'
    # The parent's connection was left alone: it reads on it still.
    assert _driver_connection(db) is inherited
    _assert_nothing_left_behind(db)


def test_a_kept_connection_the_server_dropped_is_replaced(pooled_db):
    db = pooled_db
    if db.dialect == 'sqlite':
        pytest.skip('a database server to drop the connection')
    kept = _driver_connection(db)
    with db.engine.connect() as other:
        if db.psycopg2:
            other.exec_driver_sql('SELECT pg_terminate_backend(%d)'
                                  % kept.get_backend_pid())
        else:
            other.exec_driver_sql('KILL %d' % kept.thread_id())
    attempts = []

    @db_api.reader
    def read(ctx):
        attempts.append(ctx.conn.connection.dbapi_connection)
        return _VALUES.rows(ctx.conn)

    assert list(read(context.AdminContext(db))) == [(1,), (2,)]
    assert attempts[0] is kept and attempts[-1] is not kept
    _assert_nothing_left_behind(db)
