"""Refuse request bodies above ``[oslo_middleware] max_request_body_size``
and request lines above ``[api] max_request_line``.

A declared ``Content-Length`` above the limit is answered 413 before any
of the body is read. A body without one (chunked) is read through
oslo.middleware's ``LimitingReader``, which raises 413 once the limit is
passed; the dispatcher renders it like any other HTTP error. Either way
the client gets the usual JSON error document, never a 500 (see
``api-ref/behaviour-choices.rst``, 'Request body size limit').
"""

import urllib.parse

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
            return _refuse(errors.RequestEntityTooLarge(
                'Request is too large. Larger than max_request_body_size '
                '(%d bytes).' % self.limit), environ, start_response)
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


class RequestLineLimit:
    """Answer request lines longer than ``limit`` bytes 414.

    The installation guide's gunicorn recipe lifts gunicorn's own limit
    (its largest finite one is too small for long granular queries), so
    the service bounds the line itself, under every WSGI server (see
    ``api-ref/behaviour-choices.rst``, 'Request line size limit'). Sits
    beside ``BodySizeLimit`` for the same headers and error format.
    """

    def __init__(self, application, limit):
        self.application = application
        self.limit = limit

    def __call__(self, environ, start_response):
        if request_line_length(environ) > self.limit:
            return _refuse(errors.RequestURITooLong(
                'Request line is too long. Longer than max_request_line '
                '(%d bytes).' % self.limit), environ, start_response)
        return self.application(environ, start_response)


def _refuse(error, environ, start_response):
    """Answer ``error`` in the error format of the negotiated version."""
    return errors.render(
        error, environ, environ.get(requestlog.ENVIRON_REQUEST_ID),
        environ.get(microversion.ENVIRON_KEY))(environ, start_response)


def request_line_length(environ):
    """Bytes of ``METHOD target PROTOCOL`` as the client sent it: the raw
    target where the server keeps it (gunicorn ``RAW_URI``, uwsgi
    ``REQUEST_URI``), else rebuilt from the decoded path and the query."""
    target = environ.get('RAW_URI') or environ.get('REQUEST_URI')
    if target is None:
        target = urllib.parse.quote(
            environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', ''),
            safe="/;=,~!$&'()*+:@")
        if environ.get('QUERY_STRING'):
            target += '?' + environ['QUERY_STRING']
    return (len(environ.get('REQUEST_METHOD', '')) + len(target)
            + len(environ.get('SERVER_PROTOCOL', '')) + 2)
