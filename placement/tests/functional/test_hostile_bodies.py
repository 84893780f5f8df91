"""Request bodies built to hurt: nested beyond any schema, numbers JSON
does not have, or too large (``[oslo_middleware] max_request_body_size``).

Every endpoint that reads a JSON body must answer such input with a 4xx
error in the usual format, never a 500.
"""

import http.client
import io
import json
import uuid

import pytest
import webob

from placement.conf import middleware as middleware_conf
from placement.tests import fixtures
from placement.tests.gunicorn_server import GunicornServer

PROVIDER = 'aaaa0000-0000-4000-8000-00000000feed'
CONSUMER = 'cccc0000-0000-4000-8000-00000000feed'

#: (method, path, microversion) of every endpoint that reads a body.
BODY_ENDPOINTS = [
    ('POST', '/resource_providers', '1.39'),
    ('PUT', '/resource_providers/%s' % PROVIDER, '1.39'),
    ('POST', '/resource_providers/%s/inventories' % PROVIDER, '1.39'),
    ('PUT', '/resource_providers/%s/inventories' % PROVIDER, '1.39'),
    ('PUT', '/resource_providers/%s/inventories/VCPU' % PROVIDER, '1.39'),
    ('PUT', '/resource_providers/%s/aggregates' % PROVIDER, '1.39'),
    ('PUT', '/resource_providers/%s/traits' % PROVIDER, '1.39'),
    ('POST', '/resource_classes', '1.39'),
    ('PUT', '/resource_classes/CUSTOM_GOLD', '1.2'),
    ('PUT', '/allocations/%s' % CONSUMER, '1.39'),
    ('POST', '/allocations', '1.39'),
    ('POST', '/reshaper', '1.39'),
    ('POST', '/claims', '1.39'),
]


@pytest.fixture(scope='module')
def app():
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(fixtures.new_conf(), db)
    created = _request(app, 'POST', '/resource_providers', '1.39',
                       json.dumps({'name': 'victim', 'uuid': PROVIDER}))
    assert created.status_int == 200, created.body
    yield app
    cleanup()


def _request(app, method, path, version, body, **environ):
    req = webob.Request.blank(path, method=method, headers={
        'x-auth-token': 'admin', 'x-roles': 'admin,service',
        'content-type': 'application/json',
        'openstack-api-version': 'placement %s' % version})
    req.body = body.encode() if isinstance(body, str) else body
    req.environ.update(environ)
    return req.get_response(app)


def _error(resp):
    return json.loads(resp.body)['errors'][0]


@pytest.mark.parametrize('opening,closing', [('[', ']'), ('{"a":', '}')],
                         ids=['lists', 'objects'])
@pytest.mark.parametrize('method,path,version', BODY_ENDPOINTS)
def test_deeply_nested_json_is_malformed(app, method, path, version,
                                         opening, closing):
    body = opening * 100000 + '1' + closing * 100000
    resp = _request(app, method, path, version, body)
    assert resp.status_int == 400, resp.body[:300]
    assert 'Malformed JSON: nested too deeply' in _error(resp)['detail']


NON_FINITE = ['NaN', 'Infinity', '-Infinity', '1e400', '-1e400']


@pytest.mark.parametrize('token', NON_FINITE)
@pytest.mark.parametrize('method,path,version', BODY_ENDPOINTS)
def test_non_finite_numbers_are_malformed(app, method, path, version,
                                          token):
    # Python's parser reads the tokens as floats, and 1e400 as infinity:
    # once a 500 from the capacity rule, or a NaN stored by the reshaper.
    resp = _request(app, method, path, version, '{"total": %s}' % token)
    assert resp.status_int == 400, resp.body[:300]
    assert _error(resp)['detail'].strip().endswith(
        'Malformed JSON: %s' % ('%s is not a JSON number' % token
                                if token[-1].isalpha()
                                else 'number %s is out of range' % token))


def _inventory_put(ratio):
    return json.dumps({'resource_provider_generation': 0,
                       'total': 8}).replace('}', ', "allocation_ratio": %s}'
                                            % ratio)


@pytest.mark.parametrize('token', NON_FINITE)
def test_non_finite_ratio_of_an_inventory(app, token):
    resp = _request(app, 'PUT',
                    '/resource_providers/%s/inventories/VCPU' % PROVIDER,
                    '1.39', _inventory_put(token))
    assert resp.status_int == 400, resp.body[:300]
    assert 'Malformed JSON' in _error(resp)['detail']


def test_large_numbers_are_refused_before_the_database(app):
    resp = _request(app, 'PUT',
                    '/resource_providers/%s/inventories/VCPU' % PROVIDER,
                    '1.39', json.dumps({'resource_provider_generation': 0,
                                        'total': 2 ** 31}))
    assert resp.status_int == 400, resp.body[:300]
    assert 'is greater than the maximum of 2147483647' in (
        _error(resp)['detail'])
    resp = _request(app, 'PUT',
                    '/resource_providers/%s/inventories/VCPU' % PROVIDER,
                    '1.39', _inventory_put('3.5e38'))
    assert resp.status_int == 400, resp.body[:300]
    # Digits beyond what Python converts to an int.
    resp = _request(app, 'PUT', '/allocations/%s' % CONSUMER, '1.39',
                    '{"allocations": {"%s": {"resources": {"VCPU": 1%s}}}}'
                    % (PROVIDER, '0' * 5000))
    assert resp.status_int == 400, resp.body[:300]
    assert 'Malformed JSON' in _error(resp)['detail']


@pytest.mark.parametrize('method,path,body', [
    ('PUT', '/resource_providers/%s' % PROVIDER, {'name': '\ud800'}),
    ('PUT', '/allocations/%s' % CONSUMER, {
        'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
        'project_id': '\ud800', 'user_id': 'u', 'consumer_type': 'VM',
        'consumer_generation': None}),
    ('POST', '/claims', {
        'consumer_uuid': CONSUMER, 'project_id': 'p', 'user_id': 'u',
        'consumer_type': 'VM', 'consumer_generation': None,
        'query': 'resources=VCPU:1&required=CUSTOM_\udfff'}),
], ids=['provider-name', 'project-id', 'claim-query'])
def test_unpaired_surrogates_are_refused(app, method, path, body):
    # Once a 500: no driver can encode them for the database.
    resp = _request(app, method, path, '1.39', json.dumps(body))
    assert resp.status_int == 400, resp.body[:300]
    assert 'unpaired surrogates' in _error(resp)['detail']


@pytest.mark.parametrize('depth', [500, 900, 990])
def test_nesting_just_under_the_parser_limit_is_refused(app, depth):
    # Deep enough for the parser but not for validation or the error
    # message: still a 400, whichever step gives up.
    body = '{"name": %s1%s}' % ('[' * depth, ']' * depth)
    resp = _request(app, 'POST', '/resource_providers', '1.39', body)
    assert resp.status_int == 400, resp.body[:300]


# -- size limit ----------------------------------------------------------

LIMIT = 2000


@pytest.fixture(scope='module')
def small_limit_app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(
        oslo_middleware__max_request_body_size=LIMIT), db)
    cleanup()


def _provider_body(size, name=None):
    """A valid POST /resource_providers body of exactly ``size`` bytes."""
    body = json.dumps({'name': name or str(uuid.uuid4())}).encode()
    return body + b' ' * (size - len(body))


def _assert_too_large(resp, version):
    assert resp.status_int == 413, resp.body[:300]
    error = _error(resp)
    assert error['title'] == 'Request Entity Too Large'
    assert 'Request is too large' in error['detail']
    assert error['request_id'] == resp.headers['x-openstack-request-id']
    if version >= '1.23':
        assert error['code'] == 'placement.undefined_code'
    assert resp.headers['openstack-api-version'] == 'placement %s' % version


@pytest.mark.parametrize('method,path,version', BODY_ENDPOINTS)
def test_declared_length_over_the_limit(small_limit_app, method, path,
                                        version):
    resp = _request(small_limit_app, method, path, version,
                    b'{"name": "%s"}' % (b'x' * LIMIT))
    _assert_too_large(resp, version)
    assert str(LIMIT) in _error(resp)['detail']


def _chunked(app, body, version='1.39'):
    """POST /resource_providers with no Content-Length, as servers hand
    a chunked body to the application."""
    req = webob.Request.blank('/resource_providers', method='POST', headers={
        'x-auth-token': 'admin', 'content-type': 'application/json',
        'openstack-api-version': 'placement %s' % version})
    req.environ['wsgi.input'] = io.BytesIO(body)
    req.environ.pop('CONTENT_LENGTH', None)
    req.environ['wsgi.input_terminated'] = True
    return req.get_response(app)


def test_chunked_body_over_the_limit(small_limit_app):
    _assert_too_large(_chunked(small_limit_app, _provider_body(LIMIT + 1)),
                      '1.39')
    _assert_too_large(_chunked(small_limit_app, _provider_body(LIMIT * 40),
                               '1.20'), '1.20')


def test_bodies_up_to_the_limit_are_served(small_limit_app):
    resp = _chunked(small_limit_app, _provider_body(LIMIT))
    assert resp.status_int == 200, resp.body[:300]
    resp = _request(small_limit_app, 'POST', '/resource_providers', '1.39',
                    _provider_body(LIMIT))
    assert resp.status_int == 200, resp.body[:300]


def _allocations_body(consumers):
    """POST /allocations as a scheduler sends it: each consumer on a
    compute node and a shared disk provider."""
    return json.dumps({str(uuid.uuid4()): {
        'allocations': {
            str(uuid.uuid4()): {'resources': {'VCPU': 4, 'MEMORY_MB': 8192}},
            str(uuid.uuid4()): {'resources': {'DISK_GB': 80}}},
        'project_id': uuid.uuid4().hex, 'user_id': uuid.uuid4().hex,
        'consumer_generation': None, 'consumer_type': 'INSTANCE'}
        for _n in range(consumers)}).encode()


def test_default_fits_thousands_of_consumers(app):
    body = _allocations_body(5000)
    default = middleware_conf.DEFAULT_MAX_REQUEST_BODY_SIZE
    assert len(body) * 4 < default
    # One bad consumer at the end: the whole body was read and judged.
    body = body[:-1] + b', "%s": {}}' % str(uuid.uuid4()).encode()
    resp = _request(app, 'POST', '/allocations', '1.39', body)
    assert resp.status_int == 400, resp.body[:300]
    assert 'JSON does not validate' in _error(resp)['detail']
    resp = _request(app, 'POST', '/allocations', '1.39',
                    b' ' * (default - 1) + b'{}')
    _assert_too_large(resp, '1.39')


def test_chunked_through_gunicorn(tmp_path):
    db_url = 'sqlite:///%s' % (tmp_path / 'placement.sqlite')
    environment = {'OS_OSLO_MIDDLEWARE__MAX_REQUEST_BODY_SIZE': str(LIMIT)}
    with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=1,
                        environment=environment) as server:
        for size, expected in ((LIMIT, 200), (LIMIT * 3, 413)):
            connection = http.client.HTTPConnection(
                '127.0.0.1', server.port, timeout=30)
            try:
                connection.request(
                    'POST', '/resource_providers',
                    body=iter([_provider_body(size)]),
                    encode_chunked=True, headers={
                        'x-auth-token': 'admin',
                        'content-type': 'application/json',
                        'transfer-encoding': 'chunked',
                        'openstack-api-version': 'placement 1.39'})
                resp = connection.getresponse()
                body = json.loads(resp.read())
            finally:
                connection.close()
            assert resp.status == expected, body
            if expected == 413:
                assert body['errors'][0]['status'] == 413
        assert not server.errors()
