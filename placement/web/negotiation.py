"""What every handler reads off the request first: the auth context, the
negotiated microversion, and the JSON media type (406 and 415)."""

import functools

from placement import microversion
from placement.middleware import auth
from placement.web import errors

JSON = 'application/json'


def context(req):
    """The RequestContext built by the auth layer."""
    return req.environ[auth.ENVIRON_CONTEXT]


def version(req):
    return microversion.of(req)


def require_json_content(handler):
    """Answer 415 unless the body's media type is exactly JSON."""
    @functools.wraps(handler)
    def wrapper(req):
        media_type = (req.content_type or '').split(';')[0].strip()
        if media_type != JSON:
            raise errors.UnsupportedMediaType(media_type or None)
        return handler(req)
    return wrapper


def accept_json(handler):
    """Answer 406 unless the client accepts JSON."""
    @functools.wraps(handler)
    def wrapper(req):
        # The usual header (which RequestLog also gives requests without
        # one) needs no parsing.
        if (req.environ.get('HTTP_ACCEPT') != JSON
                and not req.accept.acceptable_offers([JSON])):
            raise errors.NotAcceptable('Only application/json is provided')
        return handler(req)
    return wrapper
