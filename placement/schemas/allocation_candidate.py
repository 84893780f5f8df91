"""Query schemas of GET /allocation_candidates, per microversion.

Values are strings; the schema sees the last value of a repeated key.
From 1.25 the group keys are matched by regexes carrying the allowed
suffix, so an unknown key is reported against the regexes of that
microversion.
"""

from placement.schemas import common

_STRING = {'type': 'string'}
# The reference spells these two as a one-item type list; error texts
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
