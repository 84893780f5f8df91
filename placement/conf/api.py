"""[api] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('api', title='API options')

OPTS = [
    cfg.StrOpt(
        'auth_strategy',
        default='keystone',
        choices=[('keystone', 'Validate tokens with keystone'),
                 ('noauth2', 'Trust X-Auth-Token as "user[:project]"; '
                             'for development and tests only')],
        deprecated_group='DEFAULT',
        help='How incoming requests are authenticated.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
