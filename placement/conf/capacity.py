"""[capacity] options: the requests GET /metrics and GET /capacity
count the fit of (api-ref/capacity-fit.rst, 'Named flavors')."""

from oslo_config import cfg

GROUP = cfg.OptGroup('capacity', title='Capacity planning')

OPTS = [
    cfg.MultiStrOpt(
        'flavors', default=[],
        help='Named requests whose fit (how many more instances the '
             'fleet can hold, as GET /capacity/fit counts them) GET '
             '/metrics exports as placement_flavor_fit and GET /capacity '
             'plots. One per line, repeated: "NAME = QUERY", QUERY a GET '
             '/allocation_candidates query string, e.g. "m1.small = '
             'resources=VCPU:1,MEMORY_MB:2048,DISK_GB:20'
             '&required=!COMPUTE_STATUS_DISABLED". A malformed line '
             'stops the service from starting. Counted at most once per '
             '[metrics] capacity_refresh_interval, shared by the workers '
             'of a server.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
