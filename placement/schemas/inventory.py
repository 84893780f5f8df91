"""Schemas for /resource_providers/{uuid}/inventories."""

import copy

from placement.objects import capacity
from placement.schemas import common


def _column_integer(minimum):
    return {'type': 'integer', 'minimum': minimum,
            'maximum': capacity.INTEGER_MAX}


RECORD = {
    'type': 'object',
    'properties': {
        'total': _column_integer(1),
        'reserved': _column_integer(0),
        'min_unit': _column_integer(1),
        'max_unit': _column_integer(1),
        'step_size': _column_integer(1),
        'allocation_ratio': {'type': 'number',
                             'maximum': capacity.FLOAT_MAX},
    },
    'required': ['total'],
    'additionalProperties': False,
}

# POST …/inventories: one record plus its class; a generation is allowed
# but not checked.
POST = common.with_properties(
    RECORD, {'resource_class': common.RESOURCE_CLASS_NAME,
             'resource_provider_generation': common.GENERATION},
    required=['total', 'resource_class'])

# PUT …/inventories/{rc}: one record, generation required.
PUT_ONE = common.with_properties(
    RECORD, {'resource_provider_generation': common.GENERATION},
    required=['total', 'resource_provider_generation'])

# A record inside PUT …/inventories (and the reshaper) may repeat the
# generation, which is ignored.
_RECORD_IN_SET = common.with_properties(
    RECORD, {'resource_provider_generation': common.GENERATION})

# PUT …/inventories. Keys not matching the class pattern are not
# validated by the schema; the handler rejects them as unknown classes.
PUT_ALL = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': common.GENERATION,
        'inventories': {
            'type': 'object',
            'patternProperties': {'^[A-Z0-9_]+$': _RECORD_IN_SET},
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}


def put_all_schema():
    """A copy of PUT_ALL for bodies that embed it (the reshaper)."""
    return copy.deepcopy(PUT_ALL)

# -- responses ---------------------------------------------------------------

#: An inventory as shown: every field, defaults filled in.
SHOWN = {
    'type': 'object',
    'properties': {
        'total': {'type': 'integer'},
        'reserved': {'type': 'integer'},
        'min_unit': {'type': 'integer'},
        'max_unit': {'type': 'integer'},
        'step_size': {'type': 'integer'},
        'allocation_ratio': {'type': 'number'},
    },
    'required': ['total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                 'allocation_ratio'],
    'additionalProperties': False,
}
#: One inventory with its provider's generation (omitted while the
#: generation is 0, as upstream does).
ONE = common.with_properties(
    SHOWN, {'resource_provider_generation': common.GENERATION})
#: Every inventory of a provider, by class.
ALL = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': common.GENERATION,
        'inventories': {'type': 'object', 'additionalProperties': SHOWN},
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}
