"""Schemas of POST /claims (api-ref/claims.rst): the request body it
validates and the body it answers, for the OpenAPI document and the
tests."""

from placement.objects import claim as claim_obj
from placement.schemas import allocation
from placement.schemas import allocation_candidate
from placement.schemas import common

#: Defined once, by the claims that apply them.
STRATEGIES = list(claim_obj.STRATEGIES)

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

#: The 200 answer: GET /allocations/{consumer} at 1.38 (never empty,
#: every field shown) plus the candidate's mappings.
_CONSUMER = allocation.CONSUMER_ALLOCATIONS[-1][1]
RESPONSE_V1_38 = common.with_properties(
    _CONSUMER,
    {'allocations': dict(_CONSUMER['properties']['allocations'],
                         minProperties=1),
     'mappings': allocation_candidate.MAPPINGS},
    required=['allocations', 'mappings', 'consumer_generation',
              'project_id', 'user_id', 'consumer_type'])
