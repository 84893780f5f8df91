"""Schemas for the query string of GET /usages."""

from placement.schemas import common

LIST_V1_9 = {
    'type': 'object',
    'properties': {
        'project_id': common.EXTERNAL_ID,
        'user_id': common.EXTERNAL_ID,
    },
    'required': ['project_id'],
    'additionalProperties': False,
}

# 1.38: filter by consumer type. The "^all" branch is not end-anchored,
# as upstream's, so e.g. "allfoo" passes (and matches no type).
LIST_V1_38 = common.with_properties(LIST_V1_9, {
    'consumer_type': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                      'pattern': '^[A-Z0-9_]+$|^all|^unknown$'},
})
