"""Benchmark GET /allocation_candidates on running servers, side by side.

Loads providers over the API (microversion 1.39, parallel threads) into
every server given with ``--url`` and prints medians. Run it from the
checkout root against fresh servers (empty databases). One server::

    python3 -m benchmarks.allocation_candidates \\
        --url http://127.0.0.1:8000 --scenario flat --providers 1000

Several, each optionally labelled (``tools/bench-candidates-side-by-side.sh``
starts ours and upstream Placement and runs exactly this)::

    python3 -m benchmarks.allocation_candidates \\
        --url ours=http://127.0.0.1:8300 --url upstream=http://127.0.0.1:8301

The data is loaded into each server in turn; then every measurement is
taken in ``--rounds`` interleaved rounds (ours, upstream, ours, upstream,
...; default 3 with several servers, 1 with one), so that all servers see
the same machine conditions, which drift on a small machine. A server
that gives no answer (e.g. a ``--timeout``) or an error is reported and
left out of the later rounds of that measurement.

With ``--side-by-side`` the benchmark starts ours and upstream itself
(``benchmarks.toolkit.servers``: gunicorn, two workers, fresh databases;
SQLite, or PostgreSQL / MariaDB under ``tools/with-postgresql.sh`` /
``tools/with-mysql.sh``), loads ours through its API and gives upstream
a copy of ours' rows, and also reports each server's CPU per sequential
request (its gunicorn tree, read from ``/proc``)::

    tools/with-postgresql.sh .venv/bin/python -m \\
        benchmarks.allocation_candidates --side-by-side --scenario perfload

Scenarios (``--scenario``, repeatable; default flat, nested and wide):

perfload
    upstream's perfload job: ``--providers`` N compute nodes with
    VCPU/MEMORY_MB/DISK_GB, all in one aggregate and with traits
    HW_CPU_X86_AVX2 and COMPUTE_VOLUME_MULTI_ATTACH, so every one
    qualifies; times ``resources=VCPU:1,DISK_GB:10,MEMORY_MB:256
    &member_of=<agg>&required=HW_CPU_X86_AVX2&limit=1000`` (N candidates
    up to the limit).

flat
    ``--providers`` N compute nodes with VCPU/MEMORY_MB/DISK_GB, each in
    one of three aggregates (i mod 3) and with trait HW_CPU_X86_AVX2, so
    a third of them qualify. Times ``resources=VCPU:1,DISK_GB:10,MEMORY_MB:256
    &member_of=<agg 0>&required=HW_CPU_X86_AVX2`` with and without
    ``limit=1000``.
nested
    ``--trees`` T compute nodes, each with two NUMA children (VCPU,
    MEMORY_MB) that each have two network devices (SRIOV_NET_VF,
    NET_BW_EGR_KILOBIT_PER_SEC). Times a granular query with
    ``same_subtree=_COMPUTE,_NET`` and ``group_policy=none``.

With ``--claim-between``, flat and nested also time their query (no
limit) with a claim before each sequential request: ``PUT /allocations``
of a new consumer taking the first candidate of the previous answer, so
that each request follows a write to one or two providers, as a
scheduler's do. Claims use capacity, so the candidate counts drift.
wide
    For each of ``--devices`` (default 8,21) one host with that many
    single-unit devices of its own custom class; 8 groups of one unit,
    ``group_policy=isolate&limit=1000``, one request per round with a
    ``--timeout`` (default 300 s). A server without an answer in time is
    not asked again, neither in later rounds nor for more devices.

Each measurement but wide first sends ``--warm-up`` untimed requests
(default 10) to each server: a worker's first candidates request
loads what later ones reuse (our provider index), which would
otherwise count in the CPU per request. Each measurement prints, per
server, the median and p90 over all rounds of ``--requests``
sequential requests per round (and the server's CPU per request when
the benchmark started it), and the throughput of the same request from
``--concurrency`` clients (requests and elapsed time summed over the
rounds). With several servers it then prints how much faster or slower
the first server is than each other one, and a WARNING when servers
(or one server's requests) return different numbers of candidates.

Latency is the time from sending the request over a fresh connection to
reading the last byte of the body, over a bare socket
(``placement_http.RawClient``; ``--http-client``: http.client, whose
own CPU, about a millisecond per large answer, counted in figures
before 2026-12-07); decoding the JSON (to count candidates) happens
after the clock stops, since it is client work, and after the round's
last request (``--decode-between``: before the next request, as figures
before 2026-12-07 22:00 were taken), so that the client's work does not
run between two of a server's requests and cool its caches. The
concurrent clients read the whole body and check the status only.

Provider and aggregate uuids are derived from their names, so
``--no-load`` measures data an earlier run loaded (same sizes) without
writing anything. Standard library only.
"""

import argparse
import concurrent.futures
import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import hello_app
from benchmarks.toolkit import labels
from benchmarks.toolkit import perfload as perfload_shape
from benchmarks.toolkit import proc_cpu
from benchmarks.toolkit import servers as servers_kit
from benchmarks.toolkit import stats
from placement.tests import placement_http

DEFAULT_URL = 'http://127.0.0.1:8000'


class Server:
    """A server to measure; ``pid`` (its gunicorn master) when the
    benchmark started it, so that its CPU can be read. ``raw``: time
    GETs with ``placement_http.RawClient`` (see ``get``)."""

    def __init__(self, label, url, token, timeout, pid=None, raw=True):
        self.label, self.url, self.pid = label, url, pid
        self.token, self.timeout, self.raw = token, timeout, raw
        self.client = cloud_api.Client(url, token, timeout)

    def get(self, path, timeout=None):
        """(Response with the body as bytes, seconds from sending the
        request over a fresh connection to reading the last byte).

        Over a bare socket unless ``raw`` is false: http.client parses
        the headers with the email package and reads the body through
        buffered files, about a millisecond of the client's CPU per
        answer, which is a large share of a fast server's figure and
        would count as the server's latency."""
        if not self.raw:
            return self.client.get(path, timeout)
        client = placement_http.RawClient(self.url, self.token,
                                          timeout or self.timeout)
        try:
            start = time.perf_counter()
            resp = client.fetch('GET', path)
            return resp, time.perf_counter() - start
        finally:
            client.close()

    def cpu_seconds(self):
        """CPU seconds of the server's process tree so far, or None."""
        return proc_cpu.tree_exact_seconds(self.pid) if self.pid else None


class Result:
    """One server's figures for one measurement, over all its rounds."""

    def __init__(self, label, server=None):
        self.label, self.server = label, server
        self.times = []         # ms per sequential request
        self.counts = []        # candidates per sequential request
        self.cpu = 0.0          # server CPU seconds over them ...
        self.cpu_requests = 0   # ... and how many requests that covers
        self.sent = 0           # concurrent requests, summed over rounds
        self.elapsed = 0.0      # ... and their wall-clock seconds
        self.bad = 0            # ... that did not answer 200
        self.failure = None     # why the server was left out
        self.timed_out = None   # the timeout (s) it did not answer within

    @property
    def active(self):
        return self.failure is None

    def stop(self, failure, timed_out=None):
        self.failure, self.timed_out = failure, timed_out

    def no_answer(self, seconds, failure, timeout):
        # RawClient's kernel timeouts end a receive with EAGAIN.
        if failure and failure.split(':')[0] in (
                'TimeoutError', 'timeout', 'BlockingIOError'):
            self.stop('no answer within %g s' % timeout, timed_out=timeout)
        else:
            self.stop('no answer after %.1f s (%s)' % (seconds, failure))

    def median(self):
        return statistics.median(self.times) if self.times else None

    def p90(self):
        return stats.percentile(self.times, 0.9)

    def cpu_ms(self):
        """Server CPU per sequential request (ms), None if not read."""
        if not self.cpu_requests:
            return None
        return self.cpu * 1000 / self.cpu_requests

    def throughput(self):
        return self.sent / self.elapsed if self.elapsed else None


def interleave(results, rounds, step):
    """Call ``step(result)`` for each result in turn, ``rounds`` times
    over (A, B, A, B, ...), leaving a result out once it has failed."""
    for _ in range(rounds):
        for result in results:
            if result.active:
                step(result)


def sequential_round(result, path, requests, timeout, claim=False,
                     decode_between=False):
    """One round of sequential requests; decoding is outside the clock,
    and after the round's last request unless ``decode_between`` (or
    ``claim``, which needs each answer before the next request).

    Decoding a large answer costs the client milliseconds of CPU on the
    cores the servers share; run between two requests, it leaves the
    server's next request to start with cold caches after the client's
    work: decoding the perfload answer (481 KB) that way cost ours
    0.4-0.5 ms of CPU more per request, half as much again
    (doc/source/contributor/benchmarks.rst, perfload).
    With ``claim``, each request but the first follows a claim of the
    first candidate of the one before (``claim_first``), not timed."""
    data = None
    bodies = []
    # Claims are server work too: no CPU figure with them.
    cpu_before = None if claim else result.server.cpu_seconds()
    for _ in range(requests):
        if claim and data is not None:
            claim_first(result.server.client, data)
        resp, seconds = result.server.get(path, timeout)
        if resp.status is None:
            result.no_answer(seconds, resp.failure, timeout)
            break
        if resp.status != 200:
            result.stop('HTTP %s: %s' % (
                resp.status, str(placement_http.decode(resp.body))[:300]))
            break
        result.times.append(seconds * 1000)
        if claim or decode_between:
            data = placement_http.decode(resp.body)
            result.counts.append(len(data['allocation_requests']))
        else:
            bodies.append(resp.body)
    else:
        if cpu_before is not None:
            result.cpu += result.server.cpu_seconds() - cpu_before
            result.cpu_requests += requests
    result.counts.extend(
        len(placement_http.decode(body)['allocation_requests'])
        for body in bodies)


def claim_first(client, answer):
    """PUT /allocations of a new consumer taking the first candidate of
    ``answer`` (a decoded candidates body), as a scheduler claims."""
    if not answer['allocation_requests']:
        return
    client.write('PUT', '/allocations/%s' % uuid.uuid4(), dict(
        answer['allocation_requests'][0],
        project_id=cloud_api.ident('project'),
        user_id=cloud_api.ident('user'), consumer_generation=None,
        consumer_type='INSTANCE'), ok=(204,))


def concurrent_round(result, path, total, concurrency, timeout):
    """One round of ``total`` requests from ``concurrency`` clients; each
    reads the whole body and checks the status, without decoding."""
    server = result.server
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        statuses = list(pool.map(
            lambda _: server.get(path, timeout)[0].status, range(total)))
    result.elapsed += time.perf_counter() - start
    result.sent += total
    result.bad += len([s for s in statuses if s != 200])


def faster(ratio):
    """'12.3x faster' for a ratio >= 1, else '2.00x slower' (1 / ratio)."""
    word = 'faster' if ratio >= 1 else 'slower'
    ratio = ratio if ratio >= 1 else 1 / ratio
    digits = 2 if ratio < 10 else 1 if ratio < 100 else 0
    return '%.*fx %s' % (digits, ratio, word)


def compare(first, other, concurrency):
    """How ``first`` fares against ``other``: latency ratio other/first
    median, throughput ratio first/other req/s (> 1: first is faster).
    A server that timed out counts as taking its timeout, a bound."""
    parts = []
    mine, theirs = first.median(), other.median()
    if mine and theirs:
        parts.append('%s (median)' % faster(theirs / mine))
    elif mine and other.timed_out:
        parts.append('at least %s (median; %s: %s)' % (
            faster(other.timed_out * 1000 / mine), other.label,
            other.failure))
    elif theirs and first.timed_out:
        parts.append('at least %s (median; %s: %s)' % (
            faster(theirs / (first.timed_out * 1000)), first.label,
            first.failure))
    mine, theirs = first.cpu_ms(), other.cpu_ms()
    if mine and theirs:
        parts.append('%s (server CPU per request)' % faster(theirs / mine))
    mine, theirs = first.throughput(), other.throughput()
    if mine and theirs:
        parts.append('%s (c%d req/s)' % (faster(mine / theirs), concurrency))
    if not parts:
        return '%s vs %s: no comparison' % (first.label, other.label)
    return '%s vs %s: %s is %s' % (first.label, other.label, first.label,
                                   ', '.join(parts))


def count_warnings(name, results):
    """WARNING lines when a server's requests, or the servers, disagree
    on the number of candidates."""
    seen = [(r.label, sorted(set(r.counts))) for r in results if r.counts]
    lines = ['WARNING %s: %s returned %s candidates in different requests'
             % (name, label, '/'.join(map(str, counts)))
             for label, counts in seen if len(counts) > 1]
    if len({tuple(counts) for _, counts in seen}) > 1:
        lines.append('WARNING %s: servers return different numbers of '
                     'candidates: %s' % (name, ', '.join(
                         '%s %s' % (label, '/'.join(map(str, counts)))
                         for label, counts in seen)))
    return lines


def result_line(name, result, concurrency, label_width=0):
    """One server's line; the label column only with several servers."""
    line = '%-28s' % name
    if label_width:
        line += ' %-*s' % (label_width, result.label)
    text = []
    if result.times:
        counts = sorted(set(result.counts))
        text.append('candidates %6s  median %8.2f ms  p90 %.2f (min %.2f, '
                    'max %.1f%s)' % (
                        '/'.join(map(str, counts)), result.median(),
                        result.p90(), min(result.times), max(result.times),
                        ', n %d' % len(result.times) if label_width else ''))
    if result.cpu_ms() is not None:
        text.append('cpu %.2f ms/req' % result.cpu_ms())
    if result.sent:
        rate = 'c%d %.1f req/s' % (concurrency, result.throughput())
        if result.bad:
            rate += ' (%d non-200)' % result.bad
        text.append(rate)
    if result.failure:
        text.append(result.failure)
    return line + ' ' + '  '.join(text)


def report(name, results, concurrency):
    """The lines printed for one measurement."""
    width = max(len(r.label) for r in results) if len(results) > 1 else 0
    lines = [result_line(name, r, concurrency, width) for r in results]
    lines += ['%-28s %s' % (name, compare(results[0], other, concurrency))
              for other in results[1:]]
    return lines + count_warnings(name, results)


def warm_up(results, path, count, timeout):
    """``count`` untimed requests to each server, which load what a
    server loads on first use (our provider index, in each worker)
    outside the figures; a server that fails them is left out."""
    for result in results:
        if result.active and count:
            scratch = Result(result.label, result.server)
            sequential_round(scratch, path, count, timeout)
            if not scratch.active:
                result.stop(scratch.failure, scratch.timed_out)


def measure(servers, name, query, args, requests=None, concurrency=None,
            timeout=None, skip=None, claim=False, warm=True):
    """Time one query on every server in interleaved rounds, after
    ``--warm-up`` untimed requests each (unless not ``warm``); print and
    return the Results. ``skip``: {label: why} servers not to ask;
    ``claim``: a claim before each sequential request (no concurrent
    clients)."""
    path = '/allocation_candidates?' + query
    requests = requests or args.requests
    concurrency = concurrency or args.concurrency
    timeout = timeout or args.timeout
    results = [Result(s.label, s) for s in servers]
    for result in results:
        if skip and result.label in skip:
            result.stop(skip[result.label])
    if warm:
        warm_up(results, path, args.warm_up, timeout)
    interleave(results, args.rounds,
               lambda r: sequential_round(r, path, requests, timeout,
                                          claim, args.decode_between))
    if concurrency > 1:
        total = concurrency * max(1, requests // 4)
        interleave(results, args.rounds, lambda r: concurrent_round(
            r, path, total, concurrency, timeout))
    for line in report(name, results, concurrency):
        print(line, flush=True)
    return results


def load_each(servers, jobs, threads, name):
    for server in servers:
        label = name if len(servers) == 1 else server.label + ' ' + name
        cloud_api.load(server.client, jobs, threads, label)


# Each scenario has a loader (``load_<name>``: writes its cloud into
# every server given) and a measurement (``<name>``: times its queries).

def load_perfload(servers, args):
    load_each(servers, perfload_shape.jobs(args.providers), args.threads,
              'perfload-%d' % args.providers)


def perfload(servers, args):
    measure(servers, 'perfload-%d limit=1000' % args.providers,
            perfload_shape.query(), args)


def flat_aggregates():
    return [cloud_api.ident('flat-agg-%d' % i) for i in range(3)]


def load_flat(servers, args):
    n = args.providers
    aggs = flat_aggregates()
    jobs = []
    for i in range(n):
        traits = ['HW_CPU_X86_AVX2']
        jobs.append([(('flat-%d-cn%d' % (n, i), {
            'VCPU': {'total': 32, 'allocation_ratio': 16.0},
            'MEMORY_MB': {'total': 131072},
            'DISK_GB': {'total': 2000}}),
            dict(traits=traits, aggregates=[aggs[i % 3]]))])
    load_each(servers, jobs, args.threads, 'flat-%d' % n)


def flat(servers, args):
    n = args.providers
    query = ('resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
             '&required=HW_CPU_X86_AVX2' % flat_aggregates()[0])
    measure(servers, 'flat-%d' % n, query, args)
    measure(servers, 'flat-%d limit=1000' % n, query + '&limit=1000', args)
    if args.claim_between:
        measure(servers, 'flat-%d claim-between' % n, query, args,
                concurrency=1, claim=True)


def load_nested(servers, args):
    t = args.trees
    jobs = []
    for i in range(t):
        cn = 'nested-%d-cn%d' % (t, i)
        steps = [((cn, {}), {})]
        for numa in range(2):
            nn = '%s-numa%d' % (cn, numa)
            steps.append(((nn, {
                'VCPU': {'total': 16},
                'MEMORY_MB': {'total': 65536}}), dict(parent=cn)))
            for dev in range(2):
                steps.append((('%s-dev%d' % (nn, dev), {
                    'SRIOV_NET_VF': {'total': 8},
                    'NET_BW_EGR_KILOBIT_PER_SEC': {'total': 10000000}}),
                    dict(parent=nn)))
        jobs.append(steps)
    load_each(servers, jobs, args.threads, 'nested-%d' % t)


def nested(servers, args):
    t = args.trees
    query = ('resources_COMPUTE=VCPU:1,MEMORY_MB:256'
             '&resources_NET=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000'
             '&same_subtree=_COMPUTE,_NET&group_policy=none')
    measure(servers, 'nested-%d' % t, query, args)
    if args.claim_between:
        measure(servers, 'nested-%d claim-between' % t, query, args,
                concurrency=1, claim=True)


def load_wide(servers, args):
    for d in args.devices:
        rc = 'CUSTOM_WIDE_%d' % d
        host = 'wide-%d-host' % d
        for server in servers:
            server.client.write('PUT', '/resource_classes/' + rc,
                                ok=(201, 204))
        load_each(servers, [[((host, {}), {})]], 1, 'wide-%d host' % d)
        load_each(servers, [
            [(('%s-dev%d' % (host, i), {rc: {'total': 1}}),
              dict(parent=host))] for i in range(d)],
            args.threads, 'wide-%d devices' % d)


def wide(servers, args):
    skip = {}
    for d in args.devices:
        rc = 'CUSTOM_WIDE_%d' % d
        query = '&'.join('resources%d=%s:1' % (g, rc) for g in range(1, 9))
        query += '&group_policy=isolate&limit=1000'
        results = measure(servers, 'wide-%d isolate limit=1000' % d, query,
                          args, requests=1, concurrency=1,
                          timeout=args.timeout, skip=skip, warm=False)
        for result in results:
            if result.timed_out:
                # More devices only make it harder: do not wait again.
                skip[result.label] = 'skipped: no answer for wide-%d ' \
                    'within %g s' % (d, result.timed_out)


SCENARIOS = {'perfload': (load_perfload, perfload),
             'flat': (load_flat, flat),
             'nested': (load_nested, nested),
             'wide': (load_wide, wide)}
DEFAULT_SCENARIOS = ['flat', 'nested', 'wide']


def run(servers, args):
    """Load (unless ``--no-load``) and measure each scenario in turn."""
    for name in args.scenario or DEFAULT_SCENARIOS:
        loader, measurement = SCENARIOS[name]
        if not args.no_load:
            loader(servers, args)
        measurement(servers, args)


def side_by_side(args):
    """Start ours and upstream, load ours, give upstream a copy of its
    rows, and measure both with their CPU."""
    names = args.scenario or DEFAULT_SCENARIOS

    def prepare(label, url):
        server = Server(label, url, args.token, args.timeout,
                        raw=not args.http_client)
        for name in names:
            SCENARIOS[name][0]([server], args)

    with servers_kit.side_by_side(timeout=args.timeout + 5,
                                  prepare=prepare) as started, \
            contextlib.ExitStack() as stack:
        found = [Server(s.label, s.url, args.token, args.timeout, s.pid,
                        raw=not args.http_client)
                 for s in started]
        if args.static_floor:
            found.append(static_floor(stack, found[0], args))
        print_servers(found, args)
        for name in names:
            SCENARIOS[name][1](found, args)


#: The label of the ``--static-floor`` server.
STATIC = 'static'


def static_floor(stack, ours, args):
    """A Server answering ours' perfload answer, bytes for bytes, from
    the smallest WSGI application under the same gunicorn (two sync
    workers): what receiving the request and sending that answer cost
    gunicorn and the kernel, without any of ours' work."""
    resp, _seconds = ours.get(perfload_shape.path())
    if resp.status != 200:
        raise RuntimeError('ours answered %s' % resp.status)
    tmp = stack.enter_context(
        tempfile.TemporaryDirectory(prefix='static-floor.'))
    answer = os.path.join(tmp, 'answer.json')
    with open(answer, 'wb') as out:
        out.write(resp.body)
    url, pid = servers_kit.start_application(
        stack, tmp, STATIC, hello_app.APPLICATION,
        ['--timeout', str(int(args.timeout + 5))], 2,
        environment={hello_app.BODY_FILE_ENV: answer})
    return Server(STATIC, url, args.token, args.timeout, pid,
                  raw=not args.http_client)


def print_servers(servers, args):
    if len(servers) > 1:
        print('servers: %s; %d interleaved rounds of %d requests, c%d' % (
            ', '.join('%s=%s' % (s.label, s.url) for s in servers),
            args.rounds, args.requests, args.concurrency), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', action='append', metavar='[LABEL=]URL',
                        help='a server to measure; repeat to compare '
                        'servers (the first is the reference), e.g. '
                        '--url ours=http://127.0.0.1:8300 --url '
                        'upstream=http://127.0.0.1:8301 (default %s)'
                        % DEFAULT_URL)
    parser.add_argument('--token', default='admin')
    parser.add_argument('--scenario', action='append',
                        choices=list(SCENARIOS),
                        help='default: %s' % ', '.join(DEFAULT_SCENARIOS))
    parser.add_argument('--providers', type=int, default=1000,
                        help='flat: number of compute nodes (e.g. 10000)')
    parser.add_argument('--trees', type=int, default=1000,
                        help='nested: number of compute node trees')
    parser.add_argument('--devices', default='8,21',
                        help='wide: comma-separated device counts')
    parser.add_argument('--requests', type=int, default=20,
                        help='sequential requests per server per round')
    parser.add_argument('--warm-up', type=int, default=10,
                        help='untimed requests to each server before a '
                        'measurement (not for wide)')
    parser.add_argument('--rounds', type=int,
                        help='interleaved rounds per measurement (default '
                        '3 with several --url, 1 with one)')
    parser.add_argument('--concurrency', type=int, default=10)
    parser.add_argument('--threads', type=int, default=8,
                        help='parallel loaders')
    parser.add_argument('--timeout', type=float, default=300.0,
                        help='client timeout in seconds')
    parser.add_argument('--claim-between', action='store_true',
                        help='flat, nested: also time the query with a '
                        'claim (PUT /allocations of its first candidate) '
                        'before each request, as a scheduler sends them')
    parser.add_argument('--no-load', action='store_true',
                        help='measure data loaded by an earlier run')
    parser.add_argument('--static-floor', action='store_true',
                        help='with --side-by-side --scenario perfload: '
                        'also measure a static application answering '
                        'ours\' perfload answer under the same gunicorn')
    parser.add_argument('--decode-between', action='store_true',
                        help='decode each answer before the next request '
                        '(as before 2026-12-07 22:00), not after the round: '
                        'the client\'s work then runs between two of the '
                        'server\'s requests')
    parser.add_argument('--http-client', action='store_true',
                        help='time GETs with http.client, as before '
                        '2026-12-07, instead of a bare socket')
    parser.add_argument('--side-by-side', action='store_true',
                        help='start ours and upstream (on the database '
                        'PLACEMENT_TEST_DB_URL names, else SQLite files) '
                        'instead of --url, and report their CPU')
    args = parser.parse_args(argv)
    if args.side_by_side and (args.url or args.no_load):
        parser.error('--side-by-side starts and loads its own servers: '
                     'no --url or --no-load')
    if args.static_floor and not (args.side_by_side
                                  and args.scenario == ['perfload']):
        parser.error('--static-floor serves the perfload answer: only '
                     'with --side-by-side --scenario perfload')
    try:
        urls = labels.label_urls(args.url or [DEFAULT_URL])
    except ValueError as exc:
        parser.error(str(exc))
    if args.rounds is None:
        args.rounds = 3 if len(urls) > 1 or args.side_by_side else 1
    if args.rounds < 1 or args.requests < 1:
        parser.error('--rounds and --requests must be at least 1')
    args.devices = [int(d) for d in args.devices.split(',')]
    if args.side_by_side:
        return side_by_side(args)
    found = [Server(label, url, args.token, args.timeout,
                    raw=not args.http_client) for label, url in urls]
    print_servers(found, args)
    run(found, args)


if __name__ == '__main__':
    sys.exit(main())
