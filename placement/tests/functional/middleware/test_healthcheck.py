"""GET/HEAD /healthcheck: no token, database-backed, cached, bounded.

The database is real (SQLite here, moved away to make it unusable; a
stopped PostgreSQL in ``test_database_outage_gunicorn.py``) and so is the
hanging server of the timeout test: a socket that accepts connections and
never answers.
"""

import socket
import threading
import time

from keystonemiddleware import fixture as keystone_fixture
import pytest
from sqlalchemy import event
import webob

from placement.db import api as db_api
from placement.middleware import healthcheck
from placement.tests import fixtures
from placement.tests.sqlite_outage import SQLiteOutage


@pytest.fixture
def outage(tmp_path):
    database = SQLiteOutage(tmp_path)
    yield database
    database.db.dispose()


def _app(db, auth='noauth2', cache_time=0.0, **overrides):
    conf = fixtures.new_conf(api__healthcheck_cache_time=cache_time,
                             **overrides)
    conf.set_override('auth_strategy', auth, group='api')
    return fixtures.new_app(conf, db)


def _check(app, method='GET', **headers):
    req = webob.Request.blank('/healthcheck', method=method)
    req.headers.update(headers)
    return req.get_response(app)


def _queries(db):
    """A list that grows by one for every probe query ``db`` runs."""
    seen = []
    event.listen(db.engine, 'before_cursor_execute',
                 lambda *args: args[2] == 'SELECT 1' and seen.append(args[2]))
    return seen


def test_healthy_needs_no_token(outage):
    app = _app(outage.db)
    resp = _check(app)
    assert resp.status_int == 200
    assert resp.content_type == 'text/plain'
    assert resp.text == 'OK'
    assert resp.headers['cache-control'] == 'no-cache'
    assert 'x-openstack-request-id' in resp.headers
    head = _check(app, 'HEAD')
    assert (head.status_int, head.body) == (204, b'')


def test_unusable_database_is_503_and_recovery_is_200(outage):
    app = _app(outage.db)
    outage.stop()
    resp = _check(app)
    assert resp.status_int == 503
    assert resp.text == 'Database unavailable'
    assert _check(app, 'HEAD').status_int == 503
    outage.start()
    assert _check(app).status_int == 200


def test_other_methods_are_405(outage):
    resp = _check(_app(outage.db), 'POST')
    assert resp.status_int == 405
    assert resp.headers['allow'] == 'GET, HEAD'


def test_microversion_header_does_not_matter(outage):
    resp = _check(_app(outage.db),
                  **{'openstack-api-version': 'placement 9.9'})
    assert resp.status_int == 200
    assert 'openstack-api-version' not in resp.headers


def test_polling_is_served_from_the_cache(outage):
    app = _app(outage.db, cache_time=60)
    queries = _queries(outage.db)
    for _ in range(50):
        assert _check(app).status_int == 200
    assert queries == ['SELECT 1']
    # A cached answer stays what it was until the period ends.
    outage.stop()
    assert _check(app).status_int == 200


class SilentServer:
    """A port that accepts TCP connections and never says a word: a
    database server that hangs. ``accepted`` counts the connections."""

    def __init__(self):
        self._listener = socket.socket()
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self.accepted = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.accepted.append(self._listener.accept()[0])
            except OSError:
                return

    def close(self):
        self._listener.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def hanging_db():
    server = SilentServer()
    db = db_api.Database(
        'postgresql+psycopg2://nobody@127.0.0.1:%d/placement' % server.port)
    yield db, server
    server.close()
    db.dispose()


def test_a_hanging_database_is_reported_within_the_timeout(hanging_db):
    db, _server = hanging_db
    probe = healthcheck.DatabaseProbe(db, timeout=0.5, cache_time=0)
    for _ in range(3):
        started = time.monotonic()
        result = probe.check()
        assert time.monotonic() - started < 0.8
        assert not result.reachable
        assert result.error == 'no answer within 0.5 s'


def test_concurrent_checks_share_one_probe(hanging_db):
    db, server = hanging_db
    probe = healthcheck.DatabaseProbe(db, timeout=0.3, cache_time=0)
    barrier = threading.Barrier(8)
    results = []

    def check():
        barrier.wait()
        for _ in range(3):
            results.append(probe.check().reachable)

    threads = [threading.Thread(target=check) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [False] * 24
    # 24 checks, one probe: later checks found it still in flight (the
    # driver waits for its connect timeout) and did not start another.
    assert len(server.accepted) == 1


# -- details by policy --------------------------------------------------------

def test_admin_sees_details(outage):
    app = _app(outage.db)
    resp = _check(app, **{'x-auth-token': 'admin'})
    assert resp.status_int == 200
    assert resp.content_type == 'application/json'
    details = resp.json_body
    assert details['status'] == 'OK'
    database = details['database']
    assert (database['reachable'], database['dialect'], database['error']) \
        == (True, 'sqlite', None)
    assert database['latency_ms'] >= 0 and database['age_s'] >= 0

    outage.stop()
    resp = _check(app, **{'x-auth-token': 'admin'})
    assert resp.status_int == 503
    database = resp.json_body['database']
    assert database['reachable'] is False
    assert database['latency_ms'] is None
    assert 'unable to open database file' in database['error']


@pytest.mark.parametrize('headers', [
    {'x-auth-token': 'alice:p1', 'x-roles': 'reader'},
    {'x-auth-token': 'nova:services', 'x-roles': 'service'},
], ids=['reader', 'service'])
def test_others_get_the_plain_answer(outage, headers):
    resp = _check(_app(outage.db), **headers)
    assert (resp.status_int, resp.text) == (200, 'OK')


def test_details_rule_can_be_opened_to_services(outage, tmp_path):
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text(
        '"placement:healthcheck:details": "rule:admin_or_service_api"\n')
    app = _app(outage.db, oslo_policy__policy_file=str(policy_file))
    resp = _check(app, **{'x-auth-token': 'nova:services',
                          'x-roles': 'service'})
    assert resp.json_body['database']['reachable'] is True


@pytest.fixture
def keystone_app(outage):
    tokens = keystone_fixture.AuthTokenFixture()
    tokens.setUp()
    tokens.add_token_data(token_id='admin-token', user_id='u-admin',
                          project_id='p-admin', role_list=['admin'])
    tokens.add_token_data(token_id='reader-token', user_id='u-reader',
                          project_id='p1', role_list=['reader'])
    yield _app(outage.db, auth='keystone',
               keystone_authtoken__www_authenticate_uri='https://ks.example')
    tokens.cleanUp()


@pytest.mark.parametrize('headers', [
    {},
    {'x-auth-token': 'forged-token'},
    {'x-auth-token': 'reader-token'},
    # Identity headers from the client are not trusted without a token.
    {'x-user-id': 'admin', 'x-roles': 'admin', 'x-project-id': 'p'},
], ids=['no-token', 'invalid-token', 'reader', 'forged-headers'])
def test_keystone_callers_without_the_rule_get_the_plain_answer(
        keystone_app, headers):
    resp = _check(keystone_app, **headers)
    assert (resp.status_int, resp.text) == (200, 'OK')


def test_keystone_admin_sees_details(keystone_app):
    resp = _check(keystone_app, **{'x-auth-token': 'admin-token'})
    assert resp.json_body['database']['reachable'] is True


def test_keystone_still_guards_the_api(keystone_app):
    req = webob.Request.blank('/resource_providers')
    assert req.get_response(keystone_app).status_int == 401
