"""The dispatcher: the WSGI application that serves a route table.

It answers 404 for unknown paths and for versions no handler serves,
and 405 with an ``Allow`` header for unlisted methods
(``placement/web/route_table.py`` holds the table).
"""

import webob

from placement import exception
from placement import microversion
from placement.middleware import microversion as version_middleware
from placement.middleware import requestlog
from placement.web import errors
from placement.web import router


def _content_length_precheck(environ):
    """Reject a body without a content type before routing
    (api-ref/general.rst, 'Content negotiation')."""
    length = environ.get('CONTENT_LENGTH')
    if not length:
        return
    try:
        length = int(length)
    except ValueError:
        raise errors.BadRequest('content-length header must be an integer',
                                vary=False)
    if length > 0 and not environ.get('CONTENT_TYPE'):
        raise errors.BadRequest(
            'content-type header required when content-length > 0',
            vary=False)


#: The route template the dispatcher matched, for the request metrics
#: (which would otherwise match the path again).
ENVIRON_ROUTE = 'placement.route'
#: The table being served, for the handler that describes it (the
#: OpenAPI document), which the table itself lists.
ENVIRON_ROUTES = 'placement.routes'


class Dispatcher:
    """WSGI application serving ``routes`` (``placement.web.route_table``)."""

    def __init__(self, routes):
        self.routes = routes
        self.router = router.Router(routes)

    def __call__(self, environ, start_response):
        try:
            _content_length_precheck(environ)
            # Handlers build their own responses (responses.json_response).
            response = self._dispatch(webob.Request(environ))
        except exception.DatabaseUnavailable as exc:
            # Logged once, in the request's log line; no traceback.
            environ[requestlog.ENVIRON_FAILURE] = str(exc)
            response = errors.render(
                errors.ServiceUnavailable(
                    'The database is unavailable; retry later.',
                    code=errors.DATABASE_UNAVAILABLE),
                environ, environ.get(requestlog.ENVIRON_REQUEST_ID),
                environ.get(microversion.ENVIRON_KEY))
        except exception.TransactionConflict as exc:
            # A writer that kept losing to others (handlers that know
            # ConcurrentUpdateDetected answer it themselves): 409, as a
            # provider generation race is, never 500.
            environ[requestlog.ENVIRON_FAILURE] = exc.reason
            response = errors.render(
                errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE),
                environ, environ.get(requestlog.ENVIRON_REQUEST_ID),
                environ.get(microversion.ENVIRON_KEY))
        except webob.exc.HTTPException as exc:
            environ[version_middleware.ENVIRON_VARY] = getattr(
                exc, 'sets_vary', True)
            response = errors.render(
                exc, environ, environ.get(requestlog.ENVIRON_REQUEST_ID),
                environ.get(microversion.ENVIRON_KEY))
        return response(environ, start_response)

    def _dispatch(self, req):
        # PATH_INFO is the Latin-1 view of the raw path (PEP 3333); path
        # parameters deliberately keep it (see api-ref/behaviour-choices.rst,
        # 'Path parameters read as Latin-1').
        path = req.environ.get('PATH_INFO') or '/'
        match = self.router.match(path)
        if match is None:
            raise errors.NotFound(vary=False)
        route, urlvars = match
        req.environ[ENVIRON_ROUTE] = route
        req.environ[ENVIRON_ROUTES] = self.routes
        methods = self.routes[route]
        handlers = methods.get(req.method)
        if handlers is None:
            raise errors.MethodNotAllowed(
                'The method specified is not allowed for this resource.',
                headers={'allow': ', '.join(methods)})
        if not isinstance(handlers, tuple):
            handlers = (handlers,)
        version = microversion.of(req)
        handler = microversion.select(handlers, version)
        if handler is None:
            # Upstream Placement gives no detail (see
            # api-ref/behaviour-choices.rst, 'Outside a microversion').
            raise errors.NotFound(
                '%s %s is served at microversion %s, not at %s.' % (
                    req.method, route, microversion.served(handlers),
                    version))
        req.urlvars = urlvars
        return handler(req)
