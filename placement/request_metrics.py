"""Count every request by route template, method, status and microversion.

It wraps the whole stack, so requests refused before they reach a
handler (authentication, microversion, malformed headers) are counted
too. Paths are reduced to the route template of the route table
(``/resource_providers/{uuid}``); a path matching no route is counted
under ``unmatched`` and a method outside the five HTTP methods the API
uses as ``other``, so the number of series stays bounded whatever
clients send.
"""

import time

import routes

from placement import handler
from placement import metrics
from placement import microversion

_METHODS = frozenset(('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD',
                      'OPTIONS'))


def _mapper():
    mapper = routes.Mapper()
    mapper.minimization = False
    for path in handler.ROUTES:
        mapper.connect(path, path, _route=path)
    return mapper


class RequestMetrics:
    """WSGI middleware recording ``placement_http_requests_total``, the
    duration histogram and the in-flight gauge."""

    def __init__(self, application, recorded):
        self.application = application
        self.recorded = recorded
        self.mapper = _mapper()

    def route(self, path):
        match = self.mapper.match(path or '/')
        return match['_route'] if match else metrics.UNMATCHED_ROUTE

    def __call__(self, environ, start_response):
        start = time.perf_counter()
        m = self.recorded
        m.in_flight.inc()
        status = []

        def _start_response(line, headers, exc_info=None):
            status.append(line[:3])
            return start_response(line, headers, exc_info)

        try:
            return self.application(environ, _start_response)
        finally:
            m.in_flight.dec()
            method = environ.get('REQUEST_METHOD', '')
            labels = (self.route(environ.get('PATH_INFO')),
                      method if method in _METHODS else 'other',
                      status[-1] if status else '500',
                      str(environ.get(microversion.ENVIRON_KEY) or 'none'))
            m.requests.labels(*labels).inc()
            m.duration.labels(*labels).observe(time.perf_counter() - start)
