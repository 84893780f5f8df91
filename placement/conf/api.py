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
    cfg.FloatOpt(
        'healthcheck_cache_time', default=3.0, min=0,
        help='Seconds for which GET /healthcheck reuses the result of its '
             'last database probe, so that frequent polling by load '
             'balancers does not load the database.'),
    cfg.FloatOpt(
        'healthcheck_timeout', default=1.0, min=0.1,
        help='Seconds GET /healthcheck waits for the database to answer '
             'before it reports the database unavailable.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
