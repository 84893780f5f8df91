"""Authentication middlewares and the request-context builder."""

import logging

import webob.exc

from placement import context as placement_context
from placement.middleware import trusted_network

ENVIRON_CONTEXT = 'placement.context'
#: Paths where a token is checked if sent but not required.
TOKEN_OPTIONAL = ('/healthcheck',)
#: Documents served to anyone, like the version document (see
#: api-ref/behaviour-choices.rst, 'The OpenAPI document is public').
PUBLIC = ('/openapi.json',)

LOG = logging.getLogger(__name__)


def is_root(environ, allow_empty):
    """True for the version document, which is never authenticated.

    The bare mount prefix (empty path) counts only when ``allow_empty``:
    under noauth2 upstream Placement still asks for a token there (see
    api-ref/behaviour-choices.rst, 'A token at the bare mount prefix').
    """
    path = environ.get('PATH_INFO', '')
    return path == '/' or (allow_empty and path == '')


def is_open(environ, allow_empty):
    """True for requests served without authentication: the version
    document, the ``PUBLIC`` paths and the trusted-network reads of
    ``trusted_network``."""
    return (is_root(environ, allow_empty)
            or environ.get('PATH_INFO', '') in PUBLIC
            or trusted_network.trusted(environ))


def token_optional(environ):
    """True for the health check: load balancers send no token."""
    return environ.get('PATH_INFO', '') in TOKEN_OPTIONAL


class NoAuth:
    """``noauth2``: trust ``X-Auth-Token: user[:project]`` (testing only)."""

    def __init__(self, application):
        self.application = application
        # Whoever starts a service this way must be told, every time.
        LOG.warning('[api] auth_strategy = noauth2: requests are NOT '
                    'authenticated, any caller can act as admin. For '
                    'development and tests only; never expose this service.')

    def __call__(self, environ, start_response):
        # Plain WSGI, not webob: it runs on every request.
        if is_open(environ, allow_empty=False):
            return self.application(environ, start_response)
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token and token_optional(environ):
            return self.application(environ, start_response)
        if not token:
            return webob.exc.HTTPUnauthorized()(environ, start_response)
        user_id, _sep, project_id = token.partition(':')
        project_id = project_id or user_id
        if 'HTTP_X_ROLES' in environ:
            roles = [r.strip() for r in environ['HTTP_X_ROLES'].split(',')]
        else:
            roles = ['admin'] if user_id == 'admin' else []
        environ['HTTP_X_USER_ID'] = user_id
        environ['HTTP_X_ROLES'] = ','.join(roles)
        if not environ.get('HTTP_OPENSTACK_SYSTEM_SCOPE'):
            environ['HTTP_X_TENANT_ID'] = project_id
        return self.application(environ, start_response)


class KeystoneAuth:
    """keystonemiddleware's auth_token for everything but the root.

    Where a token is optional, a second auth_token that delays its
    decision lets requests without a valid token through, still removing
    any identity headers the client sent.
    """

    def __init__(self, application, conf):
        from keystonemiddleware import auth_token
        self.application = application
        self.protected = auth_token.AuthProtocol(
            application, {'oslo_config_config': conf})
        self.optional = auth_token.AuthProtocol(
            application, {'oslo_config_config': conf,
                          'delay_auth_decision': True})

    def __call__(self, environ, start_response):
        if is_open(environ, allow_empty=True):
            return self.application(environ, start_response)
        if token_optional(environ):
            return self.optional(environ, start_response)
        return self.protected(environ, start_response)


class ContextBuilder:
    """Build the RequestContext from identity headers; 401 without user."""

    def __init__(self, application, db, conf, policy):
        self.application = application
        self.db = db
        self.conf = conf
        self.policy = policy

    def __call__(self, environ, start_response):
        ctx = placement_context.RequestContext.from_environ(
            environ, db=self.db, config=self.conf, policy=self.policy)
        if (ctx.user_id is None
                and not is_open(environ, allow_empty=True)
                and not token_optional(environ)):
            return webob.exc.HTTPUnauthorized()(environ, start_response)
        environ[ENVIRON_CONTEXT] = ctx
        return self.application(environ, start_response)
