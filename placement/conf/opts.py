"""Option listing for oslo-config-generator."""

from placement.conf import api, database, metrics, paths, placement
from placement.conf import workarounds


def list_opts():
    return [
        (None, paths.OPTS),
        (api.GROUP, api.OPTS),
        (database.GROUP, database.OPTS),
        (metrics.GROUP, metrics.OPTS),
        (placement.GROUP, placement.OPTS),
        (workarounds.GROUP, workarounds.OPTS),
    ]
