"""Schemas for /resource_providers/{uuid}/aggregates."""

from placement.schemas import common

# Aggregate uuids are stored verbatim in a 36-character column, so a
# uuid-like spelling longer than that (braces, "urn:uuid:") is refused
# here rather than failing in the database.
_AGGREGATES = {
    'type': 'array',
    'items': common.derive(common.UUID, maxLength=36),
    'uniqueItems': True,
}

# 1.1: a bare list of aggregate uuids.
PUT_V1_1 = _AGGREGATES

# 1.19: an object with the provider generation, checked and bumped.
PUT_V1_19 = {
    'type': 'object',
    'properties': {
        'aggregates': _AGGREGATES,
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}

# -- responses ---------------------------------------------------------------

# Shown as stored: any uuid-like spelling a client sent.
_SHOWN = {'type': 'array', 'items': {'type': 'string', 'maxLength': 36},
          'uniqueItems': True}
AGGREGATES = (
    ('1.1', {'type': 'object', 'properties': {'aggregates': _SHOWN},
             'required': ['aggregates'], 'additionalProperties': False}),
    ('1.19', {'type': 'object',
              'properties': {'aggregates': _SHOWN,
                             'resource_provider_generation':
                                 common.GENERATION},
              'required': ['aggregates', 'resource_provider_generation'],
              'additionalProperties': False}),
)
