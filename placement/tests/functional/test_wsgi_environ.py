"""HTTP behaviour that needs a PEP 3333 environ (the gabbi transport
decodes paths as UTF-8, unlike real WSGI servers)."""

import json

import pytest
import webob

from placement.tests import fixtures


@pytest.fixture
def app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(), db)
    cleanup()


def _get(app, path_info, **headers):
    req = webob.Request.blank('/')
    req.environ['PATH_INFO'] = path_info
    req.headers.update({'x-auth-token': 'admin'}, **headers)
    return req.get_response(app)


def test_path_parameters_are_latin1_view_of_raw_bytes(app):
    # A server hands us %e2%98%83 as the Latin-1 decoding of its bytes.
    resp = _get(app, b'/resource_providers/\xe2\x98\x83'.decode('latin-1'))
    assert resp.status_int == 404
    detail = json.loads(resp.body)['errors'][0]['detail']
    assert 'No resource provider with uuid \u00e2\u0098\u0083 found' in detail


def test_double_leading_slash_is_unknown(app):
    assert _get(app, '//resource_providers').status_int == 404


def test_mount_prefix_serves_root_at_empty_path(app):
    req = webob.Request.blank('/')
    req.environ['SCRIPT_NAME'] = '/placement'
    req.environ['PATH_INFO'] = ''
    req.headers['x-auth-token'] = 'admin'
    resp = req.get_response(app)
    assert resp.status_int == 200
    assert json.loads(resp.body)['versions'][0]['links'][0]['href'] == ''


def test_mount_prefix_appears_in_links_and_location(app):
    req = webob.Request.blank(
        '/placement/resource_providers', method='POST',
        base_url='http://example.test:8080/placement',
        headers={'x-auth-token': 'admin', 'content-type': 'application/json',
                 'openstack-api-version': 'placement 1.20'},
        body=b'{"name": "mounted"}')
    req.environ['SCRIPT_NAME'] = '/placement'
    req.environ['PATH_INFO'] = '/resource_providers'
    resp = req.get_response(app)
    assert resp.status_int == 200
    uuid = json.loads(resp.body)['uuid']
    assert resp.headers['Location'] == (
        'http://example.test:8080/placement/resource_providers/%s' % uuid)
    assert json.loads(resp.body)['links'][0]['href'] == (
        '/placement/resource_providers/%s' % uuid)


def test_noauth_asks_for_a_token_at_the_bare_mount_prefix(app):
    # See api-ref/behaviour-choices.rst, 'A token at the bare mount prefix'.
    req = webob.Request.blank('/')
    req.environ['SCRIPT_NAME'] = '/placement'
    req.environ['PATH_INFO'] = ''
    assert req.get_response(app).status_int == 401
    req.environ['PATH_INFO'] = '/'
    assert req.get_response(app).status_int == 200
