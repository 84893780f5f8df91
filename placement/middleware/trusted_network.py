"""Who may read ``GET /metrics`` and ``GET /capacity`` without a token.

A Prometheus server has no keystone token, so a request for one of those
two read-only pages that carries no token and comes straight from a peer
in ``[metrics] trusted_networks`` (default: loopback only) is let past
authentication and policy. Every other request for them is
authenticated like any API call and needs its policy rule
(``placement:metrics:read``, ``placement:capacity:read``).
"""

import ipaddress
import logging

LOG = logging.getLogger(__name__)

ENVIRON_TRUSTED = 'placement.trusted_network'
PATHS = frozenset(('/metrics', '/capacity'))


def trusted(environ):
    """True if this request was let in by its network alone."""
    return environ.get(ENVIRON_TRUSTED, False)


def parse_networks(values):
    return [ipaddress.ip_network(value.strip(), strict=False)
            for value in values if value.strip()]


class TrustedNetwork:
    """Mark token-less reads of the two pages from trusted networks."""

    def __init__(self, application, networks):
        self.application = application
        self.networks = parse_networks(networks)

    def _from_trusted_peer(self, environ):
        try:
            peer = ipaddress.ip_address(
                environ.get('REMOTE_ADDR', '').split('%', 1)[0])
        except ValueError:
            return False
        if peer.version == 6 and peer.ipv4_mapped:
            peer = peer.ipv4_mapped
        return any(peer in network for network in self.networks)

    def __call__(self, environ, start_response):
        environ[ENVIRON_TRUSTED] = bool(
            self.networks
            and environ.get('REQUEST_METHOD') == 'GET'
            and environ.get('PATH_INFO') in PATHS
            and not environ.get('HTTP_X_AUTH_TOKEN')
            and self._from_trusted_peer(environ))
        return self.application(environ, start_response)
