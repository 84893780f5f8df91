"""[api] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('api', title='API options')

#: 48 KiB: twice the 23 KB of 300 granular groups of two classes each
#: (room for their traits and aggregates), and under the 64 KiB to
#: which uwsgi's --buffer-size and wsgiref limit a request line.
DEFAULT_MAX_REQUEST_LINE = 48 * 1024

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
    cfg.IntOpt(
        'max_request_line', default=DEFAULT_MAX_REQUEST_LINE, min=1024,
        help='Longest request line accepted (method, path with its query '
             'string, protocol), in bytes; longer ones are answered 414 '
             'in the JSON error format, whatever the WSGI server allows. '
             'The default (48 KiB) is twice what 300 granular request '
             'groups of GET /allocation_candidates take (about 23 KB). '
             'Keep it below the WSGI server\'s own limit (uwsgi '
             '--buffer-size, 64 KiB for wsgiref), or that server answers '
             'first with its own error page.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
