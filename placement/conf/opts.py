"""Option listing for oslo-config-generator."""

from placement.conf import api, audit, capacity, database, metrics
from placement.conf import middleware, paths
from placement.conf import placement, workarounds
from placement.conf import profiler


def list_opts():
    return [
        (None, paths.OPTS),
        (api.GROUP, api.OPTS),
        (audit.GROUP, audit.OPTS),
        (capacity.GROUP, capacity.OPTS),
        (database.GROUP, database.OPTS),
        (metrics.GROUP, metrics.OPTS),
        (middleware.GROUP_NAME, middleware.OPTS),
        (placement.GROUP, placement.OPTS),
        (workarounds.GROUP, workarounds.OPTS),
    ] + profiler.list_opts()
