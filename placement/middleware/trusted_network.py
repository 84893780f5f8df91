"""Who may read ``GET /metrics`` and ``GET /capacity`` without a token.

A Prometheus server has no keystone token, so a request for one of the
read-only pages in ``PATHS`` that carries no token is let past
authentication and policy when its client is in ``[metrics]
trusted_networks`` (default: loopback only). Every other request for
them is authenticated like any API call and needs its policy rule
(``placement:metrics:read``, ``placement:capacity:read``).

The client is decided on the direct TCP peer, as the WSGI server saw it,
before any header rewrites ``REMOTE_ADDR`` (the middleware runs
outermost, see ``deploy.build_app``). A request carrying a forwarding
header (``Forwarded``, ``X-Forwarded-For``, ``X-Real-IP``) is never
trusted by its peer's address alone: only a peer named in ``[metrics]
trusted_proxies`` may forward, and then every forwarding header it sent
must name a client in the trusted networks (see api-ref/metrics.rst,
'Who may read them').
"""

import ipaddress
import logging

LOG = logging.getLogger(__name__)

ENVIRON_TRUSTED = 'placement.trusted_network'
#: Token-less reads are possible here only (``/capacity/fit`` shares
#: ``/capacity``'s policy).
PATHS = frozenset(('/metrics', '/capacity', '/capacity/fit'))
#: WSGI names of the headers through which a proxy names its client.
FORWARDING_HEADERS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_FOR',
                      'HTTP_X_REAL_IP')


def trusted(environ):
    """True if this request was let in by its network alone."""
    return environ.get(ENVIRON_TRUSTED, False)


def parse_networks(values):
    return [ipaddress.ip_network(value.strip(), strict=False)
            for value in values if value.strip()]


def parse_address(text):
    """An address from a header or ``REMOTE_ADDR`` (quotes, brackets,
    ports and IPv6 zones removed; IPv4-mapped IPv6 as IPv4), or None."""
    text = text.strip().strip('"')
    if text.startswith('['):                # "[2001:db8::1]:4711"
        text = text[1:].partition(']')[0]
    elif text.count(':') == 1:              # "192.0.2.1:4711"
        text = text.partition(':')[0]
    try:
        address = ipaddress.ip_address(text.split('%', 1)[0])
    except ValueError:                      # "unknown", "_hidden", ""
        return None
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address


def forwarded_chain(name, value):
    """The addresses one forwarding header names, client first (each
    proxy appends the peer it heard from); None where one is not an
    address."""
    if name == 'HTTP_FORWARDED':            # for=a;proto=https, for=b
        chain = []
        for element in value.split(','):
            pairs = (pair.partition('=') for pair in element.split(';'))
            chain.extend(v for k, _, v in pairs if k.strip().lower() == 'for')
        return [parse_address(item) for item in chain]
    return [parse_address(item) for item in value.split(',')]


class TrustedNetwork:
    """Mark token-less reads of ``PATHS`` by clients of trusted networks."""

    def __init__(self, application, networks, proxies=()):
        self.application = application
        self.networks = parse_networks(networks)
        self.proxies = parse_networks(proxies)

    def _in(self, networks, address):
        return address is not None and any(
            address in network for network in networks)

    def _client(self, chain):
        """The first address from the right that is not a trusted proxy
        (the one the nearest trusted proxy heard from)."""
        for address in reversed(chain):
            if not self._in(self.proxies, address):
                return address
        return chain[0] if chain else None

    def client_trusted(self, environ):
        """True if the request's client is in the trusted networks, by
        the direct peer or through named proxies only."""
        peer = parse_address(environ.get('REMOTE_ADDR', ''))
        forwarded = [(name, environ[name]) for name in FORWARDING_HEADERS
                     if name in environ]
        if not forwarded:
            # A named proxy must say whose request it passes on.
            return (self._in(self.networks, peer)
                    and not self._in(self.proxies, peer))
        if not self._in(self.proxies, peer):
            return False
        return all(self._in(self.networks,
                            self._client(forwarded_chain(name, value)))
                   for name, value in forwarded)

    def __call__(self, environ, start_response):
        environ[ENVIRON_TRUSTED] = bool(
            self.networks
            and environ.get('REQUEST_METHOD') == 'GET'
            and environ.get('PATH_INFO') in PATHS
            and not environ.get('HTTP_X_AUTH_TOKEN')
            and self.client_trusted(environ))
        return self.application(environ, start_response)
