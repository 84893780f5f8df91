"""Refuse request bodies above ``[oslo_middleware] max_request_body_size``.

A declared ``Content-Length`` above the limit is answered 413 before any
of the body is read. A body without one (chunked) is read through
oslo.middleware's ``LimitingReader``, which raises 413 once the limit is
passed; the dispatcher renders it like any other HTTP error. Either way
the client gets the usual JSON error document, never a 500 (see
``api-ref/behaviour-choices.rst``, 'Request body size limit').
"""

from oslo_middleware import sizelimit

from placement import microversion
from placement.middleware import requestlog
from placement.web import errors


class BodySizeLimit:
    """WSGI middleware; sits inside microversion negotiation so its 413
    carries the same headers and error ``code`` as other errors."""

    def __init__(self, application, limit):
        self.application = application
        self.limit = limit

    def __call__(self, environ, start_response):
        length = _declared_length(environ)
        if length is not None and length > self.limit:
            error = errors.RequestEntityTooLarge(
                'Request is too large. Larger than max_request_body_size '
                '(%d bytes).' % self.limit)
            return errors.render(
                error, environ, environ.get(requestlog.ENVIRON_REQUEST_ID),
                environ.get(microversion.ENVIRON_KEY))(
                    environ, start_response)
        if length is None and 'wsgi.input' in environ:
            environ['wsgi.input'] = sizelimit.LimitingReader(
                environ['wsgi.input'], self.limit)
        return self.application(environ, start_response)


def _declared_length(environ):
    """The Content-Length as a number; None if absent or not a number
    (the dispatcher answers a malformed one with 400)."""
    value = environ.get('CONTENT_LENGTH')
    if not value:  # most requests: no exception raised and caught
        return None
    try:
        return int(value)
    except ValueError:
        return None
