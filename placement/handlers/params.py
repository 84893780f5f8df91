"""Parsers for the query parameters that filter providers.

``resources``, ``required`` and ``member_of`` share one grammar wherever
they appear: ``GET /resource_providers`` and every request group of
``GET /allocation_candidates``. The parsers turn raw query values into
plain values and raise ``errors.BadRequest`` with upstream Placement's texts
for malformed input. Whether the named classes, traits or aggregates
exist is not their business: the lookups report that, with messages that
differ per endpoint.
"""

import dataclasses
import typing

from placement import microversion
from placement.web import errors
from placement.web import validation

_RESOURCES_FORM = ('Badly formed resources parameter. Expected resources '
                   'query string parameter in form: '
                   '?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')

_INVALID_QUERY = 'Invalid query string parameters: '
_REQUIRED_FORM = 'HW_CPU_X86_VMX,CUSTOM_MAGIC'
_REQUIRED_FORM_FORBIDDEN = 'HW_CPU_X86_VMX,!CUSTOM_MAGIC'
_REQUIRED_EMPTY = (_INVALID_QUERY + "Expected 'required' parameter value of "
                   "the form: %s. Got an empty trait in: %s")
_REQUIRED_BAD = (_INVALID_QUERY + "Expected 'required' parameter value of "
                 "the form: %s. Got: %s")
_ANY_OF_FORMAT = "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC'"

_ANY_OF = 'in:'
_NOT = '!'


@dataclasses.dataclass(frozen=True)
class RequiredTraits:
    """Parsed ``required`` values.

    A provider qualifies if, for every term, it has at least one trait of
    that term (a plain trait is a term of one), and has none of
    ``forbidden``. ``names`` lists every trait mentioned once, required
    ones first, each in query order: the order in which lookups report
    the first unknown name (verified against upstream Placement).
    """

    terms: typing.List[typing.FrozenSet[str]]
    forbidden: typing.FrozenSet[str]
    names: typing.Tuple[str, ...] = dataclasses.field(default=(),
                                                      compare=False)

    def __bool__(self):
        return bool(self.terms or self.forbidden)


@dataclasses.dataclass(frozen=True)
class MemberOf:
    """Parsed ``member_of`` values.

    A provider qualifies if, for every term, it belongs to at least one
    aggregate of that term, and belongs to none of ``forbidden``.
    Aggregate uuids are kept exactly as written (they are stored and
    compared verbatim, see api-ref/behaviour-choices.rst, 'Aggregate uuids
    kept verbatim').
    """

    terms: typing.List[typing.FrozenSet[str]]
    forbidden: typing.FrozenSet[str]

    def __bool__(self):
        return bool(self.terms or self.forbidden)


def parse_resources(value):
    """``RC:AMOUNT[,RC:AMOUNT...]`` -> {rc name: amount}.

    A class given twice keeps its last amount. Names are not checked.
    """
    if not value.strip():
        raise errors.BadRequest(_RESOURCES_FORM % 'empty string')
    result = {}
    for item in value.split(','):
        parts = item.split(':')
        if len(parts) != 2:
            raise errors.BadRequest(_RESOURCES_FORM % item)
        name, amount = parts
        try:
            amount = int(amount)
        except ValueError:
            raise errors.BadRequest(
                'Requested resource %s expected positive integer amount. '
                'Got: %s.' % (name, amount))
        if amount < 1:
            raise errors.BadRequest(
                'Requested resource %s requires amount >= 1. Got: %d.'
                % (name, amount))
        result[name] = amount
    return result


def _add_unique(seq, item):
    if item not in seq:
        seq.append(item)


def parse_required(values, version, key='required'):
    """Parse the raw values of one ``required`` key -> RequiredTraits.

    ``values`` are all the query values given for ``key``: before 1.39
    only the last one counts, from 1.39 they are all ANDed. Messages
    always say ``'required'``, whatever ``key`` (``required1``, ...) was
    used, as upstream Placement's do (verified).
    """
    del key  # Upstream Placement's messages never name the suffixed key.
    if version < microversion.ANY_OF_TRAITS:
        values = values[-1:]
    form = (_REQUIRED_FORM_FORBIDDEN
            if version >= microversion.FORBIDDEN_TRAITS else _REQUIRED_FORM)
    terms, required, forbidden = [], [], []
    for value in values:
        if value.startswith(_ANY_OF):
            if version < microversion.ANY_OF_TRAITS:
                raise errors.BadRequest(
                    _INVALID_QUERY + _ANY_OF_FORMAT + ' only supported since '
                    'microversion 1.39. Got: %s' % value)
            items = [item.strip() for item in value[3:].split(',')]
            if not all(items):
                raise errors.BadRequest(
                    _REQUIRED_EMPTY % ('in:' + _REQUIRED_FORM, value))
            if any(item.startswith(_NOT) for item in items):
                raise errors.BadRequest(
                    _INVALID_QUERY + _ANY_OF_FORMAT + ' does not support '
                    'forbidden traits. Got: %s' % value)
            _add_unique(terms, frozenset(items))
            for item in items:
                _add_unique(required, item)
            continue
        items = [item.strip() for item in value.split(',')]
        # Every leading "!" goes: "!!T" forbids T, "!" is empty (see
        # api-ref/behaviour-choices.rst, 'Repeated leading ! on traits').
        if not all(item.lstrip(_NOT) for item in items):
            raise errors.BadRequest(_REQUIRED_EMPTY % (form, value))
        for item in items:
            if item.startswith(_NOT):
                if version < microversion.FORBIDDEN_TRAITS:
                    raise errors.BadRequest(_REQUIRED_BAD % (form, value))
                _add_unique(forbidden, item.lstrip(_NOT))
            else:
                _add_unique(terms, frozenset([item]))
                _add_unique(required, item)
    names = tuple(required) + tuple(n for n in forbidden if n not in required)
    return RequiredTraits(terms, frozenset(forbidden), names)


def parse_member_of(values, version, key='member_of'):
    """Parse the raw values of one ``member_of`` key -> MemberOf.

    ``values`` are all the query values given for ``key`` (repetition is
    an error before 1.24). Each value is checked in turn: list syntax,
    then uuid-likeness of every element, then the ``!`` version gate.
    """
    if version < microversion.REPEATED_MEMBER_OF and len(values) > 1:
        raise errors.BadRequest(
            'Multiple member_of parameters are not supported')
    terms, forbidden = [], set()
    for value in values:
        negated = value.startswith(_NOT)
        body = value[1:] if negated else value
        if body.startswith(_ANY_OF):
            items = body[3:].split(',')
        elif ',' in body:
            raise errors.BadRequest(
                "Multiple values for 'member_of' must be prefixed with the "
                "'in:' or '!in:' keyword using the valid microversion. "
                "Got: %s" % value)
        else:
            items = [body]
        for item in items:
            if not validation.is_uuid_like(item):
                raise errors.BadRequest(
                    _INVALID_QUERY + "Expected 'member_of' parameter to "
                    "contain valid UUID(s). Got: %s" % item)
        if negated:
            if version < microversion.FORBIDDEN_AGGREGATES:
                raise errors.BadRequest(
                    'Forbidden %s parameters are not supported in the '
                    'specified microversion' % key)
            forbidden.update(items)
        else:
            _add_unique(terms, frozenset(items))
    return MemberOf(terms, frozenset(forbidden))
