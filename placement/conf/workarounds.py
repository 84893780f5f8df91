"""[workarounds] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('workarounds', title='Workarounds')

OPTS = [
    cfg.BoolOpt('optimize_for_wide_provider_trees', default=False,
                help='Accepted for compatibility. The candidate engine '
                     'always prunes over-capacity partial combinations.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
