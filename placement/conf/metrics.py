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
                     'checked is the direct TCP peer, never one a header '
                     'names: a request carrying Forwarded, '
                     'X-Forwarded-For or X-Real-IP is trusted only when '
                     'it comes from one of trusted_proxies.'),
    cfg.ListOpt('trusted_proxies', default=[],
                help='Addresses or networks (CIDR) of reverse proxies '
                     'whose forwarding headers (Forwarded, '
                     'X-Forwarded-For, X-Real-IP) are believed for the '
                     'token-less reads above: a request from one of them '
                     'is trusted when every such header it carries names '
                     'a client in trusted_networks (the nearest address '
                     'not itself a trusted proxy), and never without '
                     'one. Empty (the default): no header is believed, '
                     'and a request carrying one needs a token.'),
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
