"""Count every request by route template, method, status and microversion.

It wraps the whole stack, so requests refused before they reach a
handler (authentication, microversion, malformed headers) are counted
too. Paths are reduced to the route template of the route table
(``/resource_providers/{uuid}``) or the health check's path; a path
matching no route is counted under ``unmatched`` and a method outside the
five HTTP methods the API uses as ``other``, so the number of series stays
bounded whatever clients send.
"""

import time

from placement import microversion
from placement.middleware import healthcheck
from placement.observability import metrics
from placement.web import dispatch
from placement.web import router

_METHODS = frozenset(('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD',
                      'OPTIONS'))


def route_matcher(templates):
    """A function from a path to the template of ``templates`` it
    matches, as the dispatcher matches it, or ``UNMATCHED_ROUTE``."""
    routes = router.Router(templates)

    def match(path):
        found = routes.match(path or '/')
        return metrics.UNMATCHED_ROUTE if found is None else found[0]
    return match


class RequestMetrics:
    """WSGI middleware recording ``placement_http_requests_total``, the
    duration histogram and the in-flight gauge."""

    def __init__(self, application, recorded, templates):
        self.application = application
        self.recorded = recorded
        self.route = route_matcher(list(templates) + [healthcheck.PATH])
        # (counter, histogram) children by route, method label, status
        # and the microversion.Version the Microversion layer parsed
        # (equal ones have equal labels): looking them up through
        # labels(), or even writing the version's label, costs more than
        # recording.
        self._children = {}

    def _children_of(self, key):
        route, method, status, version = key
        labels = (route, method, status, str(version) if version else 'none')
        return self._children.setdefault(key, (
            self.recorded.requests.labels(*labels),
            self.recorded.duration.labels(*labels)))

    def __call__(self, environ, start_response):
        start = time.perf_counter()
        in_flight = self.recorded.in_flight
        in_flight.inc()
        status = []

        def _start_response(line, headers, exc_info=None):
            status.append(line[:3])
            return start_response(line, headers, exc_info)

        try:
            return self.application(environ, _start_response)
        finally:
            in_flight.dec()
            method = environ.get('REQUEST_METHOD', '')
            # The dispatcher's match is this matcher's: same router, and
            # its templates come first.
            route = environ.get(dispatch.ENVIRON_ROUTE)
            if route is None:
                route = self.route(environ.get('PATH_INFO'))
            key = (route, method if method in _METHODS else 'other',
                   status[-1] if status else '500',
                   environ.get(microversion.ENVIRON_KEY))
            children = self._children.get(key)
            if children is None:
                children = self._children_of(key)
            children[0].inc()
            children[1].observe(time.perf_counter() - start)
