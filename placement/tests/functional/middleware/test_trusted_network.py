"""Who reads GET /metrics and GET /capacity, under noauth2 and keystone.

Token-less requests are served only to peers in ``[metrics]
trusted_networks`` (loopback by default); everyone else authenticates
and passes the policy rule. Nothing of the fleet reaches a refused
caller.
"""

from keystonemiddleware import fixture as keystone_fixture
import pytest
import webob

from placement.tests import fixtures

RP = '5ecd1b3a-7f37-4c2e-9bb5-2a3d7f1e9c01'
SECRET_NAME = 'secret-compute-host'
PAGES = ('/metrics', '/capacity')


def _call(app, method, path, body=None, token=None, remote='127.0.0.1',
          headers=None):
    req = webob.Request.blank(path, method=method, remote_addr=remote)
    req.headers['openstack-api-version'] = 'placement latest'
    if token:
        req.headers['x-auth-token'] = token
    req.headers.update(headers or {})
    if body is not None:
        req.json_body = body
        req.content_type = 'application/json'
    return req.get_response(app)


def _populate(app, token):
    assert _call(app, 'POST', '/resource_providers',
                 {'name': SECRET_NAME, 'uuid': RP}, token).status_int == 200
    assert _call(app, 'PUT', '/resource_providers/%s/inventories' % RP,
                 {'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 8}}},
                 token).status_int == 200


@pytest.fixture
def noauth_app():
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(
        fixtures.new_conf(metrics__capacity_refresh_interval=0), db)
    _populate(app, 'admin')
    yield app
    cleanup()


@pytest.mark.parametrize('path', PAGES)
def test_loopback_without_token_is_served(noauth_app, path):
    for remote in ('127.0.0.1', '::1', '::ffff:127.0.0.1'):
        resp = _call(noauth_app, 'GET', path, remote=remote)
        assert resp.status_int == 200, remote
        assert SECRET_NAME in resp.text


@pytest.mark.parametrize('path', PAGES)
def test_other_networks_without_token_get_nothing(noauth_app, path):
    resp = _call(noauth_app, 'GET', path, remote='10.1.2.3')
    assert resp.status_int == 401
    assert SECRET_NAME not in resp.text


@pytest.mark.parametrize('path', PAGES)
def test_other_networks_need_the_policy_rule(noauth_app, path):
    resp = _call(noauth_app, 'GET', path, token='admin', remote='10.1.2.3')
    assert resp.status_int == 200
    resp = _call(noauth_app, 'GET', path, token='alice:p1',
                 remote='10.1.2.3', headers={'x-roles': 'reader'})
    assert resp.status_int == 403
    assert SECRET_NAME not in resp.text
    rule = {'/metrics': 'placement:metrics:read',
            '/capacity': 'placement:capacity:read'}[path]
    assert rule in resp.json['errors'][0]['detail']


def test_a_token_is_checked_even_from_loopback(noauth_app):
    resp = _call(noauth_app, 'GET', '/metrics', token='alice:p1',
                 headers={'x-roles': 'reader'})
    assert resp.status_int == 403


def test_only_reads_of_the_two_pages_are_trusted(noauth_app):
    assert _call(noauth_app, 'GET', '/resource_providers').status_int == 401
    assert _call(noauth_app, 'POST', '/metrics').status_int == 401


def test_trusted_networks_are_configurable():
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(fixtures.new_conf(
            metrics__trusted_networks=['10.1.0.0/16']), db)
        assert _call(app, 'GET', '/metrics',
                     remote='10.1.2.3').status_int == 200
        assert _call(app, 'GET', '/metrics',
                     remote='127.0.0.1').status_int == 401
        app = fixtures.new_app(fixtures.new_conf(
            metrics__trusted_networks=[]), db)
        assert _call(app, 'GET', '/metrics').status_int == 401
    finally:
        cleanup()


def test_disabled_metrics_serve_neither_page():
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(
            fixtures.new_conf(metrics__enabled=False), db)
        for path in PAGES:
            resp = _call(app, 'GET', path, token='admin')
            assert resp.status_int == 404
            resp = _call(app, 'GET', path)
            assert resp.status_int == 401
    finally:
        cleanup()


@pytest.fixture
def keystone_app():
    tokens = keystone_fixture.AuthTokenFixture()
    tokens.setUp()
    tokens.add_token_data(token_id='admin-token', user_id='u-admin',
                          project_id='p-admin',
                          role_list=['admin', 'member', 'reader'])
    tokens.add_token_data(token_id='reader-token', user_id='u-reader',
                          project_id='p1', role_list=['reader'])
    db, cleanup = fixtures.new_database()
    conf = fixtures.new_conf(
        metrics__capacity_refresh_interval=0,
        keystone_authtoken__www_authenticate_uri='https://keystone.example')
    conf.set_override('auth_strategy', 'keystone', group='api')
    app = fixtures.new_app(conf, db)
    _populate(app, 'admin-token')
    yield app
    cleanup()
    tokens.cleanUp()


@pytest.mark.parametrize('path', PAGES)
def test_keystone_anonymous_browser_sees_nothing(keystone_app, path):
    resp = _call(keystone_app, 'GET', path, remote='192.0.2.10',
                 headers={'accept': 'text/html'})
    assert resp.status_int == 401
    assert SECRET_NAME not in resp.text
    assert 'placement_' not in resp.text


@pytest.mark.parametrize('path', PAGES)
def test_keystone_tokens_and_trusted_scrapers(keystone_app, path):
    resp = _call(keystone_app, 'GET', path, token='admin-token',
                 remote='192.0.2.10')
    assert resp.status_int == 200, resp.text
    assert SECRET_NAME in resp.text
    resp = _call(keystone_app, 'GET', path, token='reader-token',
                 remote='192.0.2.10')
    assert resp.status_int == 403
    # Prometheus on the same host has no token.
    resp = _call(keystone_app, 'GET', path)
    assert resp.status_int == 200
    assert SECRET_NAME in resp.text


# -- forwarding headers: the direct peer decides, proxies only when named --

SPOOFS = [
    {'x-forwarded-for': '127.0.0.1'},
    {'forwarded': 'for=127.0.0.1'},
    {'forwarded': 'for="[::1]:4711"'},
    {'x-real-ip': '127.0.0.1'},
]


def _proxied_app(db, **overrides):
    overrides.setdefault('metrics__capacity_refresh_interval', 0)
    return fixtures.new_app(fixtures.new_conf(
        oslo_middleware__enable_proxy_headers_parsing=True, **overrides), db)


@pytest.fixture
def proxied_db():
    db, cleanup = fixtures.new_database()
    _populate(fixtures.new_app(fixtures.new_conf(), db), 'admin')
    yield db
    cleanup()


@pytest.mark.parametrize('headers', SPOOFS)
@pytest.mark.parametrize('path', PAGES)
def test_forwarding_headers_from_outside_are_not_believed(
        proxied_db, path, headers):
    app = _proxied_app(proxied_db, metrics__trusted_networks=['127.0.0.1/32'])
    resp = _call(app, 'GET', path, remote='203.0.113.9', headers=headers)
    assert resp.status_int == 401
    assert SECRET_NAME not in resp.text


@pytest.mark.parametrize('headers', SPOOFS)
def test_forwarding_headers_without_proxy_parsing_are_not_believed(
        proxied_db, headers):
    # From loopback itself: a local reverse proxy passing a client on.
    app = fixtures.new_app(fixtures.new_conf(), proxied_db)
    assert _call(app, 'GET', '/capacity', headers=headers).status_int == 401
    app = _proxied_app(proxied_db)
    assert _call(app, 'GET', '/metrics', headers=headers).status_int == 401


def test_a_named_proxy_forwards_trusted_clients(proxied_db):
    app = _proxied_app(proxied_db,
                       metrics__trusted_networks=['192.0.2.0/24'],
                       metrics__trusted_proxies=['10.0.0.5', '10.9.0.0/16'])

    def status(remote, headers):
        return _call(app, 'GET', '/capacity', remote=remote,
                     headers=headers).status_int
    # The client the proxy heard from is trusted.
    assert status('10.0.0.5', {'x-forwarded-for': '192.0.2.7'}) == 200
    assert status('10.0.0.5', {'x-real-ip': '192.0.2.7'}) == 200
    assert status('10.0.0.5', {'forwarded': 'for=192.0.2.7;proto=https'}
                  ) == 200
    # Through a chain of named proxies, the nearest outside address counts.
    assert status('10.0.0.5',
                  {'x-forwarded-for': '198.51.100.1, 192.0.2.7, 10.9.1.1'}
                  ) == 200
    # A client that prepends a trusted address fools nobody.
    assert status('10.0.0.5', {'x-forwarded-for': '192.0.2.7, 203.0.113.9'}
                  ) == 401
    assert status('10.0.0.5', {'forwarded': 'for=192.0.2.7, for=203.0.113.9'}
                  ) == 401
    # Every forwarding header must agree; one the proxy did not set
    # cannot vouch for a client the proxy did name.
    assert status('10.0.0.5', {'x-forwarded-for': '203.0.113.9',
                               'x-real-ip': '192.0.2.7'}) == 401
    assert status('10.0.0.5', {'forwarded': 'for=unknown'}) == 401
    # The proxy itself must name the client; others may not forward.
    assert status('10.0.0.5', {}) == 401
    assert status('192.0.2.8', {'x-forwarded-for': '192.0.2.7'}) == 401
    # Directly, a trusted client still needs nothing.
    assert status('192.0.2.7', {}) == 200


def test_a_named_proxy_needs_proxy_parsing_only_for_the_rest(proxied_db):
    # The decision does not depend on HTTPProxyToWSGI being on.
    app = fixtures.new_app(fixtures.new_conf(
        metrics__trusted_proxies=['127.0.0.1'],
        metrics__capacity_refresh_interval=0), proxied_db)
    assert _call(app, 'GET', '/metrics',
                 headers={'x-forwarded-for': '127.0.0.2'}).status_int == 200
    assert _call(app, 'GET', '/metrics').status_int == 401


FIT = '/capacity/fit?resources=VCPU:1'


def test_fit_is_read_like_the_capacity_page(noauth_app):
    resp = _call(noauth_app, 'GET', FIT)
    assert resp.status_int == 200
    assert resp.json['fit']['by_root'] == {RP: 8}
    assert _call(noauth_app, 'GET', FIT, remote='10.1.2.3').status_int == 401
    assert _call(noauth_app, 'GET', FIT, token='admin',
                 remote='10.1.2.3').status_int == 200
    resp = _call(noauth_app, 'GET', FIT, token='alice:p1',
                 remote='10.1.2.3', headers={'x-roles': 'reader'})
    assert resp.status_int == 403
    assert RP not in resp.text
    assert 'placement:capacity:read' in resp.json['errors'][0]['detail']


def test_disabled_metrics_serve_no_fit():
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(
            fixtures.new_conf(metrics__enabled=False), db)
        assert _call(app, 'GET', FIT, token='admin').status_int == 404
        assert _call(app, 'GET', FIT).status_int == 401
    finally:
        cleanup()
