"""A database that cannot be used answers 503, briefly, and recovers.

In process on SQLite: the database file's directory is moved away, so
that no connection can be opened, and moved back. The same outage on a
real PostgreSQL server under a real gunicorn is in
``test_database_outage_gunicorn.py``.
"""

import logging
import threading
import time

import pytest
from sqlalchemy import exc as sa_exc
import webob

from placement import context
from placement.db import api as db_api
from placement import deploy
from placement import exception
from placement.tests import fixtures
from placement.tests.sqlite_outage import SQLiteOutage

ADMIN = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'}


@pytest.fixture
def outage(tmp_path):
    database = SQLiteOutage(tmp_path)
    yield database
    database.db.dispose()


def _call(app, method, path, body=None, **headers):
    req = webob.Request.blank(path, method=method)
    req.headers.update(ADMIN)
    req.headers.update(headers)
    if body is not None:
        req.content_type = 'application/json'
        req.json_body = body
    return req.get_response(app)


def test_requests_get_503_with_retry_after_and_recover(outage, caplog):
    app = fixtures.new_app(fixtures.new_conf(), outage.db)
    assert _call(app, 'POST', '/resource_providers',
                 {'name': 'before'}).status_int == 200
    outage.stop()
    with caplog.at_level(logging.DEBUG, logger='placement'):
        caplog.clear()
        for method, path, body in (
                ('GET', '/resource_providers', None),
                ('POST', '/resource_providers', {'name': 'during'}),
                ('GET', '/allocation_candidates?resources=VCPU:1', None),
                ('PUT', '/traits/CUSTOM_DURING', None)):
            started = time.monotonic()
            resp = _call(app, method, path, body)
            assert time.monotonic() - started < db_api.RETRY_WINDOW + 1
            assert resp.status_int == 503, resp.text
            assert resp.headers['retry-after'] == '5'
            assert resp.headers['openstack-api-version'] == 'placement 1.39'
            error = resp.json_body['errors'][0]
            assert error['code'] == 'placement.database_unavailable'
            assert error['request_id'] == (
                resp.headers['x-openstack-request-id'])
    # One line per failed request, at WARNING, naming the cause; no
    # traceback anywhere.
    placement_records = [r for r in caplog.records
                         if r.levelno >= logging.INFO]
    assert len(placement_records) == 4, caplog.text
    for record in placement_records:
        assert record.name == 'placement.requestlog'
        assert record.levelno == logging.WARNING
        assert 'status: 503' in record.getMessage()
        assert 'failure: Database unavailable (OperationalError: ' \
            'unable to open database file' in record.getMessage()
    assert all(r.exc_info is None for r in caplog.records)
    assert 'Traceback' not in caplog.text

    outage.start()
    resp = _call(app, 'GET', '/resource_providers')
    assert resp.status_int == 200
    assert [p['name'] for p in resp.json_body['resource_providers']] == [
        'before']
    assert _call(app, 'POST', '/resource_providers',
                 {'name': 'after'}).status_int == 200


def test_error_code_follows_the_microversion(outage):
    app = fixtures.new_app(fixtures.new_conf(), outage.db)
    outage.stop()
    resp = _call(app, 'GET', '/resource_providers',
                 **{'openstack-api-version': 'placement 1.22'})
    assert resp.status_int == 503
    assert 'code' not in resp.json_body['errors'][0]
    assert resp.headers['retry-after'] == '5'


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
        assert not db_api.is_unavailable(caught.value)
    finally:
        cleanup()


def _candidate_roots(app):
    resp = _call(app, 'GET', '/allocation_candidates?resources=VCPU:1')
    assert resp.status_int == 200, resp.text
    return sorted(p for p in resp.json_body['provider_summaries'])


def _compute(app, name):
    provider = _call(app, 'POST', '/resource_providers',
                     {'name': name}).json_body['uuid']
    resp = _call(app, 'PUT', '/resource_providers/%s/inventories' % provider,
                 {'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 4}}})
    assert resp.status_int == 200, resp.text
    return provider


def test_candidates_index_catches_up_after_an_outage(outage):
    app = fixtures.new_app(fixtures.new_conf(), outage.db)
    first = _compute(app, 'cn1')
    assert _candidate_roots(app) == [first]
    outage.stop()
    resp = _call(app, 'GET', '/allocation_candidates?resources=VCPU:1')
    assert resp.status_int == 503
    outage.start()
    second = _compute(app, 'cn2')
    assert _candidate_roots(app) == sorted([first, second])


def test_start_up_work_waits_for_the_database(outage, caplog):
    # A gunicorn worker respawned during an outage: the database went
    # away after the process was configured.
    conf = fixtures.new_conf(placement_database__retry_interval=1,
                             placement_database__max_retries=-1)
    outage.stop()
    comeback = threading.Timer(1.5, outage.start)
    comeback.start()
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger='placement'):
        app = deploy.loadapp(conf, db=outage.db)
    comeback.join()
    assert time.monotonic() - started >= 1.5
    assert _call(app, 'GET', '/resource_providers').status_int == 200
    assert 'Database unavailable during start-up (attempt 1)' in caplog.text
    assert 'Traceback' not in caplog.text


def test_start_up_work_gives_up_after_max_retries(outage):
    conf = fixtures.new_conf(placement_database__retry_interval=1,
                             placement_database__max_retries=0)
    outage.stop()
    with pytest.raises((exception.DatabaseUnavailable,
                        sa_exc.OperationalError)):
        deploy.loadapp(conf, db=outage.db)
