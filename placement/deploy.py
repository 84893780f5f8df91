"""Build the WSGI application: database, start-up work, middleware stack.

Order of layers, outermost first (api-ref/design.rst): trusted-network
mark, proxy headers, request metrics, request id and log, osprofiler
(when enabled), CORS, authentication, audit events, context, fault
wrapper, health check, microversion, request line and body size limits,
application.
"""

import logging
import time

from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from sqlalchemy import exc as sa_exc

from placement import context as placement_context
from placement.db import api as db_api
from placement.db import drivers
from placement.db import failures
from placement.db import migration
from placement.db import profiler as db_profiler
from placement import exception
from placement.middleware import audit
from placement.middleware import auth
from placement.middleware import body_limit
from placement.middleware import fault
from placement.middleware import healthcheck
from placement.middleware import microversion as version_middleware
from placement.middleware import profiler
from placement.middleware import request_metrics
from placement.middleware import requestlog
from placement.middleware import trusted_network
from placement.objects import resource_class
from placement.objects import trait
from placement.observability import metrics
from placement.observability import version
from placement import policy
from placement.web import capacity_flavors
from placement.web import dispatch
from placement.web import route_table

LOG = logging.getLogger(__name__)


class ConfigurationError(Exception):
    pass


def create_database(conf):
    """The Database for ``[placement_database]``, once it answers."""
    group = conf.placement_database
    if not group.connection:
        raise ConfigurationError(
            '[placement_database] connection is required (for example '
            'OS_PLACEMENT_DATABASE__CONNECTION=sqlite:////var/lib/'
            'placement/placement.sqlite)')
    url = group.connection
    if group.connection_parameters:
        url += ('&' if '?' in url else '?') + group.connection_parameters
    missing = drivers.problem(url)
    if missing:
        raise ConfigurationError(missing)
    db = db_api.Database(
        url, sqlite_synchronous=group.sqlite_synchronous,
        mysql_sql_mode=group.mysql_sql_mode,
        mysql_wsrep_sync_wait=group.mysql_wsrep_sync_wait,
        pool_size=group.max_pool_size,
        max_overflow=group.max_overflow, pool_timeout=group.pool_timeout,
        pool_recycle=group.connection_recycle_time,
        echo=group.connection_debug >= 50,
        postgresql_prepared_statements=(
            group.postgresql_prepared_statements))
    _while_unavailable(conf, db.ping)
    return db


def _while_unavailable(conf, work, *args):
    """Run ``work``, again every ``retry_interval`` seconds while the
    database is unavailable, up to ``max_retries`` times.

    Both the first connection and the start-up work after it wait: the
    database can go away in between, and a gunicorn worker respawned
    during an outage must wait for it, not fail to boot (which stops the
    whole gunicorn). One line per attempt, without a traceback.
    """
    group = conf.placement_database
    attempt = 0
    while True:
        try:
            return work(*args)
        except exception.DatabaseUnavailable as exc:
            reason = exc.kwargs['reason']
        except sa_exc.OperationalError as exc:  # Alembic's own connections
            reason = failures.describe_failure(exc)
        attempt += 1
        if 0 <= group.max_retries < attempt:
            raise exception.DatabaseUnavailable(
                reason='%s; gave up after %d attempts' % (reason, attempt))
        # Logged outside the except clause: oslo.log would append the
        # exception being handled to the line.
        LOG.warning('Waiting for the database at start-up (attempt %d): %s',
                    attempt, exception.DatabaseUnavailable(reason=reason))
        time.sleep(group.retry_interval)


def prepare_database(conf, db):
    """Start-up work before serving: migrate if asked, sync standard names.

    Safe to run from several processes at once.
    """
    if conf.placement_database.sync_on_startup:
        migration.upgrade(db)
    current = migration.version(db)
    if current != migration.head():
        raise ConfigurationError(
            'The database schema is at revision %s, not %s. Run '
            '"placement-manage db sync" or set [placement_database] '
            'sync_on_startup = True.' % (current, migration.head()))
    ctx = placement_context.AdminContext(db, conf)
    resource_class.sync_standard(ctx)
    trait.sync_standard(ctx)


def build_app(conf, db):
    """The full middleware stack around the dispatcher."""
    try:
        capacity_flavors.named(conf)
    except ValueError as exc:
        raise ConfigurationError(str(exc))
    enforcer = policy.PolicyEnforcer(conf)
    app = dispatch.Dispatcher(route_table.ROUTES)
    app = body_limit.BodySizeLimit(
        app, conf.oslo_middleware.max_request_body_size)
    app = body_limit.RequestLineLimit(app, conf.api.max_request_line)
    app = version_middleware.Microversion(app)
    # Inside the context (details by policy), outside microversions.
    app = healthcheck.HealthCheck(app, healthcheck.DatabaseProbe(
        db, conf.api.healthcheck_timeout, conf.api.healthcheck_cache_time))
    app = fault.FaultWrapper(app)
    app = auth.ContextBuilder(app, db, conf, enforcer)
    if conf.audit.enabled:
        # Inside authentication: the initiator is the identified caller.
        app = audit.Audit(app, conf)
    if conf.api.auth_strategy == 'noauth2':
        app = auth.NoAuth(app)
    else:
        app = auth.KeystoneAuth(app, conf)
    if conf.cors.allowed_origin:
        app = cors.CORS(app, conf)
    if profiler.enabled(conf):
        try:
            app = profiler.traced(conf, app)
        except profiler.ConfigurationError as exc:
            raise ConfigurationError(str(exc))
        if conf.profiler.trace_sqlalchemy:
            db_profiler.trace_sql(db)
    app = requestlog.RequestLog(app)
    if conf.metrics.enabled:
        app = request_metrics.RequestMetrics(app, _start_metrics(db),
                                             route_table.ROUTES)
    if conf.oslo_middleware.enable_proxy_headers_parsing:
        app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    if conf.metrics.enabled:
        # Outermost: it must see the direct peer, before HTTPProxyToWSGI
        # rewrites REMOTE_ADDR from headers any client can send.
        app = trusted_network.TrustedNetwork(
            app, conf.metrics.trusted_networks, conf.metrics.trusted_proxies)
    return app


def _start_metrics(db):
    recorded = metrics.configure()
    metrics.watch_pool(db.engine)
    metrics.build_info(version.version_string(), db.dialect)
    return recorded


def loadapp(conf, db=None):
    """Create the database handle, prepare it, and return the app."""
    db = db or create_database(conf)
    _while_unavailable(conf, prepare_database, conf, db)
    # Connections opened during start-up must not be shared with
    # processes forked after it (gunicorn --preload). An in-memory
    # database would vanish with its connection; it is never forked.
    if not db.in_memory:
        db.dispose()
    return build_app(conf, db)
