"""The route table and the dispatcher that serves it.

Every path a client can call is listed in ROUTES with its methods, in
the order the ``Allow`` header of a 405 lists them. A
method maps to one handler or to a tuple of handlers covering different
microversion ranges (declared with ``microversion.serves``). The
dispatcher answers 404 for unknown paths and for versions no handler
serves, and 405 with an ``Allow`` header for unlisted methods.
"""

import webob

from placement import exception
from placement.handlers import aggregate
from placement.handlers import allocation
from placement.handlers import allocation_candidate
from placement.handlers import candidate_explain
from placement.handlers import claim
from placement.handlers import inventory
from placement.handlers import metrics
from placement.handlers import openapi_document
from placement.handlers import reshaper
from placement.handlers import resource_class
from placement.handlers import resource_provider
from placement.handlers import root
from placement.handlers import trait
from placement.handlers import usage
from placement import microversion
from placement.middleware import fault as middleware
from placement.middleware import requestlog
from placement.web import errors
from placement.web import router

ROUTES = {
    '/': {
        'GET': root.home,
    },
    '/resource_providers': {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider,
    },
    '/resource_providers/{uuid}': {
        'GET': resource_provider.get_resource_provider,
        'DELETE': resource_provider.delete_resource_provider,
        'PUT': resource_provider.update_resource_provider,
    },
    '/resource_providers/{uuid}/inventories': {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': (inventory.delete_inventories_not_allowed,
                   inventory.delete_inventories),
    },
    '/resource_providers/{uuid}/inventories/{resource_class}': {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory,
    },
    '/resource_providers/{uuid}/usages': {
        'GET': usage.list_usages,
    },
    '/resource_providers/{uuid}/allocations': {
        'GET': allocation.get_provider_allocations,
    },
    '/resource_providers/{uuid}/aggregates': {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates,
    },
    '/resource_providers/{uuid}/traits': {
        'GET': trait.list_provider_traits,
        'PUT': trait.update_provider_traits,
        'DELETE': trait.delete_provider_traits,
    },
    '/traits': {
        'GET': trait.list_traits,
    },
    '/traits/{name}': {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait,
    },
    '/allocation_candidates': {
        'GET': allocation_candidate.list_allocation_candidates,
    },
    '/allocation_candidates/explain': {
        'GET': candidate_explain.explain_allocation_candidates,
    },
    '/claims': {
        'POST': claim.create_claim,
    },
    '/resource_classes': {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class,
    },
    '/allocations': {
        'POST': allocation.set_many_allocations,
    },
    '/allocations/{consumer_uuid}': {
        'GET': allocation.get_allocations,
        'PUT': (allocation.set_allocations_list, allocation.set_allocations),
        'DELETE': allocation.delete_allocations,
    },
    '/usages': {
        'GET': (usage.project_usages, usage.project_usages_by_type),
    },
    '/reshaper': {
        'POST': reshaper.reshape,
    },
    '/resource_classes/{name}': {
        'GET': resource_class.get_resource_class,
        'PUT': (resource_class.update_resource_class,
                resource_class.create_or_confirm_resource_class),
        'DELETE': resource_class.delete_resource_class,
    },
    '/metrics': {
        'GET': metrics.get_metrics,
    },
    '/capacity': {
        'GET': metrics.get_capacity,
    },
    '/openapi.json': {
        'GET': openapi_document.get_openapi_document,
    },
}


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


class Dispatcher:
    """WSGI application serving ROUTES."""

    def __init__(self):
        self.router = router.Router(ROUTES)

    def __call__(self, environ, start_response):
        try:
            _content_length_precheck(environ)
            # Handlers build their own responses (util.json_response).
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
            environ[middleware.ENVIRON_VARY] = getattr(exc, 'sets_vary', True)
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
        methods = ROUTES[route]
        handlers = methods.get(req.method)
        if handlers is None:
            raise errors.MethodNotAllowed(
                'The method specified is not allowed for this resource.',
                headers={'allow': ', '.join(methods)})
        if not isinstance(handlers, tuple):
            handlers = (handlers,)
        handler = microversion.select(handlers, microversion.of(req))
        if handler is None:
            raise errors.NotFound()
        req.urlvars = urlvars
        return handler(req)
