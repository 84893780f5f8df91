"""Microversions: the version list, header parsing and handler selection.

A handler declares the range of versions it serves with ``@serves``; the
route table lists all handlers of one method and ``select`` picks the one
whose range holds the request's version (none: 404).
"""

import collections
import functools

import microversion_parse

SERVICE_TYPE = 'placement'
HEADER = 'openstack-api-version'
ENVIRON_KEY = 'placement.microversion'

#: Every microversion with what it changed. The last entry is the maximum.
VERSIONS = (
    ('1.0', 'Initial version: providers, inventories, usages, '
            'allocations'),
    ('1.1', 'Provider aggregates'),
    ('1.2', 'Custom resource classes'),
    ('1.3', 'member_of filter on GET /resource_providers'),
    ('1.4', 'resources filter on GET /resource_providers'),
    ('1.5', 'DELETE all inventories of a provider'),
    ('1.6', 'Traits'),
    ('1.7', 'PUT /resource_classes/{name} creates or confirms, no body'),
    ('1.8', 'project_id and user_id required in allocation writes'),
    ('1.9', 'GET /usages'),
    ('1.10', 'GET /allocation_candidates'),
    ('1.11', 'allocations link on providers'),
    ('1.12', 'Dict format for PUT /allocations/{consumer_uuid}'),
    ('1.13', 'POST /allocations for many consumers'),
    ('1.14', 'Nested providers: parent and root uuids, in_tree filter'),
    ('1.15', 'Last-Modified and Cache-Control headers'),
    ('1.16', 'limit on GET /allocation_candidates'),
    ('1.17', 'required traits on GET /allocation_candidates'),
    ('1.18', 'required traits on GET /resource_providers'),
    ('1.19', 'Provider generation in aggregate bodies'),
    ('1.20', 'POST /resource_providers returns the provider'),
    ('1.21', 'member_of on GET /allocation_candidates'),
    ('1.22', 'Forbidden traits'),
    ('1.23', 'Error codes in error bodies'),
    ('1.24', 'Repeated member_of'),
    ('1.25', 'Numbered request groups and group_policy'),
    ('1.26', 'Inventory reserved may equal total'),
    ('1.27', 'Candidate summaries include all inventories'),
    ('1.28', 'Consumer generations'),
    ('1.29', 'Nested providers in allocation candidates'),
    ('1.30', 'POST /reshaper'),
    ('1.31', 'in_tree on GET /allocation_candidates'),
    ('1.32', 'Forbidden aggregates'),
    ('1.33', 'String request group suffixes'),
    ('1.34', 'mappings in allocation requests'),
    ('1.35', 'root_required on GET /allocation_candidates'),
    ('1.36', 'same_subtree and resourceless request groups'),
    ('1.37', 'Re-parenting and un-parenting providers'),
    ('1.38', 'Consumer types'),
    ('1.39', 'required=in:A,B any-of traits, repeatable required'),
)


class Version(collections.namedtuple('Version', 'major minor')):
    """A parsed microversion; compares as a tuple."""

    @classmethod
    def parse(cls, text):
        """Parse ``'1.10'``; raise TypeError/ValueError when malformed."""
        return cls(*(int(part) for part in text.split('.', 1)))

    def __str__(self):
        return '%d.%d' % self

    def matches(self, min_version, max_version=None):
        return (self >= min_version
                and (max_version is None or self <= max_version))


MIN_VERSION = Version.parse(VERSIONS[0][0])
MAX_VERSION = Version.parse(VERSIONS[-1][0])

# Thresholds: the first version with a behaviour, named once here and
# compared with ``negotiation.version(req) >= NAME`` wherever the
# behaviour is decided (routes that appear at a version are ``@serves``
# instead).

#: Providers' aggregates.
AGGREGATES = Version(1, 1)
#: Providers' traits.
TRAITS = Version(1, 6)
#: Providers link to their allocations.
PROVIDER_ALLOCATIONS = Version(1, 11)
#: Allocations are dicts keyed by provider uuid, with project and user.
DICT_ALLOCATIONS = Version(1, 12)
#: Providers have parent and root uuids.
NESTED_PROVIDERS = Version(1, 14)
#: Last-Modified and Cache-Control headers.
CACHE_HEADERS = Version(1, 15)
#: Candidate summaries carry traits.
SUMMARY_TRAITS = Version(1, 17)
#: Aggregate bodies carry the provider generation.
AGGREGATES_GENERATION = Version(1, 19)
#: POST /resource_providers answers with the provider.
CREATE_RETURNS_PROVIDER = Version(1, 20)
#: Forbidden traits (``!NAME``); required and forbidden may conflict.
FORBIDDEN_TRAITS = Version(1, 22)
#: Error bodies carry a code.
ERROR_CODES = Version(1, 23)
#: ``member_of`` may be repeated.
REPEATED_MEMBER_OF = Version(1, 24)
#: Numbered request groups and ``group_policy``.
GRANULAR_GROUPS = Version(1, 25)
#: An inventory's capacity may be zero (reserved equal to total).
ZERO_CAPACITY = Version(1, 26)
#: Candidate summaries list every inventory, not only requested ones.
ALL_INVENTORIES_IN_SUMMARIES = Version(1, 27)
#: Consumer generations.
CONSUMER_GENERATIONS = Version(1, 28)
#: Candidates span nested trees; summaries name parent and root.
NESTED_CANDIDATES = Version(1, 29)
#: Forbidden aggregates (``member_of=!...``).
FORBIDDEN_AGGREGATES = Version(1, 32)
#: Candidates map request groups to providers.
CANDIDATE_MAPPINGS = Version(1, 34)
#: Resourceless request groups and ``same_subtree``.
SAME_SUBTREE = Version(1, 36)
#: Providers may be re-parented and un-parented.
REPARENTING = Version(1, 37)
#: Consumer types.
CONSUMER_TYPES = Version(1, 38)
#: ``required=in:A,B`` any-of traits; ``required`` may be repeated.
ANY_OF_TRAITS = Version(1, 39)


class InvalidVersion(Exception):
    """The header's version string cannot be parsed (400)."""


class UnacceptableVersion(Exception):
    """The version parses but is not supported (406)."""


@functools.lru_cache(maxsize=256)
def from_header(header_value):
    """Return the Version a request asks for: the last ``placement``
    entry of the header, 1.0 without one (api-ref/general.rst).

    Kept for the most recent header texts (clients send a handful): the
    parse is a third of the microversion layer's cost per request.
    Failures are raised each time, never kept.

    microversion-parse finds the last ``placement`` entry and parses
    ``X.Y``, as the upstream service does (``placement 1. 5`` is 1.5);
    what it leaves to us is ``latest``, the default for no entry and the
    supported range.
    """
    text = microversion_parse.get_version(
        {HEADER: header_value or ''}, SERVICE_TYPE)
    if text is None:
        return MIN_VERSION
    if text == 'latest':
        return MAX_VERSION
    try:
        version = Version(*microversion_parse.parse_version_string(text))
    except TypeError as exc:
        # The library's text already reads "invalid version string: ..."
        raise InvalidVersion(str(exc))
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise UnacceptableVersion(
            'Unacceptable version header: %s' % text)
    return version


def serves(min_version, max_version=None):
    """Declare the microversion range a handler serves."""
    low = Version.parse(min_version)
    high = Version.parse(max_version) if max_version else None

    def decorator(handler):
        handler.versions = (low, high)
        return handler
    return decorator


def select(handlers, version):
    """The handler among ``handlers`` that serves ``version``, or None."""
    for handler in handlers:
        low, high = getattr(handler, 'versions', (MIN_VERSION, None))
        if version.matches(low, high):
            return handler
    return None


def served(handlers):
    """The microversions ``handlers`` serve together, in words ("1.38 and
    later", "1.0 to 1.4"), for the 404 of a request outside them."""
    ranges = [getattr(handler, 'versions', (MIN_VERSION, None))
              for handler in handlers]
    low = min(low for low, _high in ranges)
    if any(high is None for _low, high in ranges):
        return '%s and later' % (low,)
    return '%s to %s' % (low, max(high for _low, high in ranges))


def of(req):
    """The request's negotiated Version."""
    return req.environ[ENVIRON_KEY]


def choose(version, choices):
    """The value whose minimum version is the highest not above ``version``.

    ``choices`` is a sequence of ``(min_version_text, value)`` in ascending
    order, e.g. the schemas of one endpoint per microversion.
    """
    chosen = None
    for min_version, value in choices:
        if version >= _threshold(min_version):
            chosen = value
    return chosen


@functools.lru_cache(maxsize=None)
def _threshold(text):
    """``Version.parse`` of a version written in the code: a few
    constants, parsed once rather than on every request that chooses a
    schema by them (two parses cost a small GET about as much as its
    query validation)."""
    return Version.parse(text)
