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
