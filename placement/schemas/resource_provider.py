"""Schemas for /resource_providers."""

from placement.schemas import common

POST_V1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'maxLength': 200},
        'uuid': common.UUID,
    },
    'required': ['name'],
    'additionalProperties': False,
}
# 1.14: a provider may be created as the child of another.
POST_V1_14 = common.with_properties(
    POST_V1_0, {'parent_provider_uuid': common.NULLABLE_UUID})

PUT_V1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'maxLength': 200},
    },
    'required': ['name'],
    'additionalProperties': False,
}
PUT_V1_14 = common.with_properties(
    PUT_V1_0, {'parent_provider_uuid': common.NULLABLE_UUID})

# Query strings of GET /resource_providers, per microversion.
LIST_V1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'uuid': {'type': 'string', 'format': 'uuid'},
    },
    'additionalProperties': False,
}
# 1.3: member_of (aggregate filter).
LIST_V1_3 = common.with_properties(LIST_V1_0,
                                   {'member_of': {'type': 'string'}})
# 1.4: resources (capacity filter).
LIST_V1_4 = common.with_properties(LIST_V1_3,
                                   {'resources': {'type': 'string'}})
# 1.14: in_tree.
LIST_V1_14 = common.with_properties(
    LIST_V1_4, {'in_tree': {'type': 'string', 'format': 'uuid'}})
# 1.18: required (traits).
LIST_V1_18 = common.with_properties(LIST_V1_14,
                                    {'required': {'type': 'string'}})
