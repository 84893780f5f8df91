"""Response schema of GET /capacity/fit (its query is the candidates
query of the newest microversion: ``schemas.allocation_candidate``)."""

from placement.schemas import allocation_candidate

#: The query, parsed as GET /allocation_candidates parses it at the
#: newest microversion whatever the request's.
QUERY = allocation_candidate.V1_36

_COUNTS = {'type': 'object',
           'additionalProperties': {'type': 'integer', 'minimum': 0}}

FIT = {
    'type': 'object',
    'properties': {'fit': {
        'type': 'object',
        'properties': {
            'total': {'type': 'integer', 'minimum': 0},
            'by_root': _COUNTS,
            'by_aggregate': _COUNTS,
            'limited_by': _COUNTS,
            'exact': {'type': 'boolean'},
        },
        'required': ['total', 'by_root', 'by_aggregate', 'limited_by',
                     'exact'],
        'additionalProperties': False,
    }},
    'required': ['fit'],
    'additionalProperties': False,
}
