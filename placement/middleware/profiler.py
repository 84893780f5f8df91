"""Request tracing with osprofiler (``placement-server[profiler]``).

Operators who trace nova with osprofiler see placement's part of the
same trace: a request carrying osprofiler's HMAC-signed trace headers
(``X-Trace-Info``, ``X-Trace-HMAC``, signed with one of ``[profiler]
hmac_keys``) gets a ``wsgi`` span, sent to ``[profiler]
connection_string``; with ``trace_sqlalchemy``, ``placement/db/
profiler.py`` adds a ``db`` span per SQL statement. Off (the default),
none of it is on the request path (``deploy.build_app`` adds nothing).
"""

import socket

from placement.conf import profiler as profiler_conf

#: osprofiler's default ``hmac_keys``, known to everyone.
DEFAULT_HMAC_KEYS = 'SECRET_KEY'


class ConfigurationError(Exception):
    pass


def enabled(conf):
    return profiler_conf.enabled(conf)


def traced(conf, app):
    """``app`` behind osprofiler's WSGI middleware, its notifier set up
    from ``[profiler]`` (call only if ``enabled``). Process-wide:
    osprofiler keeps its notifier and its middleware switch in module
    globals."""
    from osprofiler import initializer
    from osprofiler import web

    group = conf.profiler
    if group.hmac_keys in ('', DEFAULT_HMAC_KEYS):
        raise ConfigurationError(
            '[profiler] enabled needs hmac_keys of your own (not empty, '
            'not osprofiler\'s default %r): whoever signs a request with '
            'one has it traced' % DEFAULT_HMAC_KEYS)
    # A connection string osprofiler cannot use is logged by osprofiler,
    # which then sends the spans nowhere.
    initializer.init_from_conf(
        conf, context={}, project='placement', service='placement-api',
        host=socket.gethostname())
    return web.WsgiMiddleware(app, hmac_keys=group.hmac_keys, enabled=True)
