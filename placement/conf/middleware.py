"""[oslo_middleware] options of our own middleware.

The option keeps oslo.middleware's name so deployments configure it the
way they configure other OpenStack services, with a default of ours.
"""

from oslo_config import cfg

GROUP_NAME = 'oslo_middleware'

#: 8 MiB. A POST /allocations of 5,000 consumers, each on two providers
#: with three classes, measures 1.85 MB (370 bytes a consumer).
DEFAULT_MAX_REQUEST_BODY_SIZE = 8 * 1024 * 1024

OPTS = [
    cfg.IntOpt('max_request_body_size', min=1,
               default=DEFAULT_MAX_REQUEST_BODY_SIZE,
               help='Largest request body accepted, in bytes; larger ones '
                    'are answered 413. The default (8 MiB) fits a POST '
                    '/allocations of some 20,000 consumers: 5,000 '
                    'consumers, each on two providers with three resource '
                    'classes, measure 1.85 MB.'),
]


def register_opts(conf):
    conf.register_opts(OPTS, group=GROUP_NAME)
