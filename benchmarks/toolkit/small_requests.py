"""The small GETs of a compute node's periodic refresh (provider tree,
inventories, traits, aggregates) and usages, against ``GET /``, and the
one provider they ask about: timed over HTTP by ``small_gets``, in
process by ``request_cpu``."""

from benchmarks.toolkit import cloud_api

NAME = 'small-gets-provider'
PROVIDER = cloud_api.ident(NAME)
AGGREGATE = cloud_api.ident('small-gets-aggregate')
PATHS = [
    '/',
    '/resource_providers/' + PROVIDER,
    '/resource_providers?in_tree=' + PROVIDER,
    '/resource_providers/%s/inventories' % PROVIDER,
    '/resource_providers/%s/traits' % PROVIDER,
    '/resource_providers/%s/aggregates' % PROVIDER,
    '/resource_providers/%s/usages' % PROVIDER,
    '/usages?project_id=' + cloud_api.ident('small-gets-project'),
]


def create_provider(client):
    """Create the provider, with an inventory, a trait and an aggregate,
    through ``client`` (whose ``write`` is ``cloud_api.Client``'s)."""
    cloud_api.create_provider(client, NAME, {'VCPU': {'total': 8}},
                              traits=['HW_CPU_X86_AVX2'],
                              aggregates=[AGGREGATE])
