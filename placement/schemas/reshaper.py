"""Schemas for POST /reshaper."""

from placement.schemas import allocation
from placement.schemas import common
from placement.schemas import inventory


def _body(consumer):
    """The reshaper body whose consumers follow ``consumer`` (the PUT
    /allocations schema of the same microversion)."""
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'minProperties': 1,
                'patternProperties': {
                    common.UUID_KEY_PATTERN: inventory.put_all_schema(),
                },
                'additionalProperties': False,
            },
            'allocations': allocation.by_consumer(consumer,
                                                  min_consumers=0),
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


POST_V1_30 = _body(allocation.PUT_V1_28)
POST_V1_34 = _body(allocation.PUT_V1_34)
POST_V1_38 = _body(allocation.PUT_V1_38)
