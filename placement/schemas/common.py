"""Schema pieces shared by several resources."""

import copy

UUID = {'type': 'string', 'format': 'uuid'}
NULLABLE_UUID = {'anyOf': [UUID, {'type': 'null'}]}
GENERATION = {'type': 'integer'}
RESOURCE_CLASS_NAME = {'type': 'string', 'pattern': '^[A-Z0-9_]+$'}
CUSTOM_RESOURCE_CLASS_NAME = {'type': 'string',
                              'pattern': '^CUSTOM_[A-Z0-9_]+$',
                              'maxLength': 255}
CUSTOM_TRAIT_NAME = {'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$',
                     'minLength': 1, 'maxLength': 255}
#: Project and user ids as clients name them.
EXTERNAL_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255}
CONSUMER_TYPE = {'type': 'string', 'pattern': '^[A-Z0-9_]+$',
                 'minLength': 1, 'maxLength': 255}
#: Keys of provider/consumer uuid maps in allocation-style bodies.
UUID_KEY_PATTERN = '^[0-9a-fA-F-]{36}$'


def derive(schema, **changes):
    """A deep copy of ``schema`` with top-level ``changes`` applied."""
    new = copy.deepcopy(schema)
    new.update(changes)
    return new


def with_properties(schema, properties=None, remove=(), required=None):
    """A copy of an object schema with ``properties`` (a dict) added,
    ``remove`` names removed and, if given, a new ``required`` list."""
    new = copy.deepcopy(schema)
    for name in remove:
        new['properties'].pop(name, None)
    new['properties'].update(properties or {})
    if required is not None:
        new['required'] = list(required)
    return new


# -- pieces of response bodies ---------------------------------------------

#: ``links`` of a provider or resource class: ``rel`` and ``href``.
def links(rels):
    """An array of exactly the links named ``rels``, in any order."""
    return {
        'type': 'array',
        'items': {
            'type': 'object',
            'properties': {'rel': {'type': 'string', 'enum': list(rels)},
                           'href': {'type': 'string'}},
            'required': ['rel', 'href'],
            'additionalProperties': False,
        },
        'minItems': len(rels), 'maxItems': len(rels),
        'uniqueItems': True,
    }


#: Amounts per resource class name.
AMOUNTS = {'type': 'object',
           'patternProperties': {
               RESOURCE_CLASS_NAME['pattern']: {'type': 'integer',
                                                'minimum': 0}},
           'additionalProperties': False}
#: Amounts per resource class name, at least one.
RESOURCES = {'type': 'object', 'minProperties': 1,
             'patternProperties': {
                 RESOURCE_CLASS_NAME['pattern']: {'type': 'integer',
                                                  'minimum': 1}},
             'additionalProperties': False}
#: A list of names without repetition.
NAMES = {'type': 'array', 'items': {'type': 'string'}}
