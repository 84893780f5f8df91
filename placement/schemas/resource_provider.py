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

# -- responses ---------------------------------------------------------------


def _provider(rels, nested=False):
    properties = {
        'uuid': common.UUID,
        'name': {'type': 'string'},
        'generation': common.GENERATION,
        'links': common.links(rels),
    }
    if nested:
        properties['parent_provider_uuid'] = common.NULLABLE_UUID
        properties['root_provider_uuid'] = common.UUID
    return {'type': 'object', 'properties': properties,
            'required': sorted(properties), 'additionalProperties': False}


_RELS_V1_0 = ('self', 'inventories', 'usages')
_RELS_V1_1 = _RELS_V1_0 + ('aggregates',)
_RELS_V1_6 = _RELS_V1_1 + ('traits',)
_RELS_V1_11 = _RELS_V1_6 + ('allocations',)

#: One provider, per microversion (links grow, then nesting fields).
PROVIDER = (
    ('1.0', _provider(_RELS_V1_0)),
    ('1.1', _provider(_RELS_V1_1)),
    ('1.6', _provider(_RELS_V1_6)),
    ('1.11', _provider(_RELS_V1_11)),
    ('1.14', _provider(_RELS_V1_11, nested=True)),
)


def _listing(provider):
    return {'type': 'object',
            'properties': {'resource_providers': {'type': 'array',
                                                  'items': provider}},
            'required': ['resource_providers'],
            'additionalProperties': False}


PROVIDERS = tuple((version, _listing(provider))
                  for version, provider in PROVIDER)
