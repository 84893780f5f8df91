"""[audit] options: CADF audit events of keystonemiddleware's audit
middleware (placement/middleware/audit.py)."""

from oslo_config import cfg

GROUP = cfg.OptGroup('audit', title='CADF audit events')

#: The map shipped in etc/placement/ (installed under <prefix>/etc/placement).
MAP_FILE = 'api_audit_map.conf'

OPTS = [
    cfg.BoolOpt('enabled', default=False,
                help='Emit a CADF audit event (keystonemiddleware audit '
                     'middleware) for each request and its response, naming '
                     'the initiator (user, project, address) and the '
                     'target (the placement endpoint and the resource '
                     'path). Events go to oslo.messaging notifications when '
                     'oslo.messaging is installed and configured '
                     '([audit_middleware_notifications]), else to the log '
                     '(logger keystonemiddleware.audit, INFO).'),
    cfg.StrOpt('audit_map_file',
               help='Path of the audit map (resource names in paths, '
                    'service type). Default: %s found beside the '
                    'configuration files (etc/placement/ of the '
                    'installation ships one).' % MAP_FILE),
    cfg.ListOpt('ignore_req_list', default=['GET', 'HEAD'],
                help='HTTP methods not audited. The default audits every '
                     'write (POST, PUT, DELETE); empty audits reads too.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
