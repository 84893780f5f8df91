"""Errors people can read, bounded: a 500 carries no SQL or driver text,
a detail quotes at most a bounded prefix of what the client sent, a
validation error says which field and which rule without dumping the
schema, and a request outside an operation's microversions is told
which ones serve it."""

import json
import uuid

import pytest
from sqlalchemy import exc as sa_exc

from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures
from placement.web import errors


@pytest.fixture(scope='module')
def app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(), db)
    cleanup()


def _call(app, method, path, body=None, version='1.39'):
    import webob
    req = webob.Request.blank(path, method=method, headers={
        'x-auth-token': 'admin', 'x-roles': 'admin,service',
        'content-type': 'application/json', 'accept': 'application/json',
        'openstack-api-version': 'placement %s' % version})
    if body is not None:
        req.body = body if isinstance(body, bytes) else json.dumps(
            body).encode()
    return req.get_response(app)


def _detail(resp):
    return json.loads(resp.body)['errors'][0]['detail']


def test_a_server_error_carries_no_sql(app, monkeypatch):
    def broken(*_args, **_kwargs):
        raise sa_exc.IntegrityError(
            'UPDATE inventories SET allocation_ratio=? WHERE secret_column',
            (None,), Exception('NOT NULL constraint failed: inventories'))
    monkeypatch.setattr(rp_obj, 'get_by_uuid', broken)
    # Past the suite's contract check, which refuses any 500.
    resp = _call(getattr(app, 'application', app), 'GET',
                 '/resource_providers/%s' % uuid.uuid4())
    assert resp.status_int == 500
    detail = _detail(resp)
    assert errors.SERVER_ERROR in detail
    for leak in ('UPDATE', 'secret_column', 'NOT NULL', 'IntegrityError',
                 'SQL'):
        assert leak not in resp.text


def test_a_huge_invalid_value_is_quoted_in_part(app):
    resp = _call(app, 'POST', '/resource_providers',
                 {'name': 'x' * (3 * 1024 * 1024)})
    assert resp.status_int == 400
    assert len(resp.body) < 2000
    detail = _detail(resp)
    # The first line clients match, the field and the rule.
    assert "JSON does not validate: 'xxx" in detail
    assert '(3145730 characters)' in detail
    assert "Failed validating 'maxLength' (200) in schema['properties']" \
        "['name']" in detail
    assert "On instance['name']" in detail


def test_a_validation_error_shows_no_schema(app):
    resp = _call(app, 'POST', '/resource_providers',
                 {'name': 'x', 'uuid': 5})
    assert resp.status_int == 400
    detail = _detail(resp)
    assert "JSON does not validate: 5 is not of type 'string'" in detail
    assert "Failed validating 'type' ('string') in " \
        "schema['properties']['uuid']" in detail
    assert "On instance['uuid']" in detail
    assert "{'type'" not in detail and "'format'" not in detail


def test_a_huge_unknown_key_is_quoted_in_part(app):
    resp = _call(app, 'POST', '/resource_providers',
                 {'name': 'x', 'k' * 100000: 1})
    assert resp.status_int == 400
    assert len(resp.body) < 3000
    assert 'Additional properties are not allowed' in _detail(resp)


def test_a_huge_query_value_is_quoted_in_part(app):
    resp = _call(app, 'GET', '/resource_providers?uuid=' + 'n' * 20000)
    assert resp.status_int == 400
    assert len(resp.body) < 3000
    assert 'Invalid query string parameters' in _detail(resp)


def test_many_unknown_names_are_quoted_in_part(app):
    resp = _call(app, 'GET', '/allocation_candidates?resources=VCPU:1&'
                 'required=' + ','.join('CUSTOM_T%d' % n
                                        for n in range(2000)))
    assert resp.status_int == 400
    assert len(_detail(resp)) <= errors.DETAIL_LIMIT + 100


@pytest.mark.parametrize('method,path,version,served', [
    ('POST', '/claims', '1.37', '1.38 and later'),
    ('POST', '/reshaper', '1.29', '1.30 and later'),
    ('GET', '/usages', '1.8', '1.9 and later'),
])
def test_outside_its_microversions_an_operation_says_which(
        app, method, path, version, served):
    resp = _call(app, method, path, {}, version=version)
    assert resp.status_int == 404
    assert _detail(resp).strip().endswith(
        '%s %s is served at microversion %s, not at %s.'
        % (method, path, served, version))
