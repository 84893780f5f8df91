"""CADF audit events through keystonemiddleware's audit middleware.

Off by default (``[audit] enabled``). It sits inside authentication, so
an event names the initiator keystonemiddleware (or noauth2) identified,
and by default audits writes only (``[audit] ignore_req_list``). The
middleware copies a share of the caller's token into each event
(pycadf shows its first and last eighth); this wrapper hides the token
from it, so no part of a token reaches the notifications or the log.
"""

from keystonemiddleware import audit

from placement.conf import audit as audit_conf

#: The logger events go to when oslo.messaging does not carry them.
LOG_NAME = 'keystonemiddleware.audit'


class ConfigurationError(Exception):
    pass


def map_file(conf):
    """The audit map to use: the option, else the shipped file found
    beside the configuration files."""
    path = conf.audit.audit_map_file or conf.find_file(audit_conf.MAP_FILE)
    if not path:
        raise ConfigurationError(
            '[audit] enabled = True needs an audit map: set [audit] '
            'audit_map_file or put %s beside placement.conf (the '
            'installation ships one in etc/placement/)' % audit_conf.MAP_FILE)
    return path


class Audit(audit.AuditMiddleware):
    """The audit middleware, configured from ``conf`` and never shown the
    caller's token."""

    def __init__(self, application, conf):
        super().__init__(
            application, oslo_config_config=conf,
            audit_map_file=map_file(conf), log_name=LOG_NAME,
            ignore_req_list=','.join(conf.audit.ignore_req_list),
            service_name='placement')

    def _create_event(self, req):
        token = req.environ.pop('HTTP_X_AUTH_TOKEN', None)
        try:
            return super()._create_event(req)
        finally:
            if token is not None:
                req.environ['HTTP_X_AUTH_TOKEN'] = token
