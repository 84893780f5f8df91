"""Schemas of POST /claims (api-ref/claims.rst): the request body it
validates and the body it answers, for the OpenAPI document and the
tests."""

from placement.schemas import allocation
from placement.schemas import common

STRATEGIES = ['pack', 'spread']

#: The body, from 1.38: the consumer as PUT /allocations/{consumer}
#: describes it, the query string of GET /allocation_candidates and how
#: to choose among the candidates.
POST_V1_38 = {
    'type': 'object',
    'properties': {
        'consumer_uuid': common.UUID,
        'project_id': common.EXTERNAL_ID,
        'user_id': common.EXTERNAL_ID,
        'consumer_type': common.CONSUMER_TYPE,
        'consumer_generation': {'type': ['integer', 'null']},
        'query': {'type': 'string', 'minLength': 1},
        'strategy': {'type': 'string', 'enum': STRATEGIES},
    },
    'required': ['consumer_uuid', 'project_id', 'user_id', 'consumer_type',
                 'consumer_generation', 'query'],
    'additionalProperties': False,
}

#: The 200 answer: GET /allocations/{consumer} at 1.38 plus the
#: candidate's mappings.
RESPONSE_V1_38 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'object',
            'minProperties': 1,
            'patternProperties': {
                common.UUID_KEY_PATTERN: {
                    'type': 'object',
                    'properties': {
                        'generation': common.GENERATION,
                        'resources': allocation.RESOURCES,
                    },
                    'required': ['generation', 'resources'],
                    'additionalProperties': False,
                },
            },
            'additionalProperties': False,
        },
        'mappings': {
            'type': 'object',
            'additionalProperties': {
                'type': 'array', 'minItems': 1, 'items': common.UUID},
        },
        'consumer_generation': common.GENERATION,
        'project_id': common.EXTERNAL_ID,
        'user_id': common.EXTERNAL_ID,
        'consumer_type': common.CONSUMER_TYPE,
    },
    'required': ['allocations', 'mappings', 'consumer_generation',
                 'project_id', 'user_id', 'consumer_type'],
    'additionalProperties': False,
}
