"""The service's Prometheus metrics and the functions that count them.

Objects and the database layer call the small functions below
(``allocation_write``, ``retry``, ...); they do nothing until the web
application calls ``configure``, so command-line tools and object tests
count nothing. ``configure`` creates the metrics only after it has chosen
the directory worker processes share (``metrics_files``), because
prometheus-client decides between in-memory and file-backed values when
a metric is created.

Metric names, labels and meanings are listed in api-ref/metrics.rst.
"""

import os
import threading
import weakref

from placement.observability import metrics_files

#: Label of requests whose path matches no route (bounded cardinality).
UNMATCHED_ROUTE = 'unmatched'
#: Allocation write outcomes counted by ``allocation_write``.
OUTCOMES = ('ok', 'capacity_refused', 'provider_generation_conflict',
            'consumer_generation_conflict')
#: Reasons counted by ``retry``.
RETRY_REASONS = ('generation_race', 'database')

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                    5.0, 10.0, 30.0)

_lock = threading.Lock()
_metrics = None
_watched = weakref.WeakSet()
#: This process's id, renewed in every child a fork makes.
_pid = os.getpid()


def _renew_pid():
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_renew_pid)


def process_identifier():
    """prometheus-client's file-backed values ask which process they are
    in at every write, to move to files of their own after a fork; its
    default asks the kernel (a system call, seven times per request).
    This is the id as of the last fork, which Python renews in each
    child it forks (gunicorn's and multiprocessing's ``os.fork``, and
    uWSGI's fork, which tells the interpreter)."""
    return _pid


class _Metrics:
    """Every metric the service records, created once per process."""

    def __init__(self, directory):
        import prometheus_client as prom
        from prometheus_client import values
        if directory:
            # Whether or not prometheus-client was imported before the
            # directory was chosen, values go to the shared files.
            values.ValueClass = values.MultiProcessValue(
                process_identifier=process_identifier)
        self.directory = directory
        self.registry = prom.CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = prom.Counter(
            'placement_http_requests', 'HTTP requests answered.',
            ['route', 'method', 'status', 'microversion'], registry=r)
        self.duration = prom.Histogram(
            'placement_http_request_duration_seconds',
            'Time from receiving a request to returning its response.',
            ['route', 'method', 'status', 'microversion'],
            buckets=_LATENCY_BUCKETS, registry=r)
        self.in_flight = prom.Gauge(
            'placement_http_requests_in_flight',
            'Requests being answered now.', registry=r,
            multiprocess_mode='livesum')
        self.allocation_writes = prom.Counter(
            'placement_allocation_writes',
            'Allocation writes (PUT/POST allocations) by outcome.',
            ['outcome'], registry=r)
        self.retries = prom.Counter(
            'placement_retries',
            'Transactions the service re-ran itself, by reason.',
            ['reason'], registry=r)
        self.candidate_requests = prom.Counter(
            'placement_allocation_candidates_requests',
            'Allocation candidate searches run.', registry=r)
        self.candidates_returned = prom.Counter(
            'placement_allocation_candidates_returned',
            'Allocation candidates returned, over all searches.',
            registry=r)
        self.search_seconds = prom.Histogram(
            'placement_allocation_candidates_search_seconds',
            'Time to find the candidates of one request (index refresh '
            'included).', buckets=_LATENCY_BUCKETS, registry=r)
        self.refresh_seconds = prom.Histogram(
            'placement_provider_index_refresh_seconds',
            'Time to bring the per-process provider index up to date.',
            buckets=_LATENCY_BUCKETS, registry=r)
        self.providers_reloaded = prom.Counter(
            'placement_provider_index_providers_reloaded',
            'Providers reloaded into provider indexes after changes.',
            registry=r)
        self.full_reloads = prom.Counter(
            'placement_provider_index_full_reloads',
            'Complete reloads of a provider index.', registry=r)
        self.invalid_rows = prom.Counter(
            'placement_invalid_rows',
            'Stored rows no write of the service makes, left out of '
            'allocation candidates (each counted once per process), '
            'by kind.', ['kind'], registry=r)
        self.db_connections = prom.Gauge(
            'placement_db_pool_connections',
            'Database connections held by the pools, by state.',
            ['state'], registry=r, multiprocess_mode='livesum')
        #: Its ``in_use`` child, changed at every lend and return.
        self.connections_in_use = self.db_connections.labels('in_use')
        self.build_info = prom.Gauge(
            'placement_build_info',
            'Always 1; labels say what is running.',
            ['version', 'database_dialect'], registry=r,
            multiprocess_mode='max')


def configure():
    """Create the metrics (once per process) and return them."""
    global _metrics
    with _lock:
        if _metrics is None:
            _metrics = _Metrics(metrics_files.choose_directory())
        return _metrics


def active():
    """The metrics if configured, else None."""
    return _metrics


def shared_directory():
    """The directory the processes of this server share, or None."""
    return _metrics.directory if _metrics is not None else None


_caches = {}


def shared_cache(name, key):
    """The ``metrics_files.SharedCache`` called ``name`` of the database
    ``key``, shared with the other processes of this server if any."""
    directory = shared_directory()
    cache = _caches.get((name, key, directory))
    if cache is None:
        cache = _caches.setdefault(
            (name, key, directory),
            metrics_files.SharedCache(directory, name))
    return cache


def collectors():
    """What an exposition reads: every process's metrics files through
    prometheus-client's multiprocess collector when there are several
    processes, else this process's registry."""
    m = _metrics
    if m is None:
        return []
    if m.directory and os.path.isdir(m.directory):
        metrics_files.forget_dead_processes(m.directory)
        return [metrics_files.MergedFiles(m.directory)]
    return [m.registry]


# -- what the rest of the service calls -------------------------------------

def allocation_write(outcome):
    if _metrics is not None:
        _metrics.allocation_writes.labels(outcome).inc()


def retry(reason):
    if _metrics is not None:
        _metrics.retries.labels(reason).inc()


def candidates_found(count, seconds):
    if _metrics is not None:
        _metrics.candidate_requests.inc()
        _metrics.candidates_returned.inc(count)
        _metrics.search_seconds.observe(seconds)


def index_refreshed(seconds, reloaded, full):
    """One provider index refresh: ``reloaded`` providers, ``full`` if
    the whole index was loaded again."""
    if _metrics is not None:
        _metrics.refresh_seconds.observe(seconds)
        if full:
            _metrics.full_reloads.inc()
        if reloaded:
            _metrics.providers_reloaded.inc(reloaded)


def invalid_row(kind):
    """A provider index found a row it cannot use (``capacity.Problem``
    kinds, and ``allocation_without_inventory``)."""
    if _metrics is not None:
        _metrics.invalid_rows.labels(kind).inc()


def watch_pool(engine):
    """Count the connections ``engine``'s pool opens and lends out."""
    from sqlalchemy import event
    if _metrics is None or engine in _watched:
        return
    _watched.add(engine)
    opened = _metrics.db_connections.labels('open')

    # Marks on each connection record, so that connections opened
    # before watching began are counted when first lent, never twice.
    @event.listens_for(engine, 'connect')
    def _connect(_dbapi, record):
        record.info['placement_open'] = True
        opened.inc()

    @event.listens_for(engine, 'checkout')
    def _checkout(_dbapi, record, _proxy):
        if not record.info.get('placement_open'):
            _connect(_dbapi, record)
        connection_lent(record.info)

    @event.listens_for(engine, 'checkin')
    def _checkin(_dbapi, record):
        if record is not None:
            connection_kept(record.info)

    @event.listens_for(engine, 'close')
    def _close(_dbapi, record):
        if record.info.pop('placement_open', False):
            opened.dec()


def connection_lent(info):
    """The pooled connection whose record ``info`` this is serves a
    request now: counted ``in_use`` (if its pool is watched)."""
    if (_metrics is not None and info.get('placement_open')
            and not info.get('placement_lent')):
        info['placement_lent'] = True
        _metrics.connections_in_use.inc()


def connection_kept(info):
    """It serves no request now (back in the pool, or kept by a thread
    for its next read): no longer counted ``in_use``."""
    if info.pop('placement_lent', False) and _metrics is not None:
        _metrics.connections_in_use.dec()


def build_info(version, dialect):
    if _metrics is not None:
        _metrics.build_info.labels(version, dialect).set(1)
