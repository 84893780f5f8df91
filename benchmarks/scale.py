"""Benchmark a large cloud: 100,000 flat providers, 10,000 nested trees.

Loading that many providers over the API takes hours, so this benchmark
writes them with bulk SQL, rows exactly as the API would leave them (the
same uuids, names, generations, inventory defaults, traits and aggregates
as ``benchmarks.allocation_candidates`` creates over the API), into a
fresh SQLite file per server. It starts the servers itself (gunicorn
``-w 2``, noauth2, on 127.0.0.1), ours from this checkout and, with
``--upstream-venv``, upstream Placement 16.0.0 side by side::

    python3 -m benchmarks.scale --scenario flat --providers 100000 \\
        --upstream-venv /tmp/upvenv

Per scenario it reports:

* start-up: seconds from starting gunicorn to the first answer of the
  candidates query (ours loads its provider index on that request);
* the candidates query with ``limit=1000``, ``GET /resource_providers``
  (the whole list) and ``GET /resource_providers?resources=...``:
  median and p90 over ``--rounds`` interleaved rounds of ``--requests``
  sequential requests, the spread of the round medians, and the ratio
  to the first server; a server that does not answer within
  ``--timeout`` is reported and not asked again; and the CPU time the
  server's workers used per request (from /proc), a figure less
  disturbed than latency by other work on a shared machine;
* each worker's RSS (``VmRSS`` from /proc) after the candidates
  requests (both workers have loaded what they keep) and again after
  the listings (which build whole lists of providers);
* for ours, in this process: a full provider index load (median of
  three) and the memory the index holds (tracemalloc), per provider.

Scenarios: ``flat`` (``--providers`` compute nodes with VCPU, MEMORY_MB
and DISK_GB, trait HW_CPU_X86_AVX2 and one of three aggregates) and
``nested`` (``--trees`` compute nodes, each with two NUMA children with
VCPU and MEMORY_MB, each with two SR-IOV PF children with SRIOV_NET_VF
and NET_BW_EGR_KILOBIT_PER_SEC). Run it from the checkout root with the
checkout's virtualenv (it imports placement and SQLAlchemy).
"""

import argparse
import contextlib
import datetime
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

import sqlalchemy as sa

from benchmarks import allocation_candidates as bench
from benchmarks.toolkit import proc_cpu
from benchmarks.toolkit import stats
from placement.tests import gunicorn_server
from placement.tests import placement_http

MAX_INT = 2147483647
FLAT_QUERY = ('resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
              '&required=HW_CPU_X86_AVX2&limit=1000'
              % bench.ident('flat-agg-0'))
NESTED_QUERY = ('resources_COMPUTE=VCPU:1,MEMORY_MB:256'
                '&resources_NET=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000'
                '&same_subtree=_COMPUTE,_NET&group_policy=none&limit=1000')
LISTING_QUERY = {'flat': 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256',
                 'nested': 'resources=SRIOV_NET_VF:1'}


# -- rows as the API writes them ------------------------------------------

def _inventory(rc, total, ratio=1.0):
    return {'resource_class': rc, 'total': total, 'reserved': 0,
            'min_unit': 1, 'max_unit': MAX_INT, 'step_size': 1,
            'allocation_ratio': ratio}


def flat_providers(n):
    """(name, parent name, inventories, traits, aggregate names) per
    provider, parents before children."""
    for i in range(n):
        yield ('flat-%d-cn%d' % (n, i), None,
               [_inventory('VCPU', 32, 16.0), _inventory('MEMORY_MB', 131072),
                _inventory('DISK_GB', 2000)],
               ['HW_CPU_X86_AVX2'], ['flat-agg-%d' % (i % 3)])


def nested_providers(t):
    for i in range(t):
        cn = 'nested-%d-cn%d' % (t, i)
        yield cn, None, [], [], []
        for numa in range(2):
            nn = '%s-numa%d' % (cn, numa)
            yield nn, cn, [_inventory('VCPU', 16),
                           _inventory('MEMORY_MB', 65536)], [], []
            for dev in range(2):
                yield ('%s-dev%d' % (nn, dev), nn,
                       [_inventory('SRIOV_NET_VF', 8),
                        _inventory('NET_BW_EGR_KILOBIT_PER_SEC', 10000000)],
                       [], [])


def _max_id(conn, table):
    return conn.execute(sa.select(sa.func.coalesce(
        sa.func.max(table.c.id), 0))).scalar()


def bulk_load(url, providers):
    """Insert ``providers`` into the (migrated, name-synced) database at
    ``url`` with a few executemany statements; return how many. Their
    names and aggregates must be new to it."""
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    names = ['resource_providers', 'inventories', 'traits',
             'resource_classes', 'resource_provider_traits',
             'placement_aggregates', 'resource_provider_aggregates']
    meta.reflect(engine, only=names)
    t = meta.tables
    now = datetime.datetime.utcnow().replace(microsecond=0)
    with engine.begin() as conn:
        classes = dict(conn.execute(sa.select(
            t['resource_classes'].c.name, t['resource_classes'].c.id)).all())
        traits = dict(conn.execute(sa.select(
            t['traits'].c.name, t['traits'].c.id)).all())
        start = _max_id(conn, t['resource_providers'])
        first_aggregate = _max_id(conn, t['placement_aggregates']) + 1
        aggregates = {}
        ids = {}
        rps, invs, rp_traits, rp_aggs = [], [], [], []
        for name, parent, inventories, trait_names, agg_names in providers:
            rp = ids[name] = start + len(ids) + 1
            parent_id = ids[parent] if parent else None
            root = rp if parent is None else rps[parent_id - start - 1][
                'root_provider_id']
            # One generation bump per PUT the API loader makes.
            generation = sum(map(bool, (inventories, trait_names,
                                        agg_names)))
            rps.append({'id': rp, 'uuid': bench.ident(name), 'name': name,
                        'generation': generation, 'root_provider_id': root,
                        'parent_provider_id': parent_id, 'created_at': now,
                        'updated_at': now if generation else None})
            for inv in inventories:
                row = dict(inv, resource_provider_id=rp, created_at=now)
                row['resource_class_id'] = classes[row.pop('resource_class')]
                invs.append(row)
            rp_traits += [{'resource_provider_id': rp,
                           'trait_id': traits[trait], 'created_at': now}
                          for trait in trait_names]
            for agg in agg_names:
                aggregates.setdefault(agg, first_aggregate + len(aggregates))
                rp_aggs.append({'resource_provider_id': rp,
                                'aggregate_id': aggregates[agg],
                                'created_at': now})
        if aggregates:
            conn.execute(t['placement_aggregates'].insert(), [
                {'id': i, 'uuid': bench.ident(name), 'created_at': now}
                for name, i in aggregates.items()])
        for table, rows in (('resource_providers', rps),
                            ('inventories', invs),
                            ('resource_provider_traits', rp_traits),
                            ('resource_provider_aggregates', rp_aggs)):
            for chunk in range(0, len(rows), 20000):
                conn.execute(t[table].insert(), rows[chunk:chunk + 20000])
        if engine.dialect.name == 'postgresql':
            # Ids were given: move the sequences past them, as inserts
            # by the API would have.
            for table in ('resource_providers', 'placement_aggregates'):
                conn.execute(sa.text(
                    "SELECT setval(pg_get_serial_sequence(:table, 'id'), "
                    "(SELECT COALESCE(MAX(id), 0) + 1 FROM %s), false)"
                    % table), {'table': table})
    engine.dispose()
    return len(rps)


# -- servers --------------------------------------------------------------

class Server:
    """One gunicorn -w 2 serving one SQLite file."""

    def __init__(self, label, gunicorn, db_path, workdir, pythonpath,
                 preload):
        self.label, self.gunicorn = label, gunicorn
        self.db_url = 'sqlite:///' + db_path
        self.workdir, self.pythonpath, self.preload = (workdir, pythonpath,
                                                       preload)
        self.proc = None
        self.url = None
        self.timed_out = None

    def start(self, timeout):
        port = gunicorn_server.free_port()
        self.url = 'http://127.0.0.1:%d' % port
        env = dict(os.environ,
                   OS_PLACEMENT_DATABASE__CONNECTION=self.db_url,
                   OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP='True',
                   OS_API__AUTH_STRATEGY='noauth2',
                   PYTHONPATH=self.pythonpath)
        cmd = [self.gunicorn, '-w', '2', '--timeout', str(int(timeout) + 5),
               '-b', '127.0.0.1:%d' % port]
        if self.preload:
            cmd.append('--preload')
        cmd.append('placement.wsgi.api:application')
        log = open(os.path.join(self.workdir, self.label + '.log'), 'ab')
        # From the empty work directory: gunicorn puts its cwd on sys.path.
        self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env,
                                     stdout=log, stderr=log)
        log.close()

    def wait(self, path, timeout):
        """Seconds until ``path`` answers 200 (polling)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError('%s exited; see %s.log in %s' % (
                    self.label, self.label, self.workdir))
            client = placement_http.Client(self.url, timeout=timeout)
            resp = client.fetch('GET', path)
            client.close()
            if resp.status == 200:
                return
            if time.monotonic() > deadline:
                raise RuntimeError('%s: no 200 for %s within %g s (%s)' % (
                    self.label, path, timeout, resp.status or resp.failure))
            time.sleep(0.2)

    def workers(self):
        """Pids of the gunicorn workers (children of the master)."""
        return gunicorn_server.children(self.proc.pid)

    def cpu_seconds(self):
        """User and system CPU time the workers have used so far."""
        return sum(proc_cpu.tree_seconds(pid) or 0
                   for pid in self.workers())

    def rss_mb(self):
        sizes = []
        for pid in self.workers():
            with open('/proc/%d/status' % pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        sizes.append(int(line.split()[1]) / 1024)
        return sizes

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            for pid in self.workers():
                os.kill(pid, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait()


# -- measuring ------------------------------------------------------------

def measure(servers, name, path, args):
    """Interleaved rounds of sequential GETs of ``path``; print a line
    per server and ratios to the first."""
    times = {s.label: [] for s in servers}
    medians = {s.label: [] for s in servers}
    cpu = {s.label: 0.0 for s in servers}
    counts = {s.label: set() for s in servers}
    failures = {}
    for _ in range(args.rounds):
        for server in servers:
            if server.label in failures:
                continue
            client = bench.Client(server.url, 'admin', args.timeout)
            round_times = []
            cpu_before = server.cpu_seconds()
            for _ in range(args.requests):
                resp, seconds = client.get(path)
                if resp.status != 200:
                    failures[server.label] = (
                        'no answer within %g s' % args.timeout
                        if resp.status is None else 'HTTP %s' % resp.status)
                    break
                round_times.append(seconds * 1000)
                data = placement_http.decode(resp.body)
                counts[server.label].add(len(
                    data.get('allocation_requests')
                    or data.get('resource_providers') or ()))
            cpu[server.label] += server.cpu_seconds() - cpu_before
            if round_times:
                times[server.label] += round_times
                medians[server.label].append(statistics.median(round_times))
    first = servers[0].label
    for server in servers:
        label, values = server.label, times[server.label]
        line = '%-34s %-9s' % (name, label)
        if values:
            line += ('results %s  median %8.1f ms  p90 %8.1f ms  (round '
                     'medians %.1f-%.1f, n %d)' % (
                         '/'.join(map(str, sorted(counts[label]))),
                         statistics.median(values),
                         stats.percentile(values, 0.9),
                         min(medians[label]), max(medians[label]),
                         len(values)))
            line += '  server CPU %.1f ms/request' % (
                cpu[label] * 1000 / len(values))
            if label != first and times[first]:
                line += '  ours %.1fx faster (median), %.1fx less CPU' % (
                    statistics.median(values)
                    / statistics.median(times[first]),
                    (cpu[label] / len(values))
                    / max(cpu[first] / len(times[first]), 1e-9))
        if label in failures:
            line += '  ' + failures[label]
        print(line, flush=True)


def index_figures(db_url, repeat=3):
    """(median seconds of a full index load, bytes it holds, providers)
    measured in this process on the database at ``db_url``."""
    from placement.db import api as db_api
    from placement.objects.candidates import provider_index
    db = db_api.Database(db_url)
    seconds = []
    try:
        for _ in range(repeat):
            index = provider_index.ProviderIndex()
            with db.transaction(write=False) as conn:
                start = time.perf_counter()
                index.refresh(conn)
                seconds.append(time.perf_counter() - start)
            del index
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        index = provider_index.ProviderIndex()
        with db.transaction(write=False) as conn:
            index.refresh(conn)
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        return statistics.median(seconds), held, len(index.uuid)
    finally:
        db.dispose()


def report_rss(servers, scenario, when):
    for server in servers:
        print('%s %-9s worker RSS %s: %s MB' % (
            scenario, server.label, when, ', '.join(
                '%.0f' % mb for mb in server.rss_mb())), flush=True)


def run_scenario(scenario, args, checkout):
    size = args.providers if scenario == 'flat' else args.trees
    providers = list((flat_providers if scenario == 'flat'
                      else nested_providers)(size))
    query = FLAT_QUERY if scenario == 'flat' else NESTED_QUERY
    workdir = tempfile.mkdtemp(prefix='bench-scale.')
    servers = [Server('ours', args.gunicorn,
                      os.path.join(workdir, 'ours.db'), workdir, checkout,
                      preload=False)]
    if args.upstream_venv:
        servers.append(Server(
            'upstream', os.path.join(args.upstream_venv, 'bin', 'gunicorn'),
            os.path.join(workdir, 'upstream.db'), workdir, '', preload=True))
    try:
        for server in servers:
            # A first start creates the schema and the standard names.
            server.start(args.timeout)
            server.wait('/traits', 120)
            server.wait('/resource_classes', 120)
            server.stop()
            start = time.monotonic()
            count = bulk_load(server.db_url, providers)
            print('%s %s: %d providers written in %.1f s' % (
                scenario, server.label, count, time.monotonic() - start),
                flush=True)
        for server in servers:
            start = time.monotonic()
            server.start(args.timeout)
            server.wait('/', 120)
            up = time.monotonic() - start
            try:
                server.wait('/allocation_candidates?' + query,
                            args.timeout)
            except RuntimeError as exc:
                # Measured anyway: its requests are reported unanswered.
                print('%s %-9s start-up: %.1f s to GET /, then %s' % (
                    scenario, server.label, up, exc), flush=True)
                continue
            print('%s %-9s start-up: %.1f s to GET /, %.1f s to the first '
                  'candidates answer' % (scenario, server.label, up,
                                         time.monotonic() - start),
                  flush=True)
        measure(servers, '%s-%d candidates limit=1000' % (scenario, size),
                '/allocation_candidates?' + query, args)
        report_rss(servers, scenario, 'after the candidates requests')
        measure(servers, '%s-%d GET /resource_providers' % (scenario, size),
                '/resource_providers', args)
        listing = LISTING_QUERY[scenario]
        measure(servers, '%s-%d ?%s' % (scenario, size, listing),
                '/resource_providers?' + listing, args)
        report_rss(servers, scenario, 'after the listings too')
        for server in servers:
            server.stop()
        seconds, held, count = index_figures(servers[0].db_url)
        print('%s ours index: full load %.2f s, holds %.1f MB (%d bytes '
              'per provider, tracemalloc) for %d providers' % (
                  scenario, seconds, held / 2 ** 20, held // max(count, 1),
                  count), flush=True)
    finally:
        for server in servers:
            server.stop()
        if not args.keep:
            for name in os.listdir(workdir):
                os.unlink(os.path.join(workdir, name))
            os.rmdir(workdir)
        else:
            print('kept', workdir)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--scenario', action='append',
                        choices=['flat', 'nested'])
    parser.add_argument('--providers', type=int, default=100000)
    parser.add_argument('--trees', type=int, default=10000)
    parser.add_argument('--requests', type=int, default=10)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=60.0,
                        help='client timeout per request, seconds')
    parser.add_argument('--gunicorn', default=os.path.join(
        os.path.dirname(sys.executable), 'gunicorn'),
        help='gunicorn of the virtualenv serving ours')
    parser.add_argument('--upstream-venv',
                        help='virtualenv with openstack-placement 16.0.0 '
                        'and gunicorn (e.g. /tmp/upvenv)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the work directory (databases, logs)')
    args = parser.parse_args(argv)
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for scenario in args.scenario or ['flat', 'nested']:
        run_scenario(scenario, args, checkout)


if __name__ == '__main__':
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
