"""Option listing for oslo-config-generator."""

from placement.conf import api, database, middleware, paths, placement
from placement.conf import workarounds


def list_opts():
    return [
        (None, paths.OPTS),
        (api.GROUP, api.OPTS),
        (database.GROUP, database.OPTS),
        (middleware.GROUP_NAME, middleware.OPTS),
        (placement.GROUP, placement.OPTS),
        (workarounds.GROUP, workarounds.OPTS),
    ]
