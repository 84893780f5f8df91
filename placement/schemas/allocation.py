"""Schemas for /allocations/{consumer_uuid} and POST /allocations."""

import copy

from placement.schemas import common

RESOURCES = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        # No maximum: larger amounts fail max_unit (409), as upstream.
        '^[A-Z0-9_]+$': {'type': 'integer', 'minimum': 1},
    },
    'additionalProperties': False,
}

# 1.0: a list of {resource_provider: {uuid}, resources}.
PUT_V1_0 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {'uuid': common.UUID},
                        'required': ['uuid'],
                        'additionalProperties': False,
                    },
                    'resources': RESOURCES,
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['allocations'],
    'additionalProperties': False,
}

# 1.8: the consumer's project and user are required.
PUT_V1_8 = common.with_properties(
    PUT_V1_0,
    {'project_id': common.EXTERNAL_ID, 'user_id': common.EXTERNAL_ID},
    required=['allocations', 'project_id', 'user_id'])

# 1.12: allocations keyed by provider uuid, as GET shows them; a provider
# generation may be sent back but is ignored.
PUT_V1_12 = common.with_properties(PUT_V1_8, {
    'allocations': {
        'type': 'object',
        'minProperties': 1,
        'patternProperties': {
            common.UUID_KEY_PATTERN: {
                'type': 'object',
                'properties': {'resources': RESOURCES,
                               'generation': common.GENERATION},
                'required': ['resources'],
                'additionalProperties': False,
            },
        },
        'additionalProperties': False,
    },
})

# 1.28: the consumer generation is required (null: a new consumer) and an
# empty set removes every allocation of the consumer.
PUT_V1_28 = common.with_properties(
    PUT_V1_12, {'consumer_generation': {'type': ['integer', 'null']}},
    required=PUT_V1_12['required'] + ['consumer_generation'])
PUT_V1_28['properties']['allocations']['minProperties'] = 0

# 1.34: mappings of request groups to providers, accepted and ignored.
# The key pattern is unanchored: keys without any such character (e.g.
# "") are not checked.
PUT_V1_34 = common.with_properties(PUT_V1_28, {
    'mappings': {
        'type': 'object',
        'minProperties': 1,
        'patternProperties': {
            '[a-zA-Z0-9_-]': {'type': 'array', 'minItems': 1,
                              'items': common.UUID},
        },
    },
})

# 1.38: the consumer type is required.
PUT_V1_38 = common.with_properties(
    PUT_V1_34, {'consumer_type': common.CONSUMER_TYPE},
    required=PUT_V1_28['required'] + ['consumer_type'])


def by_consumer(consumer, min_consumers=1):
    """A body keyed by consumer uuid (POST /allocations, the reshaper's
    ``allocations``); in these an empty allocation set is always
    allowed."""
    consumer = copy.deepcopy(consumer)
    consumer['properties']['allocations']['minProperties'] = 0
    return {
        'type': 'object',
        'minProperties': min_consumers,
        'patternProperties': {common.UUID_KEY_PATTERN: consumer},
        'additionalProperties': False,
    }


POST_V1_13 = by_consumer(PUT_V1_12)
POST_V1_28 = by_consumer(PUT_V1_28)
POST_V1_34 = by_consumer(PUT_V1_34)
POST_V1_38 = by_consumer(PUT_V1_38)

# -- responses ---------------------------------------------------------------

_BY_PROVIDER = {
    'type': 'object',
    'additionalProperties': {
        'type': 'object',
        'properties': {'generation': common.GENERATION,
                       'resources': common.RESOURCES},
        'required': ['generation', 'resources'],
        'additionalProperties': False,
    },
}


def _consumer(*fields):
    """A consumer's allocations; ``fields`` appear once it has any."""
    properties = {'allocations': _BY_PROVIDER,
                  'project_id': {'type': 'string'},
                  'user_id': {'type': 'string'},
                  'consumer_generation': common.GENERATION,
                  'consumer_type': {'type': 'string'}}
    shown = ('allocations',) + fields
    return {
        'type': 'object',
        'properties': {k: v for k, v in properties.items() if k in shown},
        'required': ['allocations'],
        'additionalProperties': False,
        'if': {'properties': {'allocations': {'minProperties': 1}}},
        'then': {'required': list(shown)},
    }


#: GET /allocations/{consumer_uuid}.
CONSUMER_ALLOCATIONS = (
    ('1.0', _consumer()),
    ('1.12', _consumer('project_id', 'user_id')),
    ('1.28', _consumer('project_id', 'user_id', 'consumer_generation')),
    ('1.38', _consumer('project_id', 'user_id', 'consumer_generation',
                       'consumer_type')),
)


def _provider_allocations(*fields):
    properties = {'resources': common.RESOURCES,
                  'consumer_generation': common.GENERATION}
    shown = ('resources',) + fields
    return {
        'type': 'object',
        'properties': {
            'resource_provider_generation': common.GENERATION,
            'allocations': {'type': 'object', 'additionalProperties': {
                'type': 'object',
                'properties': {k: v for k, v in properties.items()
                               if k in shown},
                'required': list(shown),
                'additionalProperties': False}},
        },
        'required': ['resource_provider_generation', 'allocations'],
        'additionalProperties': False,
    }


#: GET /resource_providers/{uuid}/allocations.
PROVIDER_ALLOCATIONS = (
    ('1.0', _provider_allocations()),
    ('1.28', _provider_allocations('consumer_generation')),
)
