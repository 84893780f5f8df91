"""``placement-api``: serve the API for development.

With no configuration at all it stores data in ``placement.sqlite`` in the
working directory, creates the schema on start and uses ``noauth2``;
configuration files and ``OS_<GROUP>__<OPTION>`` variables override
those defaults. Production deployments run ``placement.wsgi.api`` under
gunicorn or uwsgi instead (see README).
"""

import os
import socketserver
import sys
from wsgiref import simple_server

from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as placement_conf
from placement import deploy

LOG = logging.getLogger(__name__)

CLI_OPTS = [
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address to listen on.'),
    cfg.PortOpt('port', default=8000, help='Port to listen on.'),
]


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
    conf = placement_conf.build(argv, defaults=development_defaults(),
                                cli_opts=CLI_OPTS)
    logging.setup(conf, 'placement')
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
