"""The details ``GET /healthcheck`` shows callers its policy allows."""

DETAILS = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string'},
        'database': {
            'type': 'object',
            'properties': {
                'reachable': {'type': 'boolean'},
                'dialect': {'type': 'string'},
                'latency_ms': {'type': ['number', 'null']},
                'error': {'type': ['string', 'null']},
                'age_s': {'type': 'number', 'minimum': 0},
            },
            'required': ['reachable', 'dialect', 'latency_ms', 'error',
                         'age_s'],
            'additionalProperties': False,
        },
    },
    'required': ['status', 'database'],
    'additionalProperties': False,
}
