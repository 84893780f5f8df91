"""Option listing for oslo-config-generator."""

from placement.conf import api, database, paths, placement, workarounds


def list_opts():
    return [
        (None, paths.OPTS),
        (api.GROUP, api.OPTS),
        (database.GROUP, database.OPTS),
        (placement.GROUP, placement.OPTS),
        (workarounds.GROUP, workarounds.OPTS),
    ]
