"""Schemas of GET /openapi.json."""

QUERY = {
    'type': 'object',
    'properties': {
        'microversion': {'type': 'string',
                         'pattern': '^[0-9]{1,9}\\.[0-9]{1,9}$'},
    },
    'additionalProperties': False,
}

#: The answer, checked only for its outline: the OpenAPI 3.1 meta-schema
#: is what validates it (openapi-spec-validator, in the tests).
DOCUMENT = {
    'type': 'object',
    'properties': {
        'openapi': {'type': 'string', 'enum': ['3.1.0']},
        'info': {'type': 'object'},
        'paths': {'type': 'object'},
        'components': {'type': 'object'},
    },
    'required': ['openapi', 'info', 'paths'],
}
