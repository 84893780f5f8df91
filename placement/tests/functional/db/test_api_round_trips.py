"""Round trips the transaction decorators add: none around a reader on
PostgreSQL (see api-ref/behaviour-choices.rst, 'Reads on PostgreSQL')."""

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import connections
from placement.db import prepared
from placement.db import tables
from placement.tests import fixtures

ON_POSTGRESQL = fixtures.backend_name() == 'postgresql'


def _status(ctx):
    """psycopg2's transaction status of the connection after a query."""
    ctx.conn.exec_driver_sql('SELECT 1')
    return ctx.conn.connection.dbapi_connection.get_transaction_status()


@pytest.mark.skipif(not ON_POSTGRESQL, reason='PostgreSQL only')
def test_a_reader_on_postgresql_opens_no_transaction(ctx):
    from psycopg2 import extensions
    assert db_api.reader(_status)(ctx) == extensions.TRANSACTION_STATUS_IDLE
    assert db_api.writer(_status)(ctx) == (
        extensions.TRANSACTION_STATUS_INTRANS)


@pytest.mark.skipif(not ON_POSTGRESQL, reason='PostgreSQL only')
def test_a_reader_on_postgresql_hands_its_connection_back_transactional(
        ctx):
    @db_api.reader
    def autocommit(ctx):
        return ctx.conn.connection.dbapi_connection.autocommit

    assert autocommit(ctx) is True
    pooled = ctx.db.engine.raw_connection()
    try:
        assert pooled.dbapi_connection.autocommit is False
    finally:
        pooled.close()


def test_a_writer_after_readers_still_rolls_back(ctx):
    """The pooled connection a reader used takes a writer's transaction
    again: a failing writer leaves nothing behind."""
    @db_api.reader
    def count(ctx):
        return ctx.conn.execute(sa.select(sa.func.count()).select_from(
            tables.resource_classes)).scalar()

    @db_api.writer
    def insert_then_fail(ctx):
        ctx.conn.execute(sa.insert(tables.resource_classes).values(
            id=10001, name='CUSTOM_ROLLED_BACK'))
        raise RuntimeError('undo')

    before = count(ctx)
    with pytest.raises(RuntimeError):
        insert_then_fail(ctx)
    assert count(ctx) == before


def test_streaming_is_asked_for_only_inside_a_transaction(ctx):
    @db_api.reader
    def read(ctx):
        return connections.streamed(ctx.conn, 7)

    @db_api.writer
    def write(ctx):
        return connections.streamed(ctx.conn, 7)

    assert read(ctx) == ({} if ON_POSTGRESQL else {'yield_per': 7})
    assert write(ctx) == {'yield_per': 7}


ON_MYSQL = fixtures.backend_name() == 'mysql'


def _sent(conn):
    """{'begin', 'commit', 'rollback'}: how many of each the server
    received on this session."""
    rows = conn.exec_driver_sql(
        "SHOW SESSION STATUS WHERE Variable_name IN "
        "('Com_begin', 'Com_commit', 'Com_rollback')").all()
    return {name[len('Com_'):].lower(): int(value) for name, value in rows}


def _more(before, after):
    return {kind: after[kind] - before[kind] for kind in before
            if after[kind] != before[kind]}


@pytest.fixture
def mysql_db(ctx):
    """A Database of one connection on the MySQL test database."""
    if not ON_MYSQL:
        pytest.skip('MySQL/MariaDB only')
    db = db_api.Database(ctx.db.url.render_as_string(hide_password=False),
                         pool_size=1, max_overflow=0)
    yield db
    db.dispose()


def _edges(db, write, work=lambda conn: conn.exec_driver_sql('SELECT 1')):
    """The BEGIN, COMMIT and ROLLBACK the server received for one
    transaction running ``work(conn)``."""
    with db.transaction(False) as conn:
        before = _sent(conn)
    try:
        with db.transaction(write) as conn:
            work(conn)
    finally:
        with db.transaction(False) as conn:
            after = _sent(conn)
    # The readers that read the counters send none of their own.
    return _more(before, after)


def test_a_reader_on_mysql_opens_no_transaction(mysql_db):
    """Autocommit: a reader is its statements alone, even when it
    becomes a SQLAlchemy Connection; a writer begins and commits (see
    api-ref/behaviour-choices.rst, 'Reads on MariaDB and MySQL')."""
    assert _edges(mysql_db, False) == {}
    assert _edges(mysql_db, False, lambda conn: prepared.Prepared(
        sa.select(sa.literal(1))).rows(conn)) == {}
    assert _edges(mysql_db, True) == {'begin': 1, 'commit': 1}


def test_a_failed_writer_on_mysql_rolls_back(mysql_db):
    def fail(conn):
        conn.exec_driver_sql('SELECT 1')
        raise RuntimeError('the transaction rolls back')

    with mysql_db.transaction(False) as conn:
        before = _sent(conn)
    with pytest.raises(RuntimeError):
        with mysql_db.transaction(True) as conn:
            fail(conn)
    with mysql_db.transaction(False) as conn:
        assert _more(before, _sent(conn)) == {'begin': 1, 'rollback': 1}


def test_every_sqlalchemy_transaction_on_mysql_is_one(mysql_db):
    """Not only the decorators' writers: whatever begins a transaction
    through SQLAlchemy (migrations, start-up, tools) gets one, although
    the connection is in autocommit mode."""
    rows = sa.select(sa.func.count()).select_from(tables.resource_classes)
    with mysql_db.engine.connect() as conn:
        before = conn.execute(rows).scalar()
        conn.rollback()
        conn.execute(sa.insert(tables.resource_classes).values(
            id=10002, name='CUSTOM_NEVER_COMMITTED'))
        conn.rollback()
        assert conn.execute(rows).scalar() == before


def test_no_rollback_when_a_connection_goes_back_to_the_pool_on_mysql(
        mysql_db):
    """The pool does not roll back a connection whose transaction ended
    or that never opened one (a round trip per request saved), but
    still resets one handed back inside a transaction."""
    db = mysql_db
    with db.transaction(False) as conn:
        before = _sent(conn)
    for write in (False, True, False):
        with db.transaction(write) as conn:
            conn.exec_driver_sql('SELECT 1')
    raw = db.engine.raw_connection()
    cursor = raw.cursor()
    cursor.execute('SELECT 1')
    cursor.close()
    raw.close()
    with db.transaction(False) as conn:
        assert _more(before, _sent(conn)) == {'begin': 1, 'commit': 1}
    raw = db.engine.raw_connection()
    cursor = raw.cursor()
    cursor.execute('BEGIN')
    cursor.execute('SELECT 1')
    cursor.close()
    raw.close()
    with db.transaction(False) as conn:
        assert _more(before, _sent(conn)) == {
            'begin': 2, 'commit': 1, 'rollback': 1}


def test_mysql_sockets_keep_their_timeout_without_system_calls(
        mysql_db, monkeypatch):
    """PyMySQL sets the socket's timeout before every packet it reads or
    writes; on ours only a change reaches the socket."""
    import socket
    with mysql_db.transaction(False) as conn:
        pass  # connected (PyMySQL connects with a timeout of its own)
    calls = []
    real = socket.socket.settimeout
    monkeypatch.setattr(socket.socket, 'settimeout',
                        lambda sock, value: calls.append(value)
                        or real(sock, value))
    with mysql_db.transaction(False) as conn:
        prepared.Prepared(sa.select(sa.literal(1))).rows(conn)
        sock = conn.connection.dbapi_connection._sock
        assert calls == []
        sock.settimeout(5.0)
        assert sock.gettimeout() == 5.0 and calls == [5.0]
        sock.settimeout(None)
        assert sock.gettimeout() is None and calls == [5.0, None]
