"""A MariaDB statement failing on a trigger the server could not load
(1064 "Unknown trigger has an error in its body: 'Query was empty'", left
in the table cache by a statement killed while it loaded the triggers;
a Galera node kills local transactions that lose to replicated ones) is
not a client's 5xx: the connection is discarded, the node asked to reopen
the tables, and the transaction re-run.

The server's condition cannot be produced on demand, so a trigger of our
own raises the very error: while the session variable it reads is set
(one poisoned connection), or always (a condition that does not clear).
MySQL/MariaDB only.
"""

import logging
import time
import uuid

import pytest
import sqlalchemy as sa

from placement import context
from placement.db import api as db_api
from placement import exception
from placement.objects import provider_listing
from placement.objects import resource_provider
from placement.tests import fixtures

pytestmark = pytest.mark.skipif(
    fixtures.server_url() is None
    or sa.engine.make_url(fixtures.server_url()).get_backend_name()
    != 'mysql', reason='needs a MySQL/MariaDB server')

BROKEN = "Unknown trigger has an error in its body: ''Query was empty''"


@pytest.fixture
def db():
    database, cleanup = fixtures.new_database()
    yield database
    with database.engine.begin() as conn:
        conn.exec_driver_sql('DROP TRIGGER IF EXISTS placement_test_broken')
    cleanup()


def _break_provider_inserts(db, condition):
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            'CREATE TRIGGER placement_test_broken BEFORE INSERT ON '
            'resource_providers FOR EACH ROW BEGIN IF %s THEN '
            "SIGNAL SQLSTATE '42000' SET MYSQL_ERRNO = 1064, "
            "MESSAGE_TEXT = '%s'; END IF; END" % (condition, BROKEN))


def _create(db, name):
    return resource_provider.create(context.AdminContext(db), name=name,
                                    uuid=str(uuid.uuid4()))


def _names(db):
    return {rp.name for rp in provider_listing.list_providers(
        context.AdminContext(db))}


@pytest.fixture
def reloads(monkeypatch):
    """The results of the reloads asked for, in order."""
    done = []
    original = db_api.Database.reload_triggered_tables
    monkeypatch.setattr(
        db_api.Database, 'reload_triggered_tables',
        lambda self: done.append(original(self)) or done[-1])
    return done


def test_a_connection_meeting_a_broken_trigger_is_replaced(
        db, reloads, caplog, monkeypatch):
    monkeypatch.setattr(db_api, 'RELOAD_LOG_INTERVAL', 0)
    _break_provider_inserts(db, '@placement_test_broken')
    # The pool's only connection is the poisoned one.
    db.engine.dispose()
    with db.engine.connect() as conn:
        conn.exec_driver_sql('SET @placement_test_broken = 1')
    with caplog.at_level(logging.WARNING, logger='placement.db.api'):
        _create(db, 'written-on-a-fresh-connection')
    assert _names(db) == {'written-on-a-fresh-connection'}
    assert reloads == [True]
    assert 'it has reopened the tables' in caplog.text


def test_a_trigger_that_stays_broken_is_unavailable_not_an_error(
        db, reloads, monkeypatch):
    monkeypatch.setattr(db_api, 'MAX_RETRIES', 2)
    _break_provider_inserts(db, 'TRUE')
    with pytest.raises(exception.DatabaseUnavailable):
        _create(db, 'never-written')
    assert reloads == [True, True]
    with db.engine.begin() as conn:
        conn.exec_driver_sql('DROP TRIGGER placement_test_broken')
    assert _names(db) == set()


def test_the_reload_does_not_wait_long_for_a_transaction(db, monkeypatch):
    """Statements on the tables queue behind a waiting flush: it gives up
    after RELOAD_LOCK_WAIT seconds rather than the server's default day."""
    monkeypatch.setattr(db_api, 'RELOAD_LOCK_WAIT', 1)
    with db.engine.connect() as holder:
        holder.begin()
        holder.exec_driver_sql('SELECT COUNT(*) FROM allocations')
        started = time.monotonic()
        assert db.reload_triggered_tables() is False
        assert time.monotonic() - started < 5
        holder.rollback()
    assert db.reload_triggered_tables() is True
