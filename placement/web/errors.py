"""HTTP errors raised by handlers and the one place they become responses.

Handlers raise the classes below (webob HTTP exceptions carrying a
placement error ``code``). ``render`` turns any webob HTTP exception into
the error document of api-ref/general.rst, 'Errors': JSON when the client
prefers it, HTML or plain text otherwise (webob chooses, exactly as the
reference does).
"""

import webob.exc

from placement import microversion

# Error codes (api-ref/general.rst, 'Errors'). These strings never change.
UNDEFINED = 'placement.undefined_code'
CONCURRENT_UPDATE = 'placement.concurrent_update'
INVENTORY_INUSE = 'placement.inventory.inuse'
DUPLICATE_NAME = 'placement.duplicate_name'
PROVIDER_INUSE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = (
    'placement.resource_provider.cannot_delete_parent')
PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
QUERY_DUPLICATE_KEY = 'placement.query.duplicate_key'
QUERY_BAD_VALUE = 'placement.query.bad_value'
QUERY_MISSING_VALUE = 'placement.query.missing_value'
DATABASE_UNAVAILABLE = 'placement.database_unavailable'
CLAIM_NO_CANDIDATES = 'placement.claim.no_candidates'
QUERY_TOO_LARGE = 'placement.query.too_large'

#: Seconds a client is asked to wait before retrying after a 503.
RETRY_AFTER = 5

#: Characters of one piece of client input an error message quotes.
ECHO_LIMIT = 200
#: Characters of any error detail, whatever it quotes.
DETAIL_LIMIT = 4096
#: The detail of every 500: what failed is in the service's log.
SERVER_ERROR = ('Unexpected error; the service log has the details of '
                'this request.')


def bounded(text, limit=ECHO_LIMIT):
    """``text`` (any value, as str), cut to ``limit`` characters with
    a marker: an error quotes what the client sent, never all of it."""
    text = str(text)
    if len(text) <= limit:
        return text
    return '%s... (%d characters)' % (text[:limit], len(text))


class _PlacementError:
    """Mixin: a webob HTTP exception with a placement error code.

    ``vary=False`` (stored as ``sets_vary``) marks errors upstream
    Placement raises outside handlers, whose responses lack ``Vary:
    openstack-api-version`` (see
    api-ref/behaviour-choices.rst, 'Errors without Vary').
    """

    def __init__(self, message='', code=UNDEFINED, vary=True, headers=None,
                 **kwargs):
        super().__init__(detail=message, headers=headers, **kwargs)
        self.error_code = code
        self.sets_vary = vary


class BadRequest(_PlacementError, webob.exc.HTTPBadRequest):
    pass


class Forbidden(_PlacementError, webob.exc.HTTPForbidden):
    pass


class NotFound(_PlacementError, webob.exc.HTTPNotFound):
    pass


class MethodNotAllowed(_PlacementError, webob.exc.HTTPMethodNotAllowed):
    pass


class NotAcceptable(_PlacementError, webob.exc.HTTPNotAcceptable):
    pass


class Conflict(_PlacementError, webob.exc.HTTPConflict):
    pass


class UnsupportedMediaType(_PlacementError,
                           webob.exc.HTTPUnsupportedMediaType):

    def __init__(self, media_type, **kwargs):
        # The envelope names the received type, "None" when absent.
        template = ('The request media type %s is not supported by this '
                    'server. <br /><br />\n${detail}' % media_type)
        super().__init__(
            'The media type %s is not supported, use application/json'
            % media_type, body_template=template, **kwargs)


class RequestEntityTooLarge(_PlacementError,
                            webob.exc.HTTPRequestEntityTooLarge):
    pass


class RequestURITooLong(_PlacementError, webob.exc.HTTPRequestURITooLong):
    pass


class ServiceUnavailable(_PlacementError,
                         webob.exc.HTTPServiceUnavailable):
    """503 with ``Retry-After``: the request may succeed if sent later."""

    def __init__(self, message='', **kwargs):
        kwargs.setdefault('headers', {'retry-after': str(RETRY_AFTER)})
        super().__init__(message, **kwargs)


class InternalServerError(_PlacementError,
                          webob.exc.HTTPInternalServerError):
    pass


def render(exc, environ, request_id, version=None, extra=None):
    """Return a webob Response for the HTTP exception ``exc``.

    ``version`` is the negotiated microversion (None if unknown), which
    decides whether ``code`` is present; ``extra`` adds members to the
    error object (e.g. max/min version on a 406).
    """
    code = getattr(exc, 'error_code', UNDEFINED)
    if exc.detail and len(exc.detail) > DETAIL_LIMIT:
        exc.detail = bounded(exc.detail, DETAIL_LIMIT)

    def json_formatter(body, status, title, environ):
        error = {'status': exc.status_int, 'title': exc.title,
                 'detail': webob.exc.strip_tags(body)}
        if version is not None and version >= microversion.ERROR_CODES:
            error['code'] = code
        error['request_id'] = request_id
        error.update(extra or {})
        return {'errors': [error]}

    exc.json_formatter = json_formatter
    return exc
