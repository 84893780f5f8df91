"""A database that cannot be used answers 503, briefly, and recovers.

In process on SQLite: the database file's directory is moved away, so
that no connection can be opened, and moved back. The same outage of a
real PostgreSQL or MariaDB server under a real gunicorn is in
``test_database_outage_gunicorn.py``; the bounded re-runs of the
transaction decorators are tested in ``db/test_api.py``, start-up in
``test_deploy.py``.
"""

import logging
import time

import pytest
import webob

from placement.db import api as db_api
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
