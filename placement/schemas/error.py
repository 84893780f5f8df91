"""The error document every error response carries as JSON
(api-ref/general.rst, 'Errors')."""

from placement.schemas import common

_ERROR_V1_0 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'integer'},
        'title': {'type': 'string'},
        'detail': {'type': 'string'},
        'request_id': {'type': 'string'},
        # A 406 for an unsupported microversion adds the supported range.
        'max_version': {'type': 'string'},
        'min_version': {'type': 'string'},
    },
    'required': ['status', 'title', 'detail', 'request_id'],
}
# 1.23: a machine-readable code. Errors raised before the microversion
# is known (a malformed version header) have none, so the code stays
# optional in the schema.
_ERROR_V1_23 = common.with_properties(_ERROR_V1_0, {
    'code': {'type': 'string', 'pattern': r'^placement\.'}})


def _document(error):
    return {
        'type': 'object',
        'properties': {
            'errors': {'type': 'array', 'items': error, 'minItems': 1},
        },
        'required': ['errors'],
        'additionalProperties': False,
    }


DOCUMENTS = (('1.0', _document(_ERROR_V1_0)),
             ('1.23', _document(_ERROR_V1_23)))

#: A 401 is answered before the API's error handling: webob's plain
#: document (noauth2, or no user after authentication) or keystonemiddleware's
#: (api-ref/general.rst, 'Authentication').
UNAUTHORIZED = {'anyOf': [
    {'type': 'object',
     'properties': {'message': {'type': 'string'},
                    'code': {'type': 'string'},
                    'title': {'type': 'string'}},
     'required': ['message', 'code', 'title'],
     'additionalProperties': False},
    {'type': 'object',
     'properties': {'error': {
         'type': 'object',
         'properties': {'code': {'type': 'integer'},
                        'title': {'type': 'string'},
                        'message': {'type': 'string'}},
         'required': ['code', 'title', 'message']}},
     'required': ['error'],
     'additionalProperties': False},
]}
