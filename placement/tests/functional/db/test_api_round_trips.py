"""Round trips the transaction decorators add: none around a reader on
PostgreSQL (see api-ref/behaviour-choices.rst, 'Reads on PostgreSQL')."""

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import connections
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


def _rollbacks(conn):
    """ROLLBACK statements the server received on this session."""
    return int(conn.exec_driver_sql(
        "SHOW SESSION STATUS LIKE 'Com_rollback'").one()[1])


@pytest.mark.skipif(not ON_MYSQL, reason='MySQL/MariaDB only')
def test_no_rollback_after_a_transaction_ended_on_mysql(ctx):
    """The pool does not roll back a connection whose transaction
    committed (one round trip per request saved), but still resets one
    handed back inside a transaction."""
    db = db_api.Database(ctx.db.url.render_as_string(hide_password=False),
                         pool_size=1, max_overflow=0)
    try:
        with db.transaction(False) as conn:
            before = _rollbacks(conn)
        for write in (False, True, False):
            with db.transaction(write) as conn:
                conn.exec_driver_sql('SELECT 1')
        with pytest.raises(RuntimeError):
            with db.transaction(True) as conn:
                conn.exec_driver_sql('SELECT 1')
                raise RuntimeError('the transaction rolls back')
        with db.transaction(False) as conn:
            # The failed writer's own ROLLBACK only.
            assert _rollbacks(conn) == before + 1
        raw = db.engine.raw_connection()
        cursor = raw.cursor()
        cursor.execute('SELECT 1')
        cursor.close()
        raw.close()
        with db.transaction(False) as conn:
            assert _rollbacks(conn) == before + 2
    finally:
        db.dispose()
