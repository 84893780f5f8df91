"""Writers that lose conflicts at COMMIT (how a Galera cluster reports a
certification failure: MySQL error 1213 on COMMIT) are re-run whole,
with backoff, enough times; if they keep losing, the client gets 409
``placement.concurrent_update``, never a 5xx.

The failure is injected at COMMIT by an engine event on any backend; the
real thing, on a 3-node cluster, is in ``test_writes_across_hosts.py``.
"""

import uuid

import pytest
import webob
from sqlalchemy import event
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import api as db_api
from placement.db import failures
from placement import exception
from placement.objects import provider_listing
from placement.objects import resource_provider
from placement.tests import fixtures

ADMIN = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'}


class CommitConflicts:
    """Make the next ``count`` commits of ``db`` fail as a Galera
    certification failure does."""

    def __init__(self, db, count):
        self.left = count
        self.raised = 0
        event.listen(db.engine, 'commit', self._on_commit)
        self._db = db

    def _on_commit(self, conn):
        if self.left > 0:
            self.left -= 1
            self.raised += 1
            raise sa_exc.OperationalError(
                'COMMIT', {}, Exception(
                    1213, 'Deadlock found when trying to get lock; try '
                    'restarting transaction'))

    def remove(self):
        event.remove(self._db.engine, 'commit', self._on_commit)


@pytest.fixture
def db():
    database, cleanup = fixtures.new_database()
    yield database
    cleanup()


def _create(ctx, name):
    return resource_provider.create(ctx, name=name, uuid=str(uuid.uuid4()))


def _names(ctx):
    return {rp.name for rp in provider_listing.list_providers(ctx)}


def test_conflicts_at_commit_rerun_the_whole_transaction(db):
    """More losses in a row than the old budget of 5: still written, once."""
    conflicts = CommitConflicts(db, 8)
    ctx = context.AdminContext(db)
    try:
        _create(ctx, 'after-conflicts')
    finally:
        conflicts.remove()
    assert conflicts.raised == 8
    assert _names(ctx) == {'after-conflicts'}


def test_conflicts_beyond_the_budget_leave_nothing_written(db, monkeypatch):
    monkeypatch.setattr(db_api, 'MAX_CONFLICT_RETRIES', 3)
    conflicts = CommitConflicts(db, 10)
    ctx = context.AdminContext(db)
    try:
        with pytest.raises(exception.TransactionConflict) as caught:
            _create(ctx, 'never')
    finally:
        conflicts.remove()
    assert conflicts.raised == 4
    assert 'Deadlock' in caught.value.reason
    assert _names(ctx) == set()


def test_conflict_retries_are_bounded_in_time(db, monkeypatch):
    monkeypatch.setattr(db_api, 'CONFLICT_RETRY_WINDOW', 0.2)
    monkeypatch.setattr(db_api, 'BACKOFF_BASE', 0.05)
    conflicts = CommitConflicts(db, 10 ** 6)
    try:
        with pytest.raises(exception.TransactionConflict):
            _create(context.AdminContext(db), 'never')
    finally:
        conflicts.remove()
    assert conflicts.raised < db_api.MAX_CONFLICT_RETRIES


def test_a_savepoint_lost_with_its_transaction_is_a_conflict(db):
    """A Galera node that aborts a local transaction for a replicated
    one takes its savepoints with it: the next ROLLBACK TO SAVEPOINT
    fails with 1305, which means the transaction lost a conflict."""
    lost = sa_exc.OperationalError('ROLLBACK TO SAVEPOINT sa_savepoint_1',
                                   {}, Exception(
                                       1305, 'SAVEPOINT sa_savepoint_1 '
                                       'does not exist'))
    assert failures.is_conflict(lost)
    attempts = []

    @db_api.writer
    def savepoint_lost_once(ctx):
        attempts.append(1)
        if len(attempts) == 1:
            raise lost
        return 'written'

    assert savepoint_lost_once(context.AdminContext(db)) == 'written'
    assert len(attempts) == 2


def test_backoff_grows_exponentially_with_full_jitter():
    for attempt in range(1, 40):
        ceiling = min(db_api.BACKOFF_CAP,
                      db_api.BACKOFF_BASE * 2 ** (attempt - 1))
        pauses = [db_api.backoff(attempt) for _ in range(50)]
        assert all(0 <= pause <= ceiling for pause in pauses)
        assert max(pauses) > ceiling / 4


@pytest.mark.parametrize('method, path, body', [
    # Handled by the dispatcher: the handler knows no conflicts.
    ('POST', '/resource_providers', {'name': 'lost'}),
    ('PUT', '/traits/CUSTOM_LOST', None),
    # Handled by the allocation handler, as a provider generation race.
    ('PUT', '/allocations/0c6a1f0e-3b8e-4c1d-9a57-2f4e8d6b1a90',
     'allocation'),
])
def test_a_write_that_keeps_losing_answers_409(db, monkeypatch, method,
                                               path, body):

    app = fixtures.new_app(fixtures.new_conf(), db)
    if body == 'allocation':
        rp = _create(context.AdminContext(db), 'host')
        resp = fixtures.call_as_admin(
            app, 'PUT', '/resource_providers/%s/inventories' % rp.uuid,
            {'resource_provider_generation': 0,
             'inventories': {'VCPU': {'total': 8}}})
        assert resp.status_int == 200, resp.text
        body = {'allocations': {rp.uuid: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'}
    monkeypatch.setattr(db_api, 'MAX_CONFLICT_RETRIES', 2)
    conflicts = CommitConflicts(db, 10 ** 6)
    try:
        req = webob.Request.blank(path, method=method)
        req.headers.update(ADMIN)
        if body is not None:
            req.content_type = 'application/json'
            req.json_body = body
        resp = req.get_response(app)
    finally:
        conflicts.remove()
    assert resp.status_int == 409, resp.text
    error = resp.json_body['errors'][0]
    assert error['code'] == 'placement.concurrent_update'
    assert 'concurrently updated' in error['detail']
