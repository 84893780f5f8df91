"""``auth_strategy = keystone`` without a keystone server.

keystonemiddleware's AuthTokenFixture replaces only its token lookup with
a table of known tokens, so everything from the middleware down runs for
real.
"""

from keystonemiddleware import fixture as keystone_fixture
import pytest
import webob

from placement.tests import fixtures

WWW_AUTHENTICATE_URI = 'https://keystone.example/identity'

#: token -> (project, roles); keystone would expand implied roles.
TOKENS = {
    'admin-token': ('p-admin', ['admin', 'member', 'reader']),
    'service-token': ('p-service', ['service']),
    'reader-token': ('p1', ['reader']),
}


@pytest.fixture
def app():
    tokens = keystone_fixture.AuthTokenFixture()
    tokens.setUp()
    for token, (project, roles) in TOKENS.items():
        tokens.add_token_data(token_id=token, user_id='u-' + project,
                              project_id=project, role_list=roles)
    db, cleanup = fixtures.new_database()
    conf = fixtures.new_conf(
        keystone_authtoken__www_authenticate_uri=WWW_AUTHENTICATE_URI)
    conf.set_override('auth_strategy', 'keystone', group='api')
    yield fixtures.new_app(conf, db)
    cleanup()
    tokens.cleanUp()


def _get(app, path, token=None):
    req = webob.Request.blank(path)
    if token:
        req.headers['x-auth-token'] = token
    return req.get_response(app)


def test_version_document_needs_no_token(app):
    assert _get(app, '/').status_int == 200


@pytest.mark.parametrize('token', [None, 'forged-token'])
def test_openapi_document_needs_no_token(app, token):
    # api-ref/behaviour-choices.rst, 'The OpenAPI document is public'.
    resp = _get(app, '/openapi.json?microversion=1.20', token)
    assert resp.status_int == 200
    assert resp.json['info']['version'] == '1.20'


@pytest.mark.parametrize('token', [None, 'forged-token'])
def test_missing_or_invalid_token_gets_keystone_401(app, token):
    resp = _get(app, '/resource_providers', token)
    assert resp.status_int == 401
    assert resp.headers['WWW-Authenticate'] == (
        'Keystone uri="%s"' % WWW_AUTHENTICATE_URI)
    assert resp.json == {'error': {
        'code': 401, 'title': 'Unauthorized',
        'message': 'The request you have made requires authentication.'}}


@pytest.mark.parametrize('token, status', [
    ('admin-token', 200),
    ('service-token', 200),
    ('reader-token', 403),
])
def test_token_roles_reach_policy(app, token, status):
    assert _get(app, '/resource_providers', token).status_int == status


def test_identity_headers_from_the_client_are_not_trusted(app):
    req = webob.Request.blank('/resource_providers')
    req.headers.update({'x-auth-token': 'reader-token',
                        'x-roles': 'admin', 'x-user-id': 'admin'})
    assert req.get_response(app).status_int == 403
