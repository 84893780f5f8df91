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

``--footprint 1000,10000,20000`` measures instead how ours grows with
the cloud: for an empty database and each of those counts of nested
trees (seven providers each) it starts ours alone and prints the seconds
from starting gunicorn to the first 200 of ``GET /`` and of the
candidates query, the full index load (median of three) and what the
index holds (tracemalloc), and each worker's RSS after a few candidates
requests; per provider, the index's bytes and each worker's RSS above
the empty database's. Memory grows no faster than the providers when
those per-provider figures stay flat or fall as the cloud grows::

    python3 -m benchmarks.scale --footprint 1000,10000,20000

Scenarios: ``flat`` (``--providers`` compute nodes with VCPU, MEMORY_MB
and DISK_GB, trait HW_CPU_X86_AVX2 and one of three aggregates) and
``nested`` (``--trees`` compute nodes, each with two NUMA children with
VCPU and MEMORY_MB, each with two SR-IOV PF children with SRIOV_NET_VF
and NET_BW_EGR_KILOBIT_PER_SEC). Run it from the checkout root with the
checkout's virtualenv (it imports placement and SQLAlchemy).
"""

import argparse
import concurrent.futures
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import cloud_rows
from benchmarks.toolkit import servers as toolkit_servers
from benchmarks.toolkit import stats
from placement.tests import placement_http

FLAT_QUERY = ('resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
              '&required=HW_CPU_X86_AVX2&limit=1000'
              % cloud_api.ident('flat-agg-0'))
NESTED_QUERY = ('resources_COMPUTE=VCPU:1,MEMORY_MB:256'
                '&resources_NET=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000'
                '&same_subtree=_COMPUTE,_NET&group_policy=none&limit=1000')
LISTING_QUERY = {'flat': 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256',
                 'nested': 'resources=SRIOV_NET_VF:1'}


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
            client = cloud_api.Client(server.url, 'admin', args.timeout)
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


def run_scenario(scenario, args):
    size = args.providers if scenario == 'flat' else args.trees
    providers = list((cloud_rows.flat_providers if scenario == 'flat'
                      else cloud_rows.nested_providers)(size))
    query = FLAT_QUERY if scenario == 'flat' else NESTED_QUERY
    workdir = tempfile.mkdtemp(prefix='bench-scale.')
    servers = toolkit_servers.on_sqlite_files(
        workdir, args.upstream_venv, timeout=args.timeout)
    try:
        for server in servers:
            server.create_schema()
            start = time.monotonic()
            count = cloud_rows.bulk_load(server.db_url, providers)
            print('%s %s: %d providers written in %.1f s' % (
                scenario, server.label, count, time.monotonic() - start),
                flush=True)
        for server in servers:
            start = time.monotonic()
            server.start(120)
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
            shutil.rmtree(workdir)
        else:
            print('kept', workdir)


def footprint(args):
    """Start-up, index and worker memory of ours for each tree count of
    ``args.footprint`` (and an empty database first, the baseline)."""
    rows = []
    for trees in [0] + args.footprint:
        workdir = tempfile.mkdtemp(prefix='bench-footprint.')
        server, = toolkit_servers.on_sqlite_files(workdir,
                                                  timeout=args.timeout)
        try:
            server.create_schema()
            count = cloud_rows.bulk_load(
                server.db_url, cloud_rows.nested_providers(trees))
            start = time.monotonic()
            server.start(120)
            up = time.monotonic() - start
            path = '/allocation_candidates?' + NESTED_QUERY
            server.wait(path, args.timeout)
            first = time.monotonic() - start
            # Two at once, so that each of the two sync workers answers
            # (one idle worker may otherwise take every request).
            clients = [cloud_api.Client(server.url, 'admin', args.timeout)
                       for _ in range(2)]
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                for _ in range(args.requests):
                    list(pool.map(lambda c: c.get(path), clients))
            rss = server.rss_mb()
            server.stop()
            load, held, indexed = index_figures(server.db_url)
            rows.append((trees, count, up, first, load, held, rss))
            print('nested-%d: %d providers; start-up %.1f s to GET /, '
                  '%.1f s to the first candidates answer; index load '
                  '%.2f s, holds %.1f MB; worker RSS %s MB' % (
                      trees, indexed, up, first, load, held / 2 ** 20,
                      ', '.join('%.1f' % mb for mb in rss)), flush=True)
        finally:
            server.stop()
            shutil.rmtree(workdir)
    base_rss = max(rows[0][6])
    print('trees  providers  start-up (/, candidates) s  index load s  '
          'index B/provider  worker RSS MB  RSS above empty B/provider')
    for trees, count, up, first, load, held, rss in rows:
        per = ('%d' % (held / count)) if count else '-'
        above = ', '.join('%d' % ((mb - base_rss) * 2 ** 20 / count)
                          for mb in rss) if count else '-'
        print('%6d %9d  %6.1f, %6.1f %16.2f %17s  %13s  %s' % (
            trees, count, up, first, load, per,
            ', '.join('%.1f' % mb for mb in rss), above), flush=True)


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
    parser.add_argument('--upstream-venv',
                        help='virtualenv with openstack-placement 16.0.0 '
                        'and gunicorn (e.g. /tmp/upvenv)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the work directory (databases, logs)')
    parser.add_argument('--footprint', type=lambda text: [
        int(n) for n in text.split(',')], metavar='TREES,...',
        help='start-up, index and worker memory of ours alone at these '
        'counts of nested trees (see above)')
    args = parser.parse_args(argv)
    if args.footprint:
        return footprint(args)
    for scenario in args.scenario or ['flat', 'nested']:
        run_scenario(scenario, args)


if __name__ == '__main__':
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
