"""The traffic a cloud sends to Placement, on running servers side by side.

Most of a real Placement's load is not allocation candidates: every
nova-compute refreshes its provider tree periodically, and the scheduler,
migrations, deletes and quota checks add their writes and reads. This
benchmark replays that mix, open loop (requests are sent when they are
due, whether or not the server kept up), at increasing load, and reports
the highest load each server sustains within a p99 bound.

Start both servers and run it in one go (gunicorn, ``--workers`` each,
fresh databases; SQLite, or PostgreSQL / MariaDB through
``tools/with-postgresql.sh`` / ``tools/with-mysql.sh``)::

    python3 -m benchmarks.cloud_traffic --side-by-side --nodes 1000
    tools/with-postgresql.sh .venv/bin/python -m benchmarks.cloud_traffic \\
        --side-by-side --nodes 1000 --shape nested

Loading a large cloud through the API takes minutes (a quarter of an
hour for 10,000 nodes), so with ``--side-by-side`` ours is loaded and
upstream starts on its own schema filled with ours' rows (checked by
comparing what both answer); ``--load-each`` loads both through their
APIs. Under ``tools/with-galera.sh`` both reach the three nodes through
HAProxy, each new database connection on the next node.

Or measure servers you started (``--pid`` names a gunicorn master for
the server CPU figures)::

    python3 -m benchmarks.cloud_traffic --url ours=http://127.0.0.1:8300 \\
        --pid ours=12345

``--gunicorn-args`` gives both gunicorns more options, e.g.
``"--worker-class gevent --keep-alive 5"`` (connections kept open, as
nova's keystoneauth sessions keep them); ``--ours-gunicorn-args`` and
``--upstream-gunicorn-args`` give one of them more, to measure each
server as it is best deployed. The report's first lines name them.

``--quick`` is a few seconds' run on 20 nodes (the test suite runs it).

The cloud (``--shape``): ``--nodes`` compute nodes, ``flat`` (one
provider with VCPU, MEMORY_MB, DISK_GB) or ``nested`` (a root with
DISK_GB, two NUMA children with VCPU and MEMORY_MB, an SR-IOV PF with
SRIOV_NET_VF and bandwidth under each NUMA node), each root in one of
``--aggregates`` aggregates, each aggregate with a sharing provider
(MISC_SHARES_VIA_AGGREGATE); ``--instances-per-node`` instances placed
before the run.

The traffic at load factor 1 (``--factors`` multiplies all rates):

refresh
    every node every ``--period`` seconds: ``GET /resource_providers?
    in_tree=<root>``, then inventories, traits and aggregates of each
    provider of the tree, then the sharing providers of its aggregate
    (``member_of=in:<agg>&required=MISC_SHARES_VIA_AGGREGATE``); a share
    ``--inventory-changes`` of refreshes then ``PUT``\\ s the root's
    inventories (reserved disk changes), re-reading them once on a
    generation conflict.
boot
    ``--boots`` per second: candidates for one instance with
    ``limit=1000``, then ``PUT /allocations/<new consumer>`` of the first
    candidate (``--pick random``: a random one), repeated up to 3 times
    on ``placement.concurrent_update`` and moved to the next candidate on
    another 409, as nova's scheduler does.
migrate
    ``--migrations`` per second: ``GET /allocations/<instance>``, then
    ``POST /allocations`` moving it to another node and giving its old
    allocations to a migration consumer, then ``DELETE`` of the migration
    consumer (the resize confirmed).
delete
    ``--deletes`` per second (default: as many as boots)
    ``DELETE /allocations/<instance>``.
usages
    ``--usages`` per second: ``GET /usages?project_id=<project>``.

Before the first counted step each server gets ``--warm-up`` seconds of
the first factor's traffic, reported but not counted. A server starting on a
copied database (upstream, by default) was seen spending 5-6 times its
later PostgreSQL CPU per request in its first 40 seconds, and failing
its first step for a cost a running cloud does not pay.

Each step runs ``--duration`` seconds per server, servers interleaved
step by step (ours, upstream, ours, ...), with up to ``--clients`` tasks
at once, all driven by one thread over non-blocking sockets
(``http_loop``; a connection is kept for the next request where the
server keeps it, a new one opened where it closes them, as gunicorn's
sync workers do). A
step is *sustained* when every request got a non-5xx answer (but an
``--error-budget`` share), every task started less than ``--lag``
seconds after it was due and all were done by the end of the step plus
``--drain`` seconds, and the p99 of all requests was within
``--p99-bound`` ms. After a server's first step that is not, it runs
``--refine`` more steps, each at the geometric middle of its highest
sustained and lowest unsustained factor so far, so that its sustained
rate is measured rather than rounded down to a factor step. Per step and
server it prints requests/s offered and achieved, p50/p99, errors and
the CPU seconds per request of the server (gunicorn master and workers)
and, when found, of the database server (on a database server shared by
both servers, only the one being measured is busy); then per-endpoint
p50/p99 of each server's highest sustained step and the ratio of the
sustained rates. The load generator is one Python thread on the same
machine: its own CPU per request is printed too, and its share of a
core (near 100%, it was the limit). ``--endpoint-cpu`` adds, per
server, its CPU per kind of request
(``benchmarks/toolkit/endpoint_cpu.py``) to the endpoint lines of its
best sustained step and of its steps not sustained: where the server's
time goes.

On a database server (``benchmarks/toolkit/db_server.py``) each step
also reads the statements the server ran for the measured server's
database, and the run reports each database's size after loading,
after each step and after the run (by table, with PostgreSQL's dead
rows), and the workers' RSS/PSS. Sizes compare honestly only after the
same work: ours often sustains many times upstream's rate, so serves
many times its writes, and a database keeps a trace of its writes
(dead rows, freed pages, our change log). So the closing table also
gives each size after the last step that every server ran alike and
sustained (the same requests served), and without the change log.
Then ``--per-kind N`` sends
each kind of request alone, N times, to each server: its median time,
service and database CPU and statements per request (each GET kind
sent a few times uncounted first, see ``WARM_UP_PER_WORKER``). Each
kind's CPU includes the work its requests leave the server and the
database after the last answer (a database purges and vacuums after
writes): the probe waits for both to go quiet before it reads their
CPU, so that the next kind neither pays for it nor meets it. A closing
table puts the servers side by side with ratios.

``--check`` then reads every provider of each server back
(``--check ours``: of ours only; upstream reads 10,000 providers in
about eight minutes) and checks what its state must hold after the load
(``toolkit/cloud_state.py``): usages equal to the allocations and
within capacity, the projects' usages summing to the providers', and
the candidates of the mix's flavour naming exactly the trees with
room, with the capacities and usages the provider endpoints show.
"""

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import json
import math
import os
import random
import re
import shlex
import sys
import tempfile
import time
import urllib.parse

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import cloud_state
from benchmarks.toolkit import db_server
from benchmarks.toolkit import endpoint_cpu
from benchmarks.toolkit import http_loop
from benchmarks.toolkit import labels
from benchmarks.toolkit import proc_cpu
from benchmarks.toolkit import stats
from placement.tests import placement_http

FLAVOUR = {'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 20}
PROJECTS = [cloud_api.ident('cloud-traffic-project-%d' % i) for i in range(3)]
USER = cloud_api.ident('cloud-traffic-user')
SHARES = 'MISC_SHARES_VIA_AGGREGATE'
#: Attempts of one claim on ``placement.concurrent_update``, and
#: candidates tried, as nova's scheduler does.
CLAIM_TRIES = 4
CANDIDATES_TRIED = 3
MIGRATION_CONSUMER = 'MIGRATION'
#: Instances placed per request before the run.
POPULATE_BATCH = 50


class Topology:
    """Names, uuids and allocation shapes of the simulated cloud."""

    def __init__(self, shape, nodes, aggregates):
        self.shape, self.nodes = shape, nodes
        self.prefix = 'cloud-%s-%d' % (shape, nodes)
        self.aggregates = [cloud_api.ident('%s-agg-%d' % (self.prefix, a))
                           for a in range(aggregates)]
        self._roots = {}

    def name(self, node, part=''):
        return '%s-node-%d%s' % (self.prefix, node, part)

    def root(self, node):
        """The root's uuid (kept: every refresh asks for it twice)."""
        uuid = self._roots.get(node)
        if uuid is None:
            uuid = self._roots[node] = cloud_api.ident(self.name(node))
        return uuid

    def aggregate(self, node):
        return self.aggregates[node % len(self.aggregates)]

    def allocation(self, node):
        """The allocations of one instance on ``node``."""
        if self.shape == 'flat':
            return {self.root(node): {'resources': dict(FLAVOUR)}}
        return {
            self.root(node): {'resources': {'DISK_GB': FLAVOUR['DISK_GB']}},
            cloud_api.ident(self.name(node, '-numa0')): {'resources': {
                'VCPU': FLAVOUR['VCPU'],
                'MEMORY_MB': FLAVOUR['MEMORY_MB']}}}

    def jobs(self):
        """Loader jobs (see ``toolkit.cloud_api.load``): one per
        tree, parents first, and one per sharing provider."""
        jobs = []
        for node in range(self.nodes):
            root = self.name(node)
            placed = dict(aggregates=[self.aggregate(node)],
                          traits=['HW_CPU_X86_AVX2'])
            if self.shape == 'flat':
                jobs.append([((root, {
                    'VCPU': {'total': 64, 'allocation_ratio': 4.0},
                    'MEMORY_MB': {'total': 262144},
                    'DISK_GB': {'total': 4000}}), placed)])
                continue
            steps = [((root, {'DISK_GB': {'total': 4000}}), placed)]
            for numa in range(2):
                numa_name = self.name(node, '-numa%d' % numa)
                steps.append(((numa_name, {
                    'VCPU': {'total': 32, 'allocation_ratio': 4.0},
                    'MEMORY_MB': {'total': 131072}}), dict(parent=root)))
                steps.append(((self.name(node, '-pf%d' % numa), {
                    'SRIOV_NET_VF': {'total': 16},
                    'NET_BW_EGR_KILOBIT_PER_SEC': {'total': 10000000}}),
                    dict(parent=numa_name, traits=['HW_NIC_SRIOV'])))
            jobs.append(steps)
        for index, aggregate in enumerate(self.aggregates):
            jobs.append([(('%s-share-%d' % (self.prefix, index), {
                'IPV4_ADDRESS': {'total': 256}}),
                dict(traits=[SHARES], aggregates=[aggregate]))])
        return jobs



def claim_body(allocations, project, generation, consumer_type='INSTANCE'):
    return {'allocations': allocations, 'project_id': project,
            'user_id': USER, 'consumer_generation': generation,
            'consumer_type': consumer_type}


#: The methods of requests that write.
WRITE_METHODS = ('PUT', 'POST', 'DELETE')


class Recorder:
    """Per-endpoint latencies and statuses of one step (one thread)."""

    def __init__(self):
        self.seconds = collections.defaultdict(list)
        self.statuses = collections.defaultdict(collections.Counter)
        self.lags = []
        #: Lags of tasks that had a free slot when due: the load
        #: generator's own lateness (the others waited for the server).
        self.own_lags = []
        self.dropped = 0
        self.samples = []       # (endpoint, status, text) of a few errors

    def add(self, endpoint, status, seconds, text=None):
        self.seconds[endpoint].append(seconds)
        self.statuses[endpoint][status] += 1
        if (status is None or status >= 500) and len(self.samples) < 5:
            self.samples.append((endpoint, status, str(text)[:300]))

    def lag(self, seconds, own=False):
        self.lags.append(seconds)
        if own:
            self.own_lags.append(seconds)

    def drop(self):
        self.dropped += 1

    def requests(self):
        return sum(len(v) for v in self.seconds.values())

    def all_seconds(self):
        return [s for values in self.seconds.values() for s in values]

    def count(self, predicate):
        return sum(n for counter in self.statuses.values()
                   for status, n in counter.items() if predicate(status))

    def errors(self):
        """Requests without an answer or answered 5xx."""
        return self.count(lambda s: s is None or s >= 500)

    def conflicts(self):
        return self.count(lambda s: s == 409)

    def writes(self):
        """Write requests answered 2xx: the work that leaves rows (and
        dead rows, and change log rows) behind."""
        return sum(n for endpoint, counter in self.statuses.items()
                   if endpoint.split()[0] in WRITE_METHODS
                   for status, n in counter.items()
                   if status is not None and 200 <= status < 300)

    def unexpected(self):
        """4xx other than 409 (and 404 of a deleted consumer)."""
        return self.count(lambda s: s is not None and 400 <= s < 500
                          and s not in (404, 409))


_SPACE = re.compile(r'[ \t\n\r]*')


def allocation_requests(data, count=None):
    """The first ``count`` (None: all) ``allocation_requests`` of a
    candidates body, read without decoding the rest: the provider
    summaries are most of a large answer and the load generator, on the
    servers' cores, has no use for them."""
    text = data.decode()
    key = text.find('"allocation_requests"')
    if key < 0:
        raise ValueError('no allocation_requests in %r' % text[:200])
    decoder = json.JSONDecoder()
    at = _SPACE.match(text, text.index(':', key) + 1).end()
    if text[at] != '[':
        raise ValueError('allocation_requests is not a list')
    found = []
    at = _SPACE.match(text, at + 1).end()
    while text[at] != ']' and (count is None or len(found) < count):
        request, at = decoder.raw_decode(text, at)
        found.append(request)
        at = _SPACE.match(text, at).end()
        if text[at] == ',':
            at = _SPACE.match(text, at + 1).end()
    return found


class Cloud:
    """One server's simulated cloud: its instances, and the tasks that
    send requests to it."""

    def __init__(self, label, url, pid, topology, args, database=None):
        self.label, self.url, self.pid = label, url, pid
        self.topology, self.args = topology, args
        self.instances = {}          # consumer uuid -> node
        self.recorder = None
        self.steps = []              # every StepResult
        self.sustained = []          # those within the bound
        self.stopped = None          # why it is not asked any more
        #: The DatabaseServer, and the name of this server's database.
        self.db, self.database = None, database
        self.sizes = {}              # when -> {table: bytes}
        self.writes = 0              # write requests answered 2xx
        self.writes_at = {}          # when -> writes by then
        self.kinds = {}              # --per-kind: kind -> KindResult

    # -- requests ---------------------------------------------------------

    @staticmethod
    def call(endpoint, method, path, body=None, decode=False):
        """A request for a task to yield; it gets back (status, body):
        the body decoded when ``decode``, else bytes, since most bodies
        are not read and JSON decoding is a good part of the load
        generator's CPU."""
        return http_loop.Request(endpoint, method, path, body, decode)

    def task(self, name, node, rng):
        """The flow (see ``http_loop``) of one scheduled task."""
        if name == 'refresh':
            return self.refresh(node, rng)
        return getattr(self, name)(rng)

    # -- instances --------------------------------------------------------

    def _take_instance(self, rng):
        if not self.instances:
            return None, None
        consumer = rng.choice(list(self.instances))
        return consumer, self.instances.pop(consumer)

    def _put_instance(self, consumer, node):
        self.instances[consumer] = node

    def populate(self, rng):
        """Place ``--instances-per-node`` instances on every node."""
        client = cloud_api.Client(self.url, self.args.token, self.args.timeout)
        topology = self.topology
        placed = [(cloud_api.ident('%s-%s-instance-%d-%d' % (
            topology.prefix, self.label, node, i)), node, rng.choice(PROJECTS))
            for node in range(topology.nodes)
            for i in range(self.args.instances_per_node)]
        # Many consumers per POST /allocations: one request per instance
        # was a good part of loading a large cloud.
        batches = [placed[i:i + POPULATE_BATCH]
                   for i in range(0, len(placed), POPULATE_BATCH)]
        with concurrent.futures.ThreadPoolExecutor(self.args.threads) as pool:
            list(pool.map(lambda batch: client.write(
                'POST', '/allocations', {
                    consumer: claim_body(topology.allocation(node), project,
                                         None)
                    for consumer, node, project in batch}), batches))
        self.instances.update((consumer, node)
                              for consumer, node, _project in placed)

    # -- tasks ------------------------------------------------------------

    def refresh(self, node, rng):
        topology = self.topology
        status, body = yield self.call(
            'GET in_tree', 'GET',
            '/resource_providers?in_tree=' + topology.root(node),
            decode=True)
        if status != 200:
            return
        root = topology.root(node)
        root_inventories = None
        for provider in body['resource_providers']:
            path = '/resource_providers/%s' % provider['uuid']
            status, inventories = yield self.call(
                'GET inventories', 'GET', path + '/inventories')
            if provider['uuid'] == root and status == 200:
                root_inventories = inventories
            yield self.call('GET traits', 'GET', path + '/traits')
            yield self.call('GET aggregates', 'GET', path + '/aggregates')
        yield self.call('GET sharing', 'GET',
                  '/resource_providers?member_of=in:%s&required=%s' % (
                      topology.aggregate(node), SHARES))
        if root_inventories and rng.random() < self.args.inventory_changes:
            yield from self._change_inventory(
                root, placement_http.decode(root_inventories))

    def _change_inventory(self, root, current):
        path = '/resource_providers/%s/inventories' % root
        for attempt in range(2):
            inventories = current['inventories']
            disk = dict(inventories['DISK_GB'])
            disk['reserved'] = 1 - disk.get('reserved', 0)
            body = {'resource_provider_generation':
                    current['resource_provider_generation'],
                    'inventories': dict(inventories, DISK_GB=disk)}
            status, _ = yield self.call('PUT inventories', 'PUT', path, body)
            if status != 409 or attempt:
                return
            status, current = yield self.call('GET inventories', 'GET', path,
                                        decode=True)
            if status != 200:
                return

    def boot(self, rng):
        query = urllib.parse.urlencode({
            'resources': ','.join('%s:%d' % item
                                  for item in sorted(FLAVOUR.items())),
            'limit': 1000})
        status, body = yield self.call('GET candidates', 'GET',
                                 '/allocation_candidates?' + query)
        if status != 200:
            return
        if self.args.pick == 'random':
            requests = allocation_requests(body)
            rng.shuffle(requests)
        else:
            requests = allocation_requests(body, CANDIDATES_TRIED)
        if not requests:
            return
        consumer = cloud_api.ident('%s-%s-boot-%f-%f' % (
            self.topology.prefix, self.label, time.time(), rng.random()))
        project = rng.choice(PROJECTS)
        for request in requests[:CANDIDATES_TRIED]:
            for _ in range(CLAIM_TRIES):
                status, answer = yield self.call(
                    'PUT allocations', 'PUT', '/allocations/' + consumer,
                    claim_body(request['allocations'], project, None))
                if status == 204:
                    node = self._node_of(request['allocations'])
                    if node is not None:
                        self._put_instance(consumer, node)
                    return
                code = placement_http.Response(
                    status, placement_http.decode(answer)).error_code
                if status != 409 or code != 'placement.concurrent_update':
                    break
            if status != 409:
                return

    def _node_of(self, allocations):
        """The node index of a candidate's root, from its uuid."""
        roots = self._roots()
        for rp in allocations:
            if rp in roots:
                return roots[rp]
        return None

    def _roots(self):
        roots = getattr(self, '_root_index', None)
        if roots is None:
            roots = self._root_index = {
                self.topology.root(node): node
                for node in range(self.topology.nodes)}
        return roots

    def migrate(self, rng):
        consumer, node = self._take_instance(rng)
        if consumer is None:
            return
        status, current = yield self.call('GET allocations', 'GET',
                                    '/allocations/' + consumer, decode=True)
        if status != 200 or not current.get('allocations'):
            return
        target = rng.randrange(self.topology.nodes)
        if target == node:
            target = (target + 1) % self.topology.nodes
        migration = cloud_api.ident('%s-migration-%f-%f' % (
            consumer, time.time(), rng.random()))
        old = {rp: {'resources': a['resources']}
               for rp, a in current['allocations'].items()}
        body = {
            migration: claim_body(old, current['project_id'], None,
                                  MIGRATION_CONSUMER),
            consumer: claim_body(self.topology.allocation(target),
                                 current['project_id'],
                                 current['consumer_generation'])}
        status, _ = yield self.call('POST allocations', 'POST', '/allocations',
                              body)
        if status != 204:
            self._put_instance(consumer, node)
            return
        self._put_instance(consumer, target)
        yield self.call('DELETE allocations', 'DELETE',
                  '/allocations/' + migration)

    def delete(self, rng):
        consumer, _node = self._take_instance(rng)
        if consumer is not None:
            yield self.call('DELETE allocations', 'DELETE',
                      '/allocations/' + consumer)

    def usages(self, rng):
        yield self.call('GET usages', 'GET',
                  '/usages?project_id=' + rng.choice(PROJECTS))


def schedule(topology, args, factor, rng):
    """[(seconds after the start, task name, node)] of one step."""
    events = []
    period = args.period / factor
    phases = list(range(topology.nodes))
    rng.shuffle(phases)
    for node, phase in enumerate(phases):
        at = period * phase / topology.nodes
        while at < args.duration:
            events.append((at, 'refresh', node))
            at += period
    for name, rate in (('boot', args.boots), ('migrate', args.migrations),
                       ('delete', args.deletes), ('usages', args.usages)):
        rate *= factor
        if rate <= 0:
            continue
        count = int(args.duration * rate)
        offset = rng.random() / rate
        events.extend((offset + i / rate, name, None) for i in range(count))
    events.sort(key=lambda event: event[0])
    return events


@dataclasses.dataclass
class StepResult:
    label: str
    factor: float
    scheduled: int
    elapsed: float
    recorder: Recorder
    server_cpu: float
    db_cpu: float
    client_cpu: float
    bound_ms: float
    lag_limit: float
    #: Share of requests that may go unanswered or get a 5xx.
    error_budget: float = 0.0
    #: With ``--endpoint-cpu``: the server's {kind: (requests, seconds)}.
    endpoints: dict = None
    #: Statements the database ran, by kind (``db_server.KINDS``).
    statements: dict = None
    #: [(RSS, PSS) KiB] of each gunicorn worker at the end of the step.
    memory: list = None

    @property
    def requests(self):
        return self.recorder.requests()

    @property
    def rate(self):
        return self.requests / self.elapsed if self.elapsed else 0.0

    @property
    def client_share(self):
        """The load generator's CPU time over the step's wall time: near
        1.0 it, not the server, was the limit."""
        return self.client_cpu / self.elapsed if self.elapsed else 0.0

    def per_request(self, seconds):
        if seconds is None or not self.requests:
            return None
        return seconds * 1000 / self.requests

    def p(self, share):
        value = stats.percentile(self.recorder.all_seconds(), share)
        return value * 1000 if value is not None else None

    def why_not(self):
        """Why the step is not sustained, or None."""
        rec = self.recorder
        if rec.dropped:
            return '%d tasks not done in time' % rec.dropped
        if rec.errors() > self.error_budget * rec.requests():
            return '%d 5xx or unanswered' % rec.errors()
        lag = stats.percentile(rec.lags, 1.0) or 0.0
        if lag > self.lag_limit:
            own = stats.percentile(rec.own_lags, 1.0) or 0.0
            return 'tasks started up to %.1f s late (%.1f s %s)' % (
                lag, own, 'by the load generator' if own > self.lag_limit
                else 'at most by the load generator, the rest waiting '
                'for answers')
        p99 = self.p(0.99)
        if p99 is None:
            return 'no requests'
        if p99 > self.bound_ms:
            return 'p99 %.0f ms over %.0f ms' % (p99, self.bound_ms)
        return None


class Plan:
    """The load factors one server is asked for.

    The given factors in order up to the first step it does not sustain;
    then ``refine`` more steps, each at the geometric middle of the
    highest sustained and the lowest unsustained factor so far, so that
    its sustained rate is measured rather than rounded down to the
    previous factor (when no step was sustained there is nothing to
    refine).
    """

    def __init__(self, factors, refine):
        self._todo = list(factors)
        self._refine = refine
        self.low = self.high = None     # highest sustained, lowest not

    def next(self):
        """The next factor to run, or None when done."""
        if self.high is None:
            return self._todo.pop(0) if self._todo else None
        if self._refine <= 0 or self.low is None:
            return None
        return float('%.3g' % math.sqrt(self.low * self.high))

    def record(self, factor, sustained):
        if self.high is not None:
            self._refine -= 1
        if sustained:
            self.low = factor if self.low is None else max(self.low, factor)
        else:
            self.high = (factor if self.high is None
                         else min(self.high, factor))


def run_step(cloud, factor, args, rng, duration=None):
    """Send one step's traffic to ``cloud``'s server; its StepResult.

    One thread (``http_loop``) starts each task when it is due, or as
    soon as one of ``--clients`` task slots frees up (tasks wait in
    order, and their lag is counted from when they were due); at the end
    of the step plus ``--drain`` the tasks still waiting are dropped and
    those started are finished. The step lasts ``duration`` seconds
    (default ``--duration``).
    """
    if duration is not None:
        args = argparse.Namespace(**dict(vars(args), duration=duration))
    cloud.recorder = recorder = Recorder()
    events = schedule(cloud.topology, args, factor, rng)
    task_rng = random.Random(rng.random())
    loop = http_loop.Loop(cloud.url, args.token, args.timeout, recorder.add)
    waiting = collections.deque()
    server_before = proc_cpu.tree_seconds(cloud.pid) if cloud.pid else None
    db_before = cloud.db.cpu_seconds() if cloud.db else None
    statements_before = _statements(cloud)
    # Set by --endpoint-cpu for the servers it starts.
    kinds = cloud.pid and os.environ.get(endpoint_cpu.ENV)
    kinds_before = endpoint_cpu.snapshot(kinds, cloud.pid) if kinds else None
    client_before = time.process_time()
    start = time.monotonic()
    deadline = start + args.duration + args.drain
    due = [start + at for at, _name, _node in events]
    index, count = 0, len(events)
    try:
        while True:
            now = time.monotonic()
            # Tasks waiting from before this turn waited for a slot, that
            # is for the server's answers; the others, for this loop.
            queued = len(waiting)
            while index < count and due[index] <= now:
                waiting.append(index)
                index += 1
            while waiting and loop.flows < args.clients:
                task = waiting.popleft()
                recorder.lag(now - due[task], own=queued <= 0)
                queued -= 1
                _at, name, node = events[task]
                loop.start(cloud.task(name, node, task_rng))
            if now >= deadline:
                break
            if index == count and not waiting and not loop.flows:
                break
            wait = deadline - now
            if index < count and not waiting:
                wait = min(wait, due[index] - now)
            loop.poll(wait)
        # Too late: what waits is dropped, what runs is finished.
        recorder.dropped += len(waiting) + count - index
        give_up = time.monotonic() + args.timeout
        while loop.flows and time.monotonic() < give_up:
            loop.poll(give_up - time.monotonic())
    finally:
        loop.close()
    # Before reading the servers' CPU: a walk through /proc is no work
    # of the load generator's.
    client_cpu = time.process_time() - client_before
    elapsed = max(args.duration, time.monotonic() - start)

    server_cpu = _used(proc_cpu.tree_seconds(cloud.pid) if cloud.pid
                       else None, server_before)
    db_cpu = _used(cloud.db.cpu_seconds() if cloud.db else None, db_before)
    statements = db_server.difference(_statements(cloud), statements_before)
    endpoints = None
    if kinds:
        # The workers write their totals every WRITE_EVERY seconds.
        time.sleep(endpoint_cpu.WRITE_EVERY * 2)
        endpoints = endpoint_cpu.difference(
            endpoint_cpu.snapshot(kinds, cloud.pid), kinds_before)
    return StepResult(
        cloud.label, factor, len(events), elapsed, recorder,
        server_cpu, db_cpu, client_cpu, args.p99_bound, args.lag,
        args.error_budget, endpoints, statements, worker_memory(cloud.pid))


def _statements(cloud):
    if cloud.db is None or cloud.database is None:
        return None
    return cloud.db.statements(cloud.database)


def worker_memory(pid):
    """[(RSS, PSS) KiB] of the gunicorn master ``pid``'s workers."""
    if not pid:
        return None
    return [proc_cpu.memory_kib(worker)
            for worker in proc_cpu.children(pid)]


def ms(value):
    return '%7.1f' % value if value is not None else '     - '


def per_request(seconds, requests):
    if seconds is None or not requests:
        return '-'
    return '%.2f ms' % (seconds * 1000 / requests)


def step_line(result, width):
    why = result.why_not()
    rec = result.recorder
    return ('x%-5g %-*s tasks %5.1f/s  achieved %7.1f req/s  '
            'p50 %s p99 %s ms  5xx/none %d  409 %d  other 4xx %d  '
            'CPU/req server %s db %s client %s (%.0f%% of a core)  '
            'statements/req %s  %s' % (
                result.factor, width, result.label,
                result.scheduled / result.elapsed, result.rate,
                ms(result.p(0.5)), ms(result.p(0.99)), rec.errors(),
                rec.conflicts(), rec.unexpected(),
                per_request(result.server_cpu, result.requests),
                per_request(result.db_cpu, result.requests),
                per_request(result.client_cpu, result.requests),
                result.client_share * 100,
                statements_per_request(result),
                'sustained' if not why else 'NOT sustained: ' + why))


def statements_per_request(result):
    per = db_server.per_request(result.statements, result.requests)
    return '%.1f' % per[db_server.TOTAL] if per else '-'


def endpoint_lines(result):
    """Latencies and statuses per endpoint, then (``--endpoint-cpu``) the
    server's CPU per kind of request."""
    lines = []
    rec = result.recorder
    for endpoint in sorted(rec.seconds):
        values = rec.seconds[endpoint]
        statuses = ' '.join('%s:%d' % (s, n) for s, n in
                            sorted(rec.statuses[endpoint].items(),
                                   key=lambda item: str(item[0])))
        lines.append('    %-20s n %6d  p50 %s p99 %s ms  %s' % (
            endpoint, len(values), ms(stats.percentile(values, 0.5) * 1000),
            ms(stats.percentile(values, 0.99) * 1000), statuses))
    if result.endpoints:
        lines.append('  server CPU by kind of request (pre_request to '
                     'post_request):')
        lines.extend(endpoint_cpu.lines(result.endpoints))
    return lines


def summary(clouds):
    """The closing lines: each server's best sustained step and how the
    first compares with the others."""
    lines = []
    best = {}
    for cloud in clouds:
        if cloud.sustained:
            top = max(cloud.sustained, key=lambda r: r.rate)
            best[cloud.label] = top
            lines.append('sustained %-10s %.1f req/s at x%g (p99 %.1f ms '
                         '<= %.0f ms); endpoints:' % (
                             cloud.label, top.rate, top.factor,
                             top.p(0.99), top.bound_ms))
            lines.extend(endpoint_lines(top))
        else:
            lines.append('sustained %-10s none: %s' % (
                cloud.label, cloud.stopped))
    first = clouds[0].label
    for cloud in clouds[1:]:
        if first in best and cloud.label in best:
            lines.append('%s sustains %.2fx the requests/s of %s' % (
                first, best[first].rate / best[cloud.label].rate,
                cloud.label))
        lines.extend(same_load_lines(clouds[0], cloud))
    return lines


def same_load_lines(first, other):
    """How ``first`` compares with ``other`` at each factor both ran:
    p99 and server CPU per request, which a machine busy with other work
    distorts less than the sustained rate."""
    lines = []
    theirs = {r.factor: r for r in other.steps}
    for mine in first.steps:
        their = theirs.get(mine.factor)
        if their is None or not mine.requests or not their.requests:
            continue
        parts = ['p99 %.1f vs %.1f ms' % (mine.p(0.99), their.p(0.99))]
        if mine.server_cpu and their.server_cpu:
            parts.append('server CPU/request %.2fx less' % (
                (their.server_cpu / their.requests)
                / (mine.server_cpu / mine.requests)))
        lines.append('x%g: %s vs %s: %s' % (
            mine.factor, first.label, other.label, ', '.join(parts)))
    return lines


#: Kinds of request the per-kind probe sends, in this order (each GET
#: allocations reads an instance the POST then moves, whose migration
#: consumer the DELETE removes).
PROBED = ('GET in_tree', 'GET inventories', 'GET traits', 'GET aggregates',
          'GET sharing', 'PUT inventories', 'GET candidates',
          'PUT allocations', 'GET allocations', 'POST allocations',
          'DELETE allocations', 'GET usages')


@dataclasses.dataclass
class KindResult:
    """One kind of request sent alone, one at a time, ``count`` times."""

    count: int
    errors: int
    seconds: list
    server_cpu: float
    db_cpu: float
    statements: dict

    def median_ms(self):
        return stats.percentile(self.seconds, 0.5) * 1000

    def per_request_ms(self, seconds):
        return seconds * 1000 / self.count if seconds is not None else None


def probe(cloud, count, rng):
    """{kind: KindResult} of ``PROBED``, each sent ``count`` times on a
    new connection each, with nothing else running: where the server's
    and the database's time per request goes (CPU to the nanosecond,
    from ``schedstat``, of live processes: pooled connections stay)."""
    client = cloud_api.Client(cloud.url, cloud.args.token, cloud.args.timeout)
    topology = cloud.topology
    nodes = [rng.randrange(topology.nodes) for _ in range(count)]
    instances = rng.sample(sorted(cloud.instances),
                           min(count, len(cloud.instances)))
    read, migrations = {}, []
    root = topology.root(nodes[0])
    inventories = [client.call('GET', '/resource_providers/%s/inventories'
                               % root)[1]]

    def requests(kind):
        """(method, path, body, what to do with the answer) of ``kind``."""
        rp_path = '/resource_providers/%s/'
        if kind in ('GET inventories', 'GET traits', 'GET aggregates'):
            for node in nodes:
                yield ('GET', rp_path % topology.root(node)
                       + kind.split()[1], None, None)
        elif kind == 'GET in_tree':
            for node in nodes:
                yield ('GET', '/resource_providers?in_tree='
                       + topology.root(node), None, None)
        elif kind == 'GET sharing':
            for node in nodes:
                yield ('GET', '/resource_providers?member_of=in:%s&'
                       'required=%s' % (topology.aggregate(node), SHARES),
                       None, None)
        elif kind == 'PUT inventories':
            for _ in nodes:
                current = inventories[-1]
                disk = dict(current['inventories']['DISK_GB'])
                disk['reserved'] = 1 - disk.get('reserved', 0)
                yield ('PUT', rp_path % root + 'inventories', {
                    'resource_provider_generation':
                        current['resource_provider_generation'],
                    'inventories': dict(current['inventories'],
                                        DISK_GB=disk)},
                    inventories.append)
        elif kind == 'GET candidates':
            query = urllib.parse.urlencode({
                'resources': ','.join('%s:%d' % item
                                      for item in sorted(FLAVOUR.items())),
                'limit': 1000})
            for _ in nodes:
                yield 'GET', '/allocation_candidates?' + query, None, None
        elif kind == 'PUT allocations':
            for node in nodes:
                consumer = cloud_api.ident('%s-probe-%f' % (
                    cloud.label, rng.random()))
                yield ('PUT', '/allocations/' + consumer, claim_body(
                    topology.allocation(node), rng.choice(PROJECTS), None),
                    None)
        elif kind == 'GET allocations':
            for consumer in instances:
                yield ('GET', '/allocations/' + consumer, None,
                       lambda body, c=consumer: read.__setitem__(c, body))
        elif kind == 'POST allocations':
            for consumer, node in zip(instances, nodes):
                current = read[consumer]
                migration = cloud_api.ident('%s-probe-migration-%f' % (
                    consumer, rng.random()))
                migrations.append(migration)
                yield ('POST', '/allocations', {
                    migration: claim_body(
                        {rp: {'resources': a['resources']}
                         for rp, a in current['allocations'].items()},
                        current['project_id'], None, MIGRATION_CONSUMER),
                    consumer: claim_body(
                        topology.allocation(node), current['project_id'],
                        current['consumer_generation'])}, None)
                cloud.instances[consumer] = node
        elif kind == 'DELETE allocations':
            for migration in migrations:
                yield 'DELETE', '/allocations/' + migration, None, None
        elif kind == 'GET usages':
            for _ in nodes:
                yield ('GET', '/usages?project_id=' + rng.choice(PROJECTS),
                       None, None)

    def cpu():
        """(the server's, the database's) CPU seconds so far."""
        return (proc_cpu.tree_exact_seconds(cloud.pid),
                cloud.db.exact_cpu_seconds() if cloud.db else None)

    def busy():
        return sum(seconds or 0 for seconds in cpu())

    def send(method, path, body):
        # A new connection each, as gunicorn's sync worker wants.
        connection = placement_http.Client(
            cloud.url, cloud.args.token, cloud.args.timeout)
        try:
            start = time.perf_counter()
            answer = connection.fetch(method, path, body)
            return answer, time.perf_counter() - start
        finally:
            connection.close()

    found = {}
    settle(busy)  # what the traffic before left running
    for kind in PROBED:
        if kind.startswith('GET '):
            # Uncounted first: a statement prepared on PostgreSQL is
            # planned on its first executions on each connection.
            warm = list(requests(kind))[:WARM_UP_PER_WORKER
                                         * cloud.args.workers]
            for method, path, body, _keep in warm:
                send(method, path, body)
        seconds, errors = [], 0
        server_before, db_before = cpu()
        statements_before = _statements(cloud)
        for method, path, body, keep in requests(kind):
            # The clock stops before the body is decoded.
            answer, took = send(method, path, body)
            seconds.append(took)
            if answer.status is None or answer.status >= 300:
                errors += 1
            elif keep is not None:
                keep(placement_http.decode(answer.body))
        settle(busy)
        server_after, db_after = cpu()
        found[kind] = KindResult(
            len(seconds), errors, seconds,
            _used(server_after, server_before), _used(db_after, db_before),
            db_server.difference(_statements(cloud), statements_before))
    return found


#: Requests of each GET kind the probe sends uncounted per worker first:
#: PostgreSQL plans a prepared statement afresh for its first five
#: executions on a connection and once more to compare (six plans of
#: each statement per worker's connection), which a long-lived
#: connection pays once and a probe of 30 requests over two workers
#: counted twelve times (``pg_stat_statements``: 0.9-1.3 ms a plan of the
#: allocation GET's statement, 0.08 ms an execution). A few more than
#: six, as the workers share the requests unevenly.
WARM_UP_PER_WORKER = 8

#: ``settle``: the window CPU is read over, the CPU under which a window
#: is quiet, and the longest wait. Idle, the servers of this machine's
#: runs spend well under 0.1 ms per window (PostgreSQL's background
#: writers waking up); after 30 allocation writes MariaDB spent 1-4 ms
#: more over the next three seconds.
SETTLE_WINDOW = 0.1
SETTLE_QUIET = 0.0003
SETTLE_LIMIT = 5.0


def settle(busy, sleep=time.sleep, clock=time.monotonic):
    """Wait until ``busy()`` (CPU seconds so far of the processes
    watched) grows by less than ``SETTLE_QUIET`` in each of two
    ``SETTLE_WINDOW`` windows in a row, or ``SETTLE_LIMIT`` seconds
    passed; the seconds waited."""
    start = clock()
    quiet = 0
    last = busy()
    while quiet < 2 and clock() - start < SETTLE_LIMIT:
        sleep(SETTLE_WINDOW)
        now = busy()
        quiet = quiet + 1 if now - last < SETTLE_QUIET else 0
        last = now
    return clock() - start


def _used(after, before):
    return after - before if None not in (after, before) else None


def report(clouds, args):
    """The side-by-side table: each figure of ours, of the others and
    how many times better ours is (> 1: ours better)."""
    lines = []
    names = [c.label for c in clouds]
    both = set.intersection(*({r.factor for r in c.sustained}
                              for c in clouds))
    ran = set.intersection(*({r.factor for r in c.steps} for c in clouds))
    # Per-request costs compare at one offered load: the highest all
    # sustained, else the lowest all ran.
    common = max(both) if both else min(ran) if ran else None

    def at(cloud, factor):
        return max((r for r in cloud.steps if r.factor == factor),
                   key=lambda r: r.rate, default=None)

    def best(cloud):
        return max(cloud.sustained, key=lambda r: r.rate, default=None)

    def row(what, values, better='lower', fmt='%.2f'):
        if all(value is None for value in values):
            return
        text = ['%-44s' % what]
        for value in values:
            text.append('%14s' % (fmt % value if value is not None else '-'))
        first = values[0]
        for value in values[1:] if better else ():
            if first and value:
                ratio = value / first if better == 'lower' else first / value
                text.append('%12.2fx' % ratio)
            else:
                text.append('%13s' % '-')
        lines.append(''.join(text))

    lines.append('')
    lines.append('side by side (%s %d nodes; ratio: times better than %s)'
                 % (args.shape, args.nodes, names[0]))
    lines.append('%-44s' % '' + ''.join('%14s' % n for n in names)
                 + ''.join('%13s' % ('vs ' + n) for n in names[1:]))
    tops = [best(c) for c in clouds]
    row('sustained requests/s', [t and t.rate for t in tops], 'higher',
        '%.1f')
    row('  its p99 ms', [t and t.p(0.99) for t in tops], fmt='%.1f')
    row('  its client CPU share (1.0: client-bound)',
        [t and t.client_share for t in tops], None)
    if common is not None:
        steps = [at(c, common) for c in clouds]
        lines.append('at x%g, %s (%.0f req/s):' % (
            common, 'the highest load all sustained' if both else
            'the lowest load, NOT sustained by all', steps[0].rate))
        row('  p99 ms', [r.p(0.99) for r in steps], fmt='%.1f')
        row('  service CPU ms/request',
            [r.per_request(r.server_cpu) for r in steps])
        row('  database CPU ms/request',
            [r.per_request(r.db_cpu) for r in steps])
        row('  statements/request (sent by the service)',
            [_total(db_server.per_request(r.statements, r.requests))
             for r in steps], fmt='%.1f')
        for kind in db_server.KINDS:
            values = [(db_server.per_request(r.statements, r.requests)
                       or {}).get(kind) for r in steps]
            if any(values):
                row('    %s' % kind, values, fmt='%.2f')
        row('  client CPU share', [r.client_share for r in steps], None)
    for what, values, counted in size_rows(clouds):
        if counted:
            row(what, values, None, '%d')
        else:
            row(what, values)
    memory = [(best(c) or (c.steps[-1] if c.steps else None))
              for c in clouds]
    memory = [m.memory if m else None for m in memory]
    row('worker RSS MB, sum', [_mb(m, 0, sum) for m in memory], fmt='%.1f')
    row('worker RSS MB, largest', [_mb(m, 0, max) for m in memory],
        fmt='%.1f')
    row('worker PSS MB, sum', [_mb(m, 1, sum) for m in memory], fmt='%.1f')
    if all(c.kinds for c in clouds):
        lines.append('each kind alone, %d times (median ms, then per '
                     'request: service CPU ms, database CPU ms, '
                     'statements):' % args.per_kind)
        for kind in PROBED:
            results = [c.kinds[kind] for c in clouds]
            if any(r.errors for r in results):
                lines.append('  %s: errors %s' % (kind, ', '.join(
                    '%s %d' % (n, r.errors)
                    for n, r in zip(names, results))))
            row('  %s median ms' % kind,
                [r.median_ms() for r in results])
            row('    service CPU ms',
                [r.per_request_ms(r.server_cpu) for r in results])
            row('    database CPU ms',
                [r.per_request_ms(r.db_cpu) for r in results])
            per = [db_server.per_request(r.statements, r.count)
                   for r in results]
            row('    statements', [_total(p) for p in per], fmt='%.1f')
            if any(per):
                lines.append('      ' + '; '.join(
                    '%s %s' % (n, db_server.statements_text(p))
                    for n, p in zip(names, per)))
    return lines


def _total(per):
    return per[db_server.TOTAL] if per else None


def _mb(memory, index, how):
    values = [m[index] for m in memory or () if m[index] is not None]
    return how(values) / 1024 if values else None


def parse_pairs(values, kind):
    pairs = {}
    for value in values or ():
        label, sep, number = value.partition('=')
        if not sep or not number.isdigit():
            raise ValueError('%s %r: expected LABEL=PID' % (kind, value))
        pairs[label] = int(number)
    return pairs


def parser():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', action='append', metavar='[LABEL=]URL')
    parser.add_argument('--pid', action='append', metavar='LABEL=PID',
                        help='gunicorn master of a --url server')
    parser.add_argument('--side-by-side', action='store_true',
                        help='start ours and upstream 16.0.0 (gunicorn) '
                        'on fresh databases and measure both')
    parser.add_argument('--ours-only', action='store_true',
                        help='with --side-by-side: only start ours')
    parser.add_argument('--load-each', action='store_true',
                        help='with --side-by-side: load each server through '
                        'its API (default: upstream gets a copy of ours\' '
                        'database, on SQLite and PostgreSQL)')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--gunicorn-args', type=shlex.split, default=[],
                        metavar='"ARGS"',
                        help='with --side-by-side: more gunicorn options '
                        'for both servers, e.g. "--worker-class gthread '
                        '--threads 4 --keep-alive 5" (connections kept '
                        'open, as nova\'s keystoneauth session does)')
    for label in ('ours', 'upstream'):
        parser.add_argument('--%s-gunicorn-args' % label, type=shlex.split,
                            default=[], metavar='"ARGS"',
                            help='with --side-by-side: gunicorn options for '
                            '%s alone, after --gunicorn-args' % label)
    parser.add_argument('--endpoint-cpu', action='store_true',
                        help='with --side-by-side: also report each '
                        'server\'s CPU per kind of request (gunicorn '
                        'hooks of benchmarks/toolkit/endpoint_cpu.py)')
    parser.add_argument('--token', default='admin')
    parser.add_argument('--shape', choices=['flat', 'nested'],
                        default='flat')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--aggregates', type=int, default=10)
    parser.add_argument('--instances-per-node', type=int, default=1)
    parser.add_argument('--period', type=float, default=60.0,
                        help='seconds between refreshes of one node at x1')
    parser.add_argument('--inventory-changes', type=float, default=0.05,
                        help='share of refreshes that PUT inventories')
    parser.add_argument('--boots', type=float, default=1.0,
                        help='scheduler claims per second at x1')
    parser.add_argument('--migrations', type=float, default=0.25)
    parser.add_argument('--deletes', type=float,
                        help='deletes per second at x1 (default --boots)')
    parser.add_argument('--usages', type=float, default=2.0)
    parser.add_argument('--pick', choices=['first', 'random'],
                        default='first')
    parser.add_argument('--factors', default='0.5,1,2,4,8,16,32,64',
                        help='load factors, in increasing order')
    parser.add_argument('--refine', type=int, default=2,
                        help='steps between the highest sustained and the '
                        'first unsustained factor, per server')
    parser.add_argument('--duration', type=float, default=20.0,
                        help='seconds of traffic per step and server')
    parser.add_argument('--warm-up', type=float, default=20.0,
                        metavar='SECONDS',
                        help='uncounted traffic at the first factor given '
                        'to each server before its first step (0: none)')
    parser.add_argument('--drain', type=float, default=10.0)
    parser.add_argument('--lag', type=float, default=1.0,
                        help='latest start of a task after it was due (s)')
    parser.add_argument('--p99-bound', type=float, default=250.0,
                        help='ms')
    parser.add_argument('--error-budget', type=float, default=0.0,
                        help='share of requests a sustained step may see '
                        'unanswered or answered 5xx (upstream on SQLite '
                        'answers some writes 500 "database is locked")')
    parser.add_argument('--clients', type=int, default=32,
                        help='tasks in flight at once (each its own '
                        'connection), all from one thread')
    parser.add_argument('--threads', type=int, default=8,
                        help='parallel loaders')
    parser.add_argument('--timeout', type=float, default=60.0)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--per-kind', type=int, default=100, metavar='N',
                        help='after the steps, send each kind of request '
                        'N times alone, one at a time, to each server: '
                        'its latency, server and database CPU and '
                        'statements per request of that kind (0: none)')
    parser.add_argument('--check', nargs='*', metavar='LABEL',
                        help='at the end, read every provider of each '
                        'server (or of those named, e.g. ours) back and '
                        'check that usages, allocations, capacities, '
                        'project usages and the candidates agree '
                        '(benchmarks/toolkit/cloud_state.py; three GETs '
                        'per provider)')
    parser.add_argument('--quick', action='store_true',
                        help='20 nodes, steps x1 and x4 of 2 s, period 4 s, '
                        '2 boots, 1 migration, 2 usages per second, an '
                        'inventory change in every refresh')
    return parser


def main(argv=None):
    options = parser()
    args = options.parse_args(argv)
    if args.quick:
        # Every kind of task at least once per step.
        args.nodes, args.duration, args.drain = 20, 2.0, 5.0
        args.factors, args.period, args.clients = '1,4', 4.0, 8
        args.boots, args.migrations, args.usages = 2.0, 1.0, 2.0
        args.inventory_changes, args.refine, args.warm_up = 1.0, 0, 1.0
        args.per_kind = min(args.per_kind, 3)
    if args.deletes is None:
        args.deletes = args.boots
    try:
        args.factors = [float(f) for f in args.factors.split(',')]
        pids = parse_pairs(args.pid, '--pid')
        urls = labels.label_urls(args.url or []) if args.url else []
    except ValueError as exc:
        options.error(str(exc))
    if bool(urls) == bool(args.side_by_side):
        options.error('give either --url or --side-by-side')
    if args.endpoint_cpu and not args.side_by_side:
        options.error('--endpoint-cpu needs --side-by-side')
    if args.side_by_side:
        return side_by_side(args)
    # Servers started elsewhere: the database server of tools/with-*.sh,
    # if any, is read for its CPU per request.
    db = db_server.from_environment()
    try:
        return measure(
            [(label, url, pids.get(label)) for label, url in urls], args,
            db=db)
    finally:
        if db is not None:
            db.close()


def side_by_side(args):
    """Start the servers, load ours (upstream gets a copy of its
    database unless ``--load-each``) and measure."""
    from benchmarks.toolkit import servers
    topology = Topology(args.shape, args.nodes, args.aggregates)
    instances = {}

    def prepare(label, url):
        cloud = Cloud(label, url, None, topology, args)
        load_cloud(cloud)
        instances[label] = cloud.instances

    if args.load_each:
        copy = False
    else:
        copy = servers.can_copy()
    gunicorn_args = list(args.gunicorn_args)
    with contextlib.ExitStack() as stack:
        db = db_server.from_environment()
        if db is not None:
            stack.callback(db.close)
            print('database server: %s' % db.describe(), flush=True)
        if db is not None and len(db.urls) > 1:
            # Galera: both services reach the nodes through HAProxy,
            # each new connection on the next node.
            balancer = stack.enter_context(db_server.RoundRobin(
                os.environ[db_server.GALERA_ENV].split(),
                stack.enter_context(tempfile.TemporaryDirectory(
                    prefix='galera-haproxy.'))))
            stack.callback(os.environ.__setitem__, db_server.URL_ENV,
                           os.environ[db_server.URL_ENV])
            os.environ[db_server.URL_ENV] = balancer.db_url
            print('services reach the %d nodes through HAProxy (TCP, round '
                  'robin per connection) at %s' % (
                      len(db.urls), balancer.db_url), flush=True)
        if args.endpoint_cpu:
            # Both gunicorns (and their workers) inherit the variable.
            os.environ[endpoint_cpu.ENV] = stack.enter_context(
                tempfile.TemporaryDirectory(prefix='endpoint-cpu.'))
            stack.callback(os.environ.pop, endpoint_cpu.ENV, None)
            gunicorn_args += ['-c', os.path.abspath(endpoint_cpu.__file__)]
        started = stack.enter_context(servers.side_by_side(
            args.workers, not args.ours_only, prepare=prepare, copy=copy,
            gunicorn_args=gunicorn_args, own_args={
                'ours': args.ours_gunicorn_args,
                'upstream': args.upstream_gunicorn_args}))
        return measure([(s.label, s.url, s.pid) for s in started],
                       args, db=db, loaded=instances,
                       databases={
                           s.label: db_server.database_name(s.database)
                           for s in started if s.database})


def load_cloud(cloud):
    """Create ``cloud``'s providers and place its instances."""
    args = cloud.args
    client = cloud_api.Client(cloud.url, args.token, args.timeout)
    cloud_api.load(client, cloud.topology.jobs(), args.threads,
                   '%s %s-%d' % (cloud.label, args.shape, args.nodes))
    start = time.monotonic()
    cloud.populate(random.Random(args.seed))
    print('%s: placed %d instances in %.1f s' % (
        cloud.label, len(cloud.instances), time.monotonic() - start),
        flush=True)


def warm_up(cloud, args):
    """Run ``--warm-up`` seconds of the first factor's traffic on
    ``cloud`` and print it, outside the steps that count."""
    result = run_step(cloud, args.factors[0], args,
                      random.Random('%s-warm-up' % args.seed),
                      duration=args.warm_up)
    cloud.writes += result.recorder.writes()
    print('warm-up ' + step_line(result, len(cloud.label)), flush=True)


def measure(targets, args, db=None, loaded=None, databases=None):
    """Load every server, then run the steps interleaved; 0 when every
    server sustained at least its first step.

    ``loaded`` ({label: instances}) says the servers are loaded already:
    a server missing from it serves a copy of ours' database. ``db``
    (a ``db_server.DatabaseServer``) is read for the database's CPU,
    statements and size of each server's database (``databases``:
    {label: name}).
    """
    topology = Topology(args.shape, args.nodes, args.aggregates)
    databases = databases or {}
    clouds = [Cloud(label, url, pid, topology, args, databases.get(label))
              for label, url, pid in targets]
    width = max(len(c.label) for c in clouds)
    print('cloud %s, %d nodes, period %g s at x1, %d clients, steps of '
          '%g s, p99 bound %g ms; servers: %s' % (
              args.shape, args.nodes, args.period, args.clients,
              args.duration, args.p99_bound,
              ', '.join('%s=%s' % (c.label, c.url) for c in clouds)),
          flush=True)
    for who, options in (('both', args.gunicorn_args),
                         ('ours', args.ours_gunicorn_args),
                         ('upstream', args.upstream_gunicorn_args)):
        if options:
            print('gunicorn options (%s): %s' % (who, shlex.join(options)),
                  flush=True)
    for cloud in clouds:
        cloud.db = db
        if loaded is None:
            load_cloud(cloud)
        else:
            cloud.instances = dict(loaded.get(cloud.label, loaded['ours']))
        record_size(cloud, 'loaded')
    if args.warm_up > 0:
        for cloud in clouds:
            warm_up(cloud, args)
    plans = {cloud.label: Plan(args.factors, args.refine)
             for cloud in clouds}
    running = list(clouds)
    while running:
        # One step per server and round: servers stay interleaved, also
        # while refining at factors of their own.
        for cloud in list(running):
            factor = plans[cloud.label].next()
            if factor is None:
                running.remove(cloud)
                continue
            result = run_step(cloud, factor, args,
                              random.Random('%s-%s' % (args.seed, factor)))
            print(step_line(result, width), flush=True)
            cloud.steps.append(result)
            cloud.writes += result.recorder.writes()
            record_size(cloud, step_when(factor))
            why = result.why_not()
            plans[cloud.label].record(factor, why is None)
            for endpoint, status, text in result.recorder.samples:
                print('    error %s: %s %s' % (endpoint, status, text),
                      flush=True)
            if why:
                for line in endpoint_lines(result):
                    print(line, flush=True)
                cloud.stopped = cloud.stopped or 'x%g: %s' % (factor, why)
            else:
                cloud.sustained.append(result)
    for cloud in clouds:
        record_size(cloud, 'after the run')
        if cloud.db is not None and cloud.database is not None:
            print('%s database after the run, by table:' % cloud.label)
            for line in cloud.db.relation_lines(cloud.database):
                print('  ' + line, flush=True)
    if args.per_kind > 0:
        for cloud in clouds:
            cloud.kinds = probe(cloud, args.per_kind,
                                random.Random('%s-probe' % args.seed))
    consistent = True
    if args.check is not None:
        for cloud in clouds:
            if args.check and cloud.label not in args.check:
                continue
            start = time.monotonic()
            checked = cloud_state.check(cloud.url, FLAVOUR, PROJECTS,
                                        args.token, max(args.timeout, 300))
            print('%s state after the run (read in %.0f s): %s' % (
                cloud.label, time.monotonic() - start, checked.text()),
                flush=True)
            consistent = consistent and checked.ok
    for line in summary(clouds):
        print(line, flush=True)
    for line in report(clouds, args):
        print(line, flush=True)
    return 0 if consistent and all(c.sustained for c in clouds) else 1


def record_size(cloud, when):
    cloud.writes_at[when] = cloud.writes
    if cloud.db is not None and cloud.database is not None:
        cloud.sizes[when] = cloud.db.table_sizes(cloud.database)
        print('%s database %s (%d writes): %s' % (
            cloud.label, when, cloud.writes,
            db_server.size_text(cloud.sizes[when])), flush=True)


def step_when(factor):
    """The ``Cloud.sizes`` key of the size after the step at ``factor``."""
    return 'after x%g' % factor


def same_work(clouds):
    """The factor of the last step up to which every server ran the same
    steps and sustained them all (so served the same requests, writes
    included), or None."""
    last = None
    for steps in zip(*(c.steps for c in clouds)):
        factors = {r.factor for r in steps}
        if len(factors) > 1 or any(r.why_not() for r in steps):
            break
        last = steps[0].factor
    return last


#: The table only ours has (``placement.db.changes``).
CHANGE_LOG = 'provider_change_log'


def size_rows(clouds):
    """(label, [value per cloud], whether a count) rows of the database
    sizes in MB: loaded, after the same work (``same_work``) and after
    the run, each also without the change log, and the count of writes
    served by then."""
    rows = []
    same = same_work(clouds)
    moments = [('loaded', 'loaded')]
    if same is not None:
        moments.append(('after the same steps (to x%g)' % same,
                        step_when(same)))
    moments.append(('after the run', 'after the run'))
    for what, when in moments:
        sizes = [c.sizes.get(when) for c in clouds]
        if not any(sizes):
            continue
        rows.append(('database MB, %s' % what,
                     [sum(s.values()) / 1e6 if s else None for s in sizes],
                     False))
        rows.append(('  without the change log',
                     [(sum(s.values()) - s.get(CHANGE_LOG, 0)) / 1e6
                      if s else None for s in sizes], False))
        rows.append(('  writes served by then',
                     [c.writes_at.get(when) for c in clouds], True))
    return rows


if __name__ == '__main__':
    sys.exit(main())
