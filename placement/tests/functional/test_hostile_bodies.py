"""Request bodies built to hurt: nested beyond any schema, or too large.

Every endpoint that reads a JSON body must answer such input with a 4xx
error in the usual format, never a 500.
"""

import json
import uuid

import pytest
import webob

from placement.tests import fixtures

PROVIDER = str(uuid.uuid4())

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
    ('PUT', '/allocations/%s' % uuid.uuid4(), '1.39'),
    ('POST', '/allocations', '1.39'),
    ('POST', '/reshaper', '1.39'),
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


@pytest.mark.parametrize('depth', [500, 900, 990])
def test_nesting_just_under_the_parser_limit_is_refused(app, depth):
    # Deep enough for the parser but not for validation or the error
    # message: still a 400, whichever step gives up.
    body = '{"name": %s1%s}' % ('[' * depth, ']' * depth)
    resp = _request(app, 'POST', '/resource_providers', '1.39', body)
    assert resp.status_int == 400, resp.body[:300]
