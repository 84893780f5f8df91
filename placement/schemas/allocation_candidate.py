"""Query schemas of GET /allocation_candidates, per microversion.

Values are strings; the schema sees the last value of a repeated key.
From 1.25 the group keys are matched by regexes carrying the allowed
suffix, so an unknown key is reported against the regexes of that
microversion.
"""

from placement.schemas import common

_STRING = {'type': 'string'}
# Upstream Placement spells these two as a one-item type list; error texts
# print the schema, so keep its spelling.
_STRINGS = {'type': ['string']}
LIMIT = {'type': ['integer', 'string'], 'pattern': '^[1-9][0-9]*$',
         'minimum': 1, 'minLength': 1}
#: Checks the first ``limit`` given (the query schema sees the last).
FIRST_LIMIT = {'type': 'object', 'properties': {'limit': LIMIT}}
GROUP_POLICY = {'type': 'string', 'enum': ['none', 'isolate']}

V1_10 = {
    'type': 'object',
    'properties': {'resources': _STRING},
    'required': ['resources'],
    'additionalProperties': False,
}
# 1.16: limit.
V1_16 = common.with_properties(V1_10, {'limit': LIMIT})
# 1.17: required traits.
V1_17 = common.with_properties(V1_16, {'required': _STRINGS})
# 1.21: member_of.
V1_21 = common.with_properties(V1_17, {'member_of': _STRINGS})


def _grouped(prefixes, suffix, **properties):
    """A schema whose group keys are ``prefix{suffix}`` regexes."""
    return {
        'type': 'object',
        'properties': dict({'limit': LIMIT, 'group_policy': GROUP_POLICY},
                           **properties),
        'additionalProperties': False,
        'patternProperties': {'^%s(%s)?$' % (prefix, suffix): _STRING
                              for prefix in prefixes},
    }


_NUMBERED = '[1-9][0-9]*'
_NAMED = '[a-zA-Z0-9_-]{1,64}'
_PREFIXES = ('resources', 'required', 'member_of')

# 1.25: numbered request groups and group_policy; resources optional.
V1_25 = _grouped(_PREFIXES, _NUMBERED)
# 1.31: in_tree.
V1_31 = _grouped(_PREFIXES + ('in_tree',), _NUMBERED)
# 1.33: string suffixes.
V1_33 = _grouped(_PREFIXES + ('in_tree',), _NAMED)
# 1.35: root_required.
V1_35 = _grouped(_PREFIXES + ('in_tree',), _NAMED,
                 root_required=_STRINGS)
# 1.36: same_subtree.
V1_36 = _grouped(_PREFIXES + ('in_tree',), _NAMED,
                 root_required=_STRINGS, same_subtree=_STRINGS)

# -- responses ---------------------------------------------------------------

_PLACED = {'type': 'object',
           'properties': {'resources': common.RESOURCES},
           'required': ['resources'], 'additionalProperties': False}
_LIST_REQUEST = {
    'type': 'object',
    'properties': {'allocations': {
        'type': 'array', 'minItems': 1,
        'items': common.with_properties(_PLACED, {
            'resource_provider': {
                'type': 'object', 'properties': {'uuid': common.UUID},
                'required': ['uuid'], 'additionalProperties': False}},
            required=['resource_provider', 'resources'])}},
    'required': ['allocations'], 'additionalProperties': False,
}
_DICT_REQUEST = {
    'type': 'object',
    'properties': {'allocations': {'type': 'object',
                                   'additionalProperties': _PLACED}},
    'required': ['allocations'], 'additionalProperties': False,
}
# 1.34: which providers satisfied each request group (by suffix; the
# unsuffixed group is "").
MAPPINGS = {'type': 'object', 'additionalProperties': {
    'type': 'array', 'items': common.UUID, 'minItems': 1}}
_MAPPED_REQUEST = common.with_properties(
    _DICT_REQUEST, {'mappings': MAPPINGS},
    required=['allocations', 'mappings'])

_USAGE = {'type': 'object',
          'properties': {'capacity': {'type': 'integer'},
                         'used': {'type': 'integer'}},
          'required': ['capacity', 'used'], 'additionalProperties': False}


def _summary(traits=False, nested=False):
    properties = {'resources': {'type': 'object',
                                'additionalProperties': _USAGE}}
    if traits:
        properties['traits'] = common.NAMES
    if nested:
        properties['parent_provider_uuid'] = common.NULLABLE_UUID
        properties['root_provider_uuid'] = common.UUID
    return {'type': 'object', 'properties': properties,
            'required': sorted(properties), 'additionalProperties': False}


def _candidates(request, summary):
    return {
        'type': 'object',
        'properties': {
            'allocation_requests': {'type': 'array', 'items': request},
            'provider_summaries': {'type': 'object',
                                   'additionalProperties': summary},
        },
        'required': ['allocation_requests', 'provider_summaries'],
        'additionalProperties': False,
    }


#: GET /allocation_candidates.
CANDIDATES = (
    ('1.10', _candidates(_LIST_REQUEST, _summary())),
    ('1.12', _candidates(_DICT_REQUEST, _summary())),
    ('1.17', _candidates(_DICT_REQUEST, _summary(traits=True))),
    ('1.29', _candidates(_DICT_REQUEST, _summary(traits=True,
                                                 nested=True))),
    ('1.34', _candidates(_MAPPED_REQUEST, _summary(traits=True,
                                                   nested=True))),
)

_STEP = {
    'type': 'object',
    'properties': {'filter': {'type': 'string'},
                   'subject': {'type': 'string'},
                   'count': {'type': 'integer', 'minimum': 0}},
    'required': ['filter', 'subject', 'count'],
    'additionalProperties': False,
}
#: GET /allocation_candidates/explain (api-ref/allocation-candidates-
#: explain.rst).
EXPLAIN = {
    'type': 'object',
    'properties': {
        'groups': {'type': 'array', 'items': {
            'type': 'object',
            'properties': {'suffix': {'type': 'string'},
                           'resources': common.AMOUNTS,
                           'funnel': {'type': 'array', 'items': _STEP}},
            'required': ['suffix', 'resources', 'funnel'],
            'additionalProperties': False}},
        'combined': {'type': 'array', 'items': _STEP},
        'candidates': {'type': 'integer', 'minimum': 0},
        'candidates_at_least': {'type': 'boolean'},
        'emptied_by': {'anyOf': [{'type': 'null'}, {
            'type': 'object',
            'properties': {'group': {'type': ['string', 'null']},
                           'filter': {'type': 'string'},
                           'subject': {'type': 'string'}},
            'required': ['group', 'filter', 'subject'],
            'additionalProperties': False}]},
        'reason': {'type': ['string', 'null']},
    },
    'required': ['groups', 'combined', 'candidates', 'candidates_at_least',
                 'emptied_by', 'reason'],
    'additionalProperties': False,
}
