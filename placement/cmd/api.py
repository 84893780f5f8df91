"""``placement-api``: serve the API for development.

With no configuration at all it stores data in ``placement.sqlite`` in the
working directory, creates the schema on start and uses ``noauth2``. Any
configuration (a file given or found, or an ``OS_<GROUP>__<OPTION>``
variable) turns those development defaults off, so a half-written
production configuration gets the service defaults (keystone) rather
than an open door. Production deployments run ``placement.wsgi.api``
under gunicorn or uwsgi instead (see doc/source/install/index.rst).
"""

import os
import re
import socketserver
import sys
from wsgiref import simple_server

from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as placement_conf
from placement import deploy
from placement.observability import log_format
from placement.observability import version

LOG = logging.getLogger(__name__)

CLI_OPTS = [
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address to listen on.'),
    cfg.PortOpt('port', default=8000, help='Port to listen on.'),
]


_ENV_OPTION = re.compile(r'OS_\w+__\w+$')


def configuration_given(conf, environ=None):
    """Whether a configuration file or option variable was supplied."""
    environ = os.environ if environ is None else environ
    return bool(conf.config_file or conf.config_dir
                or any(_ENV_OPTION.match(name) for name in environ))


def development_defaults():
    return {
        ('placement_database', 'connection'):
            'sqlite:///' + os.path.abspath('placement.sqlite'),
        ('placement_database', 'sync_on_startup'): True,
        ('api', 'auth_strategy'): 'noauth2',
    }


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        pass  # the request log middleware already logs every request


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = placement_conf.build(argv, cli_opts=CLI_OPTS,
                                version=version.version_string())
    development = not configuration_given(conf)
    if development:
        # Nothing else was given, so overrides lose nothing. (oslo.config
        # keeps them in the option groups, which every ConfigOpts of the
        # process shares: tests reset() the conf afterwards.)
        for (group, name), value in development_defaults().items():
            conf.set_override(name, value, group=group)
    log_format.setup(conf)
    if development:
        LOG.warning('No configuration given: development defaults apply '
                    '(SQLite in %s, schema created on start, noauth2).',
                    conf.placement_database.connection)
    app = deploy.loadapp(conf)
    server = simple_server.make_server(
        conf.host, conf.port, app, server_class=_ThreadingServer,
        handler_class=_QuietHandler)
    LOG.info('placement-api serving on http://%s:%s/ (database %s, '
             'auth %s)', conf.host, conf.port,
             conf.placement_database.connection, conf.api.auth_strategy)
    print('placement-api serving on http://%s:%s/' % (conf.host, conf.port),
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
