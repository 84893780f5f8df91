"""Benchmark GET /allocation_candidates against a running server.

Loads providers over the API (microversion 1.39, parallel threads) and
prints medians. Run it from the checkout root against a fresh server
(empty database), e.g.::

    placement-api --port 8000 &      # or gunicorn -w 2 ... (SQLite, noauth2)
    python3 -m benchmarks.allocation_candidates \
        --url http://127.0.0.1:8000 --scenario flat --providers 1000

Scenarios (``--scenario``, repeatable; default all three):

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
wide
    For each of ``--devices`` (default 8,21) one host with that many
    single-unit devices of its own custom class; 8 groups of one unit,
    ``group_policy=isolate&limit=1000``, one request each with a
    ``--timeout`` (default 300 s).

Each measurement prints the median of ``--requests`` sequential requests
and the throughput of the same request from ``--concurrency`` clients.
Provider and aggregate uuids are derived from their names, so
``--no-load`` measures data an earlier run loaded (same sizes) without
writing anything. Standard library only.
"""

import argparse
import concurrent.futures
import statistics
import sys
import time
import uuid

from benchmarks import placement_http

NS = uuid.UUID('6b1e3c2a-4f59-4d0e-9a55-0b3d1c1e7a10')


def ident(name):
    return str(uuid.uuid5(NS, name))


class Client:
    """Requests over a fresh connection each (safe to share by threads)."""

    def __init__(self, url, token, timeout):
        self.url, self.token, self.timeout = url, token, timeout

    def call(self, method, path, body=None, timeout=None):
        """Return (status, decoded JSON or None); status None and the
        failure text when no answer came (e.g. a timeout)."""
        client = placement_http.Client(self.url, self.token,
                                       timeout or self.timeout)
        try:
            resp = client.request(method, path, body)
        finally:
            client.close()
        return resp.status, (resp.body if resp.status else resp.failure)

    def write(self, method, path, body=None, ok=(200, 201, 204), tries=20):
        """Write, retrying the transient failures of a busy server."""
        for attempt in range(tries):
            status, data = self.call(method, path, body)
            if status in ok:
                return data
            if status in (500, 503, 409) and attempt + 1 < tries:
                time.sleep(0.05 * (attempt + 1))
                if status == 409 and isinstance(body, dict) and \
                        'resource_provider_generation' in body:
                    rp = path.split('/')[2]
                    body = dict(body, resource_provider_generation=self.call(
                        'GET', '/resource_providers/' + rp)[1]['generation'])
                continue
            raise RuntimeError('%s %s -> %s %s' % (method, path, status, data))


def create_provider(client, name, inventories, parent=None, traits=(),
                    aggregates=()):
    rp = ident(name)
    body = {'name': name, 'uuid': rp}
    if parent:
        body['parent_provider_uuid'] = ident(parent)
    client.write('POST', '/resource_providers', body)
    path = '/resource_providers/' + rp
    gen = 0
    if inventories:
        gen = client.write('PUT', path + '/inventories', {
            'resource_provider_generation': gen,
            'inventories': inventories})['resource_provider_generation']
    if traits:
        gen = client.write('PUT', path + '/traits', {
            'resource_provider_generation': gen,
            'traits': list(traits)})['resource_provider_generation']
    if aggregates:
        client.write('PUT', path + '/aggregates', {
            'resource_provider_generation': gen,
            'aggregates': list(aggregates)})


def load(client, jobs, threads, label):
    """Run provider-creating jobs; each job is a list run in order."""
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(lambda steps: [create_provider(client, *s[0],
                                                              **s[1])
                                              for s in steps], job)
                   for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            future.result()
    print('%s: loaded %d providers in %.1f s' % (
        label, sum(len(j) for j in jobs), time.monotonic() - start))


def measure(client, label, query, requests, concurrency, timeout=None):
    path = '/allocation_candidates?' + query
    times, count = [], None
    for _ in range(requests):
        start = time.monotonic()
        status, data = client.call('GET', path, timeout=timeout)
        if status is None:
            print('%-28s no answer after %.1f s (%s)' % (
                label, time.monotonic() - start, data))
            return
        times.append((time.monotonic() - start) * 1000)
        if status != 200:
            print('%-28s HTTP %s: %s' % (label, status, data))
            return
        count = len(data['allocation_requests'])
    line = '%-28s candidates %6d  median %8.1f ms  (min %.1f, max %.1f)' % (
        label, count, statistics.median(times), min(times), max(times))
    if concurrency > 1:
        total = concurrency * max(1, requests // 4)
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            statuses = list(pool.map(
                lambda _: client.call('GET', path, timeout=timeout)[0],
                range(total)))
        elapsed = time.monotonic() - start
        line += '  c%d %.1f req/s' % (concurrency, total / elapsed)
        bad = len([s for s in statuses if s != 200])
        if bad:
            line += ' (%d non-200)' % bad
    print(line)


def flat(client, args):
    n = args.providers
    aggs = [ident('flat-agg-%d' % i) for i in range(3)]
    if not args.no_load:
        jobs = []
        for i in range(n):
            traits = ['HW_CPU_X86_AVX2']
            jobs.append([(('flat-%d-cn%d' % (n, i), {
                'VCPU': {'total': 32, 'allocation_ratio': 16.0},
                'MEMORY_MB': {'total': 131072},
                'DISK_GB': {'total': 2000}}),
                dict(traits=traits, aggregates=[aggs[i % 3]]))])
        load(client, jobs, args.threads, 'flat-%d' % n)
    query = ('resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
             '&required=HW_CPU_X86_AVX2' % aggs[0])
    measure(client, 'flat-%d' % n, query, args.requests, args.concurrency)
    measure(client, 'flat-%d limit=1000' % n, query + '&limit=1000',
            args.requests, args.concurrency)


def nested(client, args):
    t = args.trees
    if not args.no_load:
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
        load(client, jobs, args.threads, 'nested-%d' % t)
    query = ('resources_COMPUTE=VCPU:1,MEMORY_MB:256'
             '&resources_NET=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000'
             '&same_subtree=_COMPUTE,_NET&group_policy=none')
    measure(client, 'nested-%d' % t, query, args.requests, args.concurrency)


def wide(client, args):
    for d in args.devices:
        rc = 'CUSTOM_WIDE_%d' % d
        if not args.no_load:
            client.write('PUT', '/resource_classes/' + rc, ok=(201, 204))
            host = 'wide-%d-host' % d
            load(client, [[((host, {}), {})]], 1, 'wide-%d host' % d)
            load(client, [[(('%s-dev%d' % (host, i), {rc: {'total': 1}}),
                            dict(parent=host))] for i in range(d)],
                 args.threads, 'wide-%d devices' % d)
        query = '&'.join('resources%d=%s:1' % (g, rc) for g in range(1, 9))
        query += '&group_policy=isolate&limit=1000'
        measure(client, 'wide-%d isolate limit=1000' % d, query, 1, 1,
                timeout=args.timeout)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', default='http://127.0.0.1:8000')
    parser.add_argument('--token', default='admin')
    parser.add_argument('--scenario', action='append',
                        choices=['flat', 'nested', 'wide'])
    parser.add_argument('--providers', type=int, default=1000,
                        help='flat: number of compute nodes (e.g. 10000)')
    parser.add_argument('--trees', type=int, default=1000,
                        help='nested: number of compute node trees')
    parser.add_argument('--devices', default='8,21',
                        help='wide: comma-separated device counts')
    parser.add_argument('--requests', type=int, default=20,
                        help='sequential requests per measurement')
    parser.add_argument('--concurrency', type=int, default=10)
    parser.add_argument('--threads', type=int, default=8,
                        help='parallel loaders')
    parser.add_argument('--timeout', type=float, default=300.0,
                        help='client timeout in seconds')
    parser.add_argument('--no-load', action='store_true',
                        help='measure data loaded by an earlier run')
    args = parser.parse_args(argv)
    args.devices = [int(d) for d in args.devices.split(',')]
    client = Client(args.url, args.token, args.timeout)
    for scenario in args.scenario or ['flat', 'nested', 'wide']:
        globals()[scenario](client, args)


if __name__ == '__main__':
    sys.exit(main())
