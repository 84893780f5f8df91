"""[DEFAULT] path options kept for configuration-file compatibility."""

from oslo_config import cfg

OPTS = [
    cfg.StrOpt('pybasedir', help='Not used by the API.'),
    cfg.StrOpt('state_path', help='Not used by the API.'),
    cfg.StrOpt('tempdir', help='Not used by the API.'),
]


def register_opts(conf):
    conf.register_opts(OPTS)
