"""Microversions: the version list, header parsing and handler selection.

A handler declares the range of versions it serves with ``@serves``; the
route table lists all handlers of one method and ``select`` picks the one
whose range holds the request's version (none: 404).
"""

import collections

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


class InvalidVersion(Exception):
    """The header's version string cannot be parsed (400)."""


class UnacceptableVersion(Exception):
    """The version parses but is not supported (406)."""


def from_header(header_value):
    """Return the Version a request asks for: the last ``placement``
    entry of the header, 1.0 without one (api-ref/general.rst).

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
        if version >= Version.parse(min_version):
            chosen = value
    return chosen
