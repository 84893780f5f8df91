"""``[capacity] flavors``: the named requests GET /metrics and GET
/capacity count the fit of (api-ref/capacity-fit.rst, 'Named flavors').

Each line is parsed as GET /allocation_candidates parses its query at
the newest microversion, when the application is built (a malformed
line stops the service) and, cached, by the pages.
"""

import functools
import typing

from placement.handlers import claim
from placement import microversion
from placement.web import errors


def named(conf):
    """``[capacity] flavors`` as ``(name, candidates Request)`` pairs, in
    order; ValueError naming the line for a malformed one."""
    return _parsed(tuple(conf.capacity.flavors), _Bounds(
        conf.placement.max_request_groups, conf.placement.max_request_terms))


class _Bounds(typing.NamedTuple):
    """The ``[placement]`` bounds a query is parsed under (hashable,
    for the cache; a config group is not)."""

    max_request_groups: int
    max_request_terms: int


@functools.lru_cache(maxsize=8)
def _parsed(lines, bounds):
    flavors, names = [], set()
    for line in lines:
        name, sep, query = (part.strip() for part in line.partition('='))
        if not sep or not name or not query:
            raise ValueError('[capacity] flavors: expected "NAME = QUERY", '
                             'got %r' % line)
        if name in names:
            raise ValueError('[capacity] flavors: %s is named twice' % name)
        try:
            request = claim.parse_query(query, microversion.MAX_VERSION,
                                        bounds)
        except errors.BadRequest as exc:
            raise ValueError('[capacity] flavors: %s: %s'
                             % (name, exc.detail))
        names.add(name)
        flavors.append((name, request))
    return tuple(flavors)
