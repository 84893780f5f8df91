"""Schemas for the query string of GET /usages."""

from placement.schemas import common

LIST_V1_9 = {
    'type': 'object',
    'properties': {
        'project_id': common.EXTERNAL_ID,
        'user_id': common.EXTERNAL_ID,
    },
    'required': ['project_id'],
    'additionalProperties': False,
}

# 1.38: filter by consumer type. The "^all" branch is not end-anchored,
# as upstream's, so e.g. "allfoo" passes (and matches no type).
LIST_V1_38 = common.with_properties(LIST_V1_9, {
    'consumer_type': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                      'pattern': '^[A-Z0-9_]+$|^all|^unknown$'},
})

# -- responses ---------------------------------------------------------------

#: GET /resource_providers/{uuid}/usages.
PROVIDER_USAGES = {
    'type': 'object',
    'properties': {'resource_provider_generation': common.GENERATION,
                   'usages': common.AMOUNTS},
    'required': ['resource_provider_generation', 'usages'],
    'additionalProperties': False,
}
_TOTALS_V1_9 = {
    'type': 'object',
    'properties': {'usages': common.AMOUNTS},
    'required': ['usages'],
    'additionalProperties': False,
}
# 1.38: per consumer type, amounts plus ``consumer_count``.
_TOTALS_V1_38 = {
    'type': 'object',
    'properties': {'usages': {
        'type': 'object',
        'additionalProperties': {
            'type': 'object',
            'properties': {'consumer_count': {'type': 'integer',
                                              'minimum': 0}},
            'required': ['consumer_count'],
            'additionalProperties': {'type': 'integer', 'minimum': 0},
        }}},
    'required': ['usages'],
    'additionalProperties': False,
}
TOTALS = (('1.9', _TOTALS_V1_9), ('1.38', _TOTALS_V1_38))
