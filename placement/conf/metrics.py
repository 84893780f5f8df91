"""[metrics] options: Prometheus exposition and the capacity page."""

from oslo_config import cfg

GROUP = cfg.OptGroup('metrics', title='Metrics and the capacity page')

OPTS = [
    cfg.BoolOpt('enabled', default=True,
                help='Count requests and domain events and serve GET '
                     '/metrics and GET /capacity. False removes the '
                     'request-counting middleware and both pages (404).'),
    cfg.ListOpt('trusted_networks', default=['127.0.0.0/8', '::1/128'],
                help='Networks (CIDR) whose clients may read GET /metrics '
                     'and GET /capacity without a token, whatever '
                     'auth_strategy says. Everyone else authenticates and '
                     'needs the placement:metrics:read or '
                     'placement:capacity:read policy rule. The address '
                     'checked is the direct peer (REMOTE_ADDR): behind a '
                     'reverse proxy on the same host, block both paths '
                     'in the proxy or set this to an empty list.'),
    cfg.IntOpt('capacity_refresh_interval', default=60, min=0,
               help='Seconds the capacity gauges of GET /metrics and the '
                    'data of GET /capacity are reused before the tables '
                    'are read again, shared by all worker processes of '
                    'one server. On a large fleet the scrape that renews '
                    'them takes seconds (about 2 s at 10,000 providers); '
                    'the others are served from the shared copy.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
