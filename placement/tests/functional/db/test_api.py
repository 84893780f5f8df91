"""The transaction decorators when the database fails: bounded re-runs,
and which failures mean "unavailable"."""

import threading
import time

import pytest
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import api as db_api
from placement.db import failures
from placement import exception
from placement.tests import fixtures


def _lost_connection():
    error = sa_exc.OperationalError(
        'SELECT 1', {}, Exception('server closed the connection'))
    error.connection_invalidated = True
    return error


def test_writer_reruns_on_a_dead_database_are_bounded(monkeypatch):
    db, cleanup = fixtures.new_database()
    attempts = []

    @db_api.writer
    def doomed(ctx):
        attempts.append(time.monotonic())
        raise _lost_connection()

    try:
        with pytest.raises(exception.DatabaseUnavailable):
            doomed(context.AdminContext(db))
        assert len(attempts) == db_api.MAX_RETRIES + 1
        # And by time, whatever the count: a re-run only starts within
        # the window.
        monkeypatch.setattr(db_api, 'MAX_RETRIES', 10 ** 6)
        monkeypatch.setattr(db_api, 'RETRY_WINDOW', 0.3)
        attempts.clear()
        with pytest.raises(exception.DatabaseUnavailable):
            doomed(context.AdminContext(db))
        assert attempts[-1] - attempts[0] < 0.3 + 0.5
    finally:
        cleanup()


def test_reader_is_rerun_once_after_a_stale_connection():
    db, cleanup = fixtures.new_database()
    attempts = []

    @db_api.reader
    def stale_then_fine(ctx):
        attempts.append(1)
        if len(attempts) == 1:
            raise _lost_connection()
        return 'read'

    try:
        assert stale_then_fine(context.AdminContext(db)) == 'read'
        assert len(attempts) == 2
    finally:
        cleanup()


def test_statement_errors_are_not_unavailability():
    db, cleanup = fixtures.new_database()

    @db_api.reader
    def broken(ctx):
        ctx.conn.exec_driver_sql('SELECT nonsense FROM nowhere')

    try:
        with pytest.raises(sa_exc.DBAPIError) as caught:
            broken(context.AdminContext(db))
        assert not failures.is_unavailable(caught.value)
    finally:
        cleanup()


@pytest.mark.parametrize('url', ['sqlite://', 'file'])
def test_a_transaction_ends_whichever_way_it_leaves(url, tmp_path):
    # Committed on success, rolled back on an error, its connection back
    # in the pool and a one-connection database free again either way.
    if url == 'file':
        url = 'sqlite:///%s' % (tmp_path / 'ends.sqlite')
    db = db_api.Database(url)
    try:
        with db.transaction(write=True) as conn:
            conn.exec_driver_sql('CREATE TABLE t (v INTEGER)')
        with db.transaction(write=True) as conn:
            conn.exec_driver_sql('INSERT INTO t VALUES (1)')
        with pytest.raises(ZeroDivisionError):
            with db.transaction(write=True) as conn:
                conn.exec_driver_sql('INSERT INTO t VALUES (2)')
                1 / 0
        if not db.in_memory:
            assert db.engine.pool.checkedout() == 0
        else:  # free for another thread (the lock is re-entrant)
            free = []
            other = threading.Thread(target=lambda: free.append(
                db._serial.acquire(blocking=False)
                and db._serial.release() is None))
            other.start()
            other.join()
            assert free == [True]
        with db.transaction(write=False) as conn:
            assert conn.exec_driver_sql('SELECT v FROM t').all() == [(1,)]
            assert conn.in_transaction()
        if not db.in_memory:  # a static pool does not count
            assert db.engine.pool.checkedout() == 0
    finally:
        db.dispose()
