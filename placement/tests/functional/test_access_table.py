"""Who may call what: every route and method of the route table (new
routes included automatically), as every kind of caller, under both
``[oslo_policy] enforce_new_defaults`` settings, through
keystonemiddleware validating tokens over HTTP with a keystone stand-in
on loopback (``placement/tests/keystone_server.py``), as in production.

Each answer is checked against the documented policy: the rule guarding
each operation comes from ``placement/policies/api_rules.py`` and what
its check string lets in from ``policy_walk.ALLOWED``, written down
independently of the policy code; the request samples are the policy
walk's. Token-less callers come from outside ``[metrics]
trusted_networks``.
"""

import json
import uuid

import pytest
import webob

from placement import conf as placement_conf
from placement.middleware import auth
from placement.middleware import healthcheck
from placement.web import route_table
from placement.tests import fixtures
from placement.tests.functional import policy_walk
from placement.tests import keystone_server

REMOTE = '192.0.2.10'
SERVICE_PASSWORD = 'service-password-%s' % uuid.uuid4().hex

#: Caller -> (token, project, roles as keystone would list them with
#: implied roles expanded); the names are those of policy_walk.ALLOWED.
CALLERS = {
    'anonymous': None,
    'unknown token': ('no-such-token', None, None),
    'other project reader': ('tok-reader-p2', 'p2', ['reader']),
    'project reader': ('tok-reader-p1', 'p1', ['reader']),
    'project member': ('tok-member-p1', 'p1', ['member', 'reader']),
    'service': ('tok-service', 'services', ['service']),
    'admin': ('tok-admin', 'p-admin', ['admin', 'member', 'reader']),
}
MODES = {'new': True, 'legacy': False}

#: Values of the policy walk's gabbi placeholders.
ENVIRON = {
    "$ENVIRON['MISSING_UUID']": str(uuid.uuid4()),
    "$ENVIRON['CONSUMER_UUID']": str(uuid.uuid4()),
    "$ENVIRON['PROJECT_ID']": 'p1',
    "$ENVIRON['USER_ID']": 'u1',
}

#: Routes served to everyone (the version document, the public documents).
OPEN = {'/'} | set(auth.PUBLIC)


def _filled(value):
    if isinstance(value, str):
        for placeholder, real in ENVIRON.items():
            value = value.replace(placeholder, real)
        return value
    if isinstance(value, dict):
        return {_filled(k): _filled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v) for v in value]
    return value


def operations():
    """(method, path template) of every route, and the health check."""
    routed = [(method, path) for path, methods in route_table.ROUTES.items()
              for method in methods]
    return routed + [('GET', healthcheck.PATH)]


@pytest.fixture(scope='module')
def keystone():
    with keystone_server.KeystoneServer(SERVICE_PASSWORD) as server:
        for token in CALLERS.values():
            if token and token[1]:
                server.add(token[0], 'user-' + token[0], token[1], token[2])
        yield server


def _keystone_conf(keystone, directory, lines=(), authtoken=()):
    path = directory / 'placement.conf'
    text = ['[api]', 'auth_strategy = keystone', '[metrics]',
            'capacity_refresh_interval = 0'] + list(lines)
    text += ['[keystone_authtoken]'] + ['%s = %s' % item for item in list(
        keystone.authtoken_options().items()) + list(authtoken)]
    path.write_text('\n'.join(text) + '\n')
    return placement_conf.build([], config_files=[str(path)])


@pytest.fixture(scope='module')
def apps(keystone, tmp_path_factory):
    db, cleanup = fixtures.new_database()
    built = {}
    for mode, enforce in MODES.items():
        conf = _keystone_conf(
            keystone, tmp_path_factory.mktemp('conf'),
            ['[oslo_policy]', 'enforce_new_defaults = %s' % enforce])
        built[mode] = fixtures.new_app(conf, db)
    yield built
    cleanup()


def _request(app, method, url, token, body=None):
    req = webob.Request.blank(url, method=method, remote_addr=REMOTE)
    req.headers['openstack-api-version'] = policy_walk.VERSION
    req.headers['accept'] = 'application/json'
    if token:
        req.headers['x-auth-token'] = token
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    return req.get_response(app)


def _expected(mode, caller, method, path):
    """(status, rule or None) the documented policy gives ``caller``."""
    if path in OPEN:
        return 200, None
    if path == healthcheck.PATH:
        return 200, None
    sample = policy_walk.SAMPLES[(method, path)]
    rule, check_str = policy_walk.rules_by_operation()[(method, path)]
    if caller in ('anonymous', 'unknown token'):
        return 401, rule
    allowed = policy_walk.ALLOWED[check_str][mode]
    # keystone lists implied roles: a member of p1 is a reader of p1 too.
    if caller in allowed or (caller == 'project member'
                             and 'project reader' in allowed):
        return sample.allowed, rule
    return 403, rule


def _call(app, mode, caller, method, path):
    token = CALLERS[caller] and CALLERS[caller][0]
    if path in OPEN or path == healthcheck.PATH:
        return _request(app, method, path, token)
    sample = policy_walk.SAMPLES[(method, path)]
    url = _filled(policy_walk.sample_url(method, path, sample))
    return _request(app, method, url, token, _filled(sample.body))


def test_every_operation_is_in_the_table():
    # Every policed route has a sample and a documented rule (the policy
    # walk's own test checks the converse), so the table covers it.
    for method, path in operations():
        if path in OPEN or path == healthcheck.PATH:
            continue
        assert (method, path) in policy_walk.SAMPLES, (method, path)
        assert (method, path) in policy_walk.rules_by_operation()


@pytest.mark.parametrize('caller', sorted(CALLERS))
@pytest.mark.parametrize('mode', sorted(MODES))
def test_access_table(apps, keystone, mode, caller):
    wrong = []
    for method, path in operations():
        resp = _call(apps[mode], mode, caller, method, path)
        status, rule = _expected(mode, caller, method, path)
        if resp.status_int != status:
            wrong.append('%s %s: %d, documented %d (%s)' % (
                method, path, resp.status_int, status, rule))
        elif status == 403 and rule not in resp.text:
            wrong.append('%s %s: 403 not naming %s' % (method, path, rule))
        elif status == 401:
            # keystonemiddleware's answer, pointing at the stand-in.
            assert keystone.url in resp.headers['www-authenticate']
        if path == healthcheck.PATH:
            details = resp.content_type == 'application/json'
            if details != (caller == 'admin'):
                wrong.append('GET /healthcheck: details %s' % details)
    assert not wrong, '\n'.join(wrong)


def test_tokens_were_validated_over_http(apps, keystone):
    validated = {headers.get('X-Subject-Token')
                 for method, path, headers, _ in keystone.seen
                 if method == 'GET' and path.startswith('/v3/auth/tokens')}
    assert {token[0] for token in CALLERS.values() if token} <= validated


def test_the_extensions_are_in_the_table():
    assert {('POST', '/claims'), ('GET', '/capacity'), ('GET', '/metrics'),
            ('GET', '/allocation_candidates/explain'),
            ('GET', '/openapi.json'), ('GET', '/healthcheck')} <= set(
                operations())


def test_service_tokens_must_carry_the_service_role_when_required(
        keystone, tmp_path):
    # nova sends its own token as X-Service-Token beside the user's
    # (api-ref/security.rst, 'Service tokens').
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(_keystone_conf(
            keystone, tmp_path, authtoken=[
                ('service_token_roles', 'service'),
                ('service_token_roles_required', 'True')]), db)

        def status(service_token):
            req = webob.Request.blank('/resource_providers',
                                      remote_addr=REMOTE)
            req.headers['x-auth-token'] = 'tok-admin'
            req.headers['x-service-token'] = service_token
            return req.get_response(app).status_int
        assert status('tok-service') == 200
        assert status('tok-reader-p2') == 401
        assert status('no-such-token') == 401
    finally:
        cleanup()
