"""Schemas for /traits and /resource_providers/{uuid}/traits."""

from placement.schemas import common

# Query string of GET /traits.
LIST_V1_6 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'associated': {'type': 'string'},
    },
    'additionalProperties': False,
}

# The name in PUT /traits/{name}: only custom traits can be created.
CUSTOM_NAME = common.CUSTOM_TRAIT_NAME

# Body of PUT /resource_providers/{uuid}/traits. Names are only checked
# for length here; whether they exist is checked against the database.
PUT_PROVIDER_TRAITS_V1_6 = {
    'type': 'object',
    'properties': {
        'traits': {
            'type': 'array',
            'items': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        },
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}

# -- responses ---------------------------------------------------------------

LISTING = {
    'type': 'object',
    'properties': {'traits': common.NAMES},
    'required': ['traits'],
    'additionalProperties': False,
}
PROVIDER_TRAITS = {
    'type': 'object',
    'properties': {'traits': common.NAMES,
                   'resource_provider_generation': common.GENERATION},
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}
