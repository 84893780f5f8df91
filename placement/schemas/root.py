"""The version document answered at ``/``."""

VERSIONS = {
    'type': 'object',
    'properties': {'versions': {'type': 'array', 'minItems': 1, 'items': {
        'type': 'object',
        'properties': {
            'id': {'type': 'string'},
            'max_version': {'type': 'string'},
            'min_version': {'type': 'string'},
            'status': {'type': 'string'},
            'links': {'type': 'array', 'items': {
                'type': 'object',
                'properties': {'rel': {'type': 'string'},
                               'href': {'type': 'string'}},
                'required': ['rel', 'href']}},
        },
        'required': ['id', 'max_version', 'min_version', 'status', 'links'],
        'additionalProperties': False}}},
    'required': ['versions'],
    'additionalProperties': False,
}
