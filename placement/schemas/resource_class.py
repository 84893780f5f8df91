"""Schemas for /resource_classes."""

from placement.schemas import common

# POST /resource_classes, and the 1.2-1.6 rename body of PUT.
BODY = {
    'type': 'object',
    'properties': {'name': common.CUSTOM_RESOURCE_CLASS_NAME},
    'required': ['name'],
    'additionalProperties': False,
}
# 1.7+: the path segment of PUT /resource_classes/{name} is the name.
NAME = common.CUSTOM_RESOURCE_CLASS_NAME

# -- responses ---------------------------------------------------------------

SHOWN = {
    'type': 'object',
    'properties': {'name': common.RESOURCE_CLASS_NAME,
                   'links': common.links(['self'])},
    'required': ['name', 'links'],
    'additionalProperties': False,
}
LISTING = {
    'type': 'object',
    'properties': {'resource_classes': {'type': 'array', 'items': SHOWN}},
    'required': ['resource_classes'],
    'additionalProperties': False,
}
