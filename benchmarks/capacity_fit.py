"""Time GET /capacity/fit, the named-flavor part of GET /metrics, and
the os-capacity way of answering the same question, side by side with
upstream.

Clouds are written with bulk SQL (``benchmarks.toolkit.cloud_rows``: flat
compute nodes with VCPU, MEMORY_MB and DISK_GB, or nested trees of two
NUMA nodes with two SR-IOV PFs each), with an allocation on every other
compute node (or NUMA node and PF), into a temporary SQLite file; or
(``sharing``) flat compute nodes without disk, fifty to an aggregate
with a sharing DISK_GB pool that holds fewer instances than they do,
every tenth node in the next aggregate too (so that every pool is
linked to every other one through the trees able to use both)::

    # /capacity/fit through the WSGI stack in this process: the query's
    # first answer (index already loaded), again with nothing changed,
    # and again after one allocation write before each request
    python3 -m benchmarks.capacity_fit fit --sizes 1000,10000,100000
    python3 -m benchmarks.capacity_fit fit --sizes 10000 --scenario sharing

    # 50 named flavors at 10,000 providers: the fit part of a /metrics
    # refresh (first in the process, then with writes between), and a
    # cached scrape with and without the flavors
    python3 -m benchmarks.capacity_fit metrics --flavors 50 \\
        --providers 10000

    # what os-capacity sends per scrape (one unlimited candidates call
    # per flavor, the provider list, and inventories, usages and
    # aggregates of every provider) against upstream and ours (gunicorn,
    # two workers each), and one /capacity/fit per flavor on ours
    python3 -m benchmarks.capacity_fit os-capacity --providers 1000 \\
        --upstream-venv /tmp/upvenv

Every figure is a median over ``--repeat`` requests with its lowest and
highest; run it on an otherwise idle machine or compare ratios from one
run.
"""

import argparse
import contextlib
import datetime
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import cloud_rows
from benchmarks.toolkit import inprocess
from benchmarks.toolkit import servers as toolkit_servers
from placement import context
from placement.objects import resource_class
from placement.objects import trait
from placement.objects.candidates import fit as capacity_fit
from placement.tests import fixtures
from placement.tests import placement_http
from placement.web import capacity_flavors
from placement.web import responses

FLAT_FLAVOR = ('resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40'
               '&required=!COMPUTE_STATUS_DISABLED')
NESTED_FLAVOR = ('resources_COMPUTE=VCPU:2,MEMORY_MB:4096'
                 '&resources_NET=SRIOV_NET_VF:1'
                 '&same_subtree=_COMPUTE,_NET&group_policy=none'
                 '&root_required=!COMPUTE_STATUS_DISABLED')
#: Used on every other compute node (flat) or NUMA node and PF (nested).
FLAT_USED = {'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 80}
SHARING_USED = {'VCPU': 8, 'MEMORY_MB': 16384}
#: Compute nodes per aggregate (and its pool) of the sharing scenario.
SHARING_AGGREGATE = 50
NESTED_USED = {'VCPU': 4, 'MEMORY_MB': 8192, 'SRIOV_NET_VF': 1}


def flavors(count):
    """``count`` nova-like flavors, ``(name, query)``."""
    found = []
    for i in range(count):
        vcpu = 1 << (i % 5)
        found.append(('f%02d.%dc' % (i, vcpu), 'resources=VCPU:%d,MEMORY_MB:'
                      '%d,DISK_GB:%d&required=!COMPUTE_STATUS_DISABLED' % (
                          vcpu, 1024 * vcpu * (1 + i % 3), 10 * (1 + i % 7))))
    return found


# -- a cloud in a database ----------------------------------------------------

def new_database(path):
    """A migrated SQLite database at ``path`` with the standard names
    (the bulk loader needs their ids)."""
    db = inprocess.database('sqlite:///' + path)
    ctx = context.AdminContext(db)
    resource_class.sync_standard(ctx)
    trait.sync_standard(ctx)
    return db


def sharing_providers(n):
    """Rows as ``cloud_rows.flat_providers`` gives them: ``n`` providers,
    one in ``SHARING_AGGREGATE + 1`` a DISK_GB pool shared with the
    compute nodes of its aggregate; every tenth node also in the next
    aggregate. A pool holds 40,000 GB (a thousand 40 GB disks), its
    nodes 32 instances of FLAT_FLAVOR each, half of them 28."""
    pools = max(n // (SHARING_AGGREGATE + 1), 1)
    for j in range(pools):
        yield ('share-%d-pool%d' % (n, j), None,
               [cloud_rows._inventory('DISK_GB', 40000)],
               ['MISC_SHARES_VIA_AGGREGATE'], ['share-%d-agg-%d' % (n, j)])
    for i in range(n - pools):
        j = i // SHARING_AGGREGATE % pools
        aggregates = ['share-%d-agg-%d' % (n, j)]
        if i % 10 == 0 and pools > 1:
            aggregates.append('share-%d-agg-%d' % (n, (j + 1) % pools))
        yield ('share-%d-cn%d' % (n, i), None,
               [cloud_rows._inventory('VCPU', 32, 16.0),
                cloud_rows._inventory('MEMORY_MB', 131072)],
               ['HW_CPU_X86_AVX2'], aggregates)


def load(url, scenario, size):
    """Write ``size`` providers (flat, sharing) or trees of 7 (nested)
    and their usage; return the uuids of the providers allocations may
    go to."""
    rows = list(cloud_rows.flat_providers(size) if scenario == 'flat'
                else sharing_providers(size) if scenario == 'sharing'
                else cloud_rows.nested_providers(size // 7))
    cloud_rows.bulk_load(url, rows)
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    meta.reflect(engine, only=['resource_providers', 'resource_classes',
                               'consumers', 'projects', 'users',
                               'allocations'])
    t = meta.tables
    now = datetime.datetime.utcnow().replace(microsecond=0)
    if scenario == 'flat':
        targets = [name for name, *_ in rows][::2]
        used = [(name, FLAT_USED) for name in targets]
    elif scenario == 'sharing':
        targets = [name for name, *_ in rows if '-cn' in name][::2]
        used = [(name, SHARING_USED) for name in targets]
    else:
        numas = [name for name, parent, *_ in rows if name.endswith('numa0')]
        targets = numas[::2]
        used = []
        for numa in targets:
            used.append((numa, {k: NESTED_USED[k]
                                for k in ('VCPU', 'MEMORY_MB')}))
            used.append((numa + '-dev0', {'SRIOV_NET_VF': 1}))
    with engine.begin() as conn:
        ids = dict(conn.execute(sa.select(
            t['resource_providers'].c.uuid,
            t['resource_providers'].c.id)).all())
        classes = dict(conn.execute(sa.select(
            t['resource_classes'].c.name,
            t['resource_classes'].c.id)).all())
        conn.execute(t['projects'].insert(), [
            {'external_id': 'bench', 'created_at': now}])
        conn.execute(t['users'].insert(), [
            {'external_id': 'bench', 'created_at': now}])
        project = conn.execute(sa.select(t['projects'].c.id)).scalar()
        user = conn.execute(sa.select(t['users'].c.id)).scalar()
        consumers, allocations = [], []
        for name, amounts in used:
            consumer = str(uuid.uuid4())
            consumers.append({'uuid': consumer, 'project_id': project,
                              'user_id': user, 'generation': 1,
                              'created_at': now})
            allocations += [
                {'resource_provider_id': ids[cloud_api.ident(name)],
                 'consumer_id': consumer, 'resource_class_id': classes[rc],
                 'used': amount, 'created_at': now}
                for rc, amount in amounts.items()]
        for chunk in range(0, len(consumers), 20000):
            conn.execute(t['consumers'].insert(),
                         consumers[chunk:chunk + 20000])
        for chunk in range(0, len(allocations), 20000):
            conn.execute(t['allocations'].insert(),
                         allocations[chunk:chunk + 20000])
    engine.dispose()
    if scenario != 'nested':
        return [(cloud_api.ident(name), {'VCPU': 1}) for name in targets]
    return [(cloud_api.ident(name), {'VCPU': 1}) for name in numas]


# -- timing -------------------------------------------------------------------

def write(app, provider, amounts):
    resp = fixtures.call_as_admin(
        app, 'PUT', '/allocations/%s' % uuid.uuid4(),
        {'allocations': {provider: {'resources': amounts}},
         'project_id': 'bench', 'user_id': 'bench',
         'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    assert resp.status_int == 204, resp.text[:300]


def report(label, times, extra=''):
    print('%-44s median %8.1f ms  (min %.1f, max %.1f; %d)%s' % (
        label, statistics.median(times) * 1000, min(times) * 1000,
        max(times) * 1000, len(times), extra), flush=True)


@contextlib.contextmanager
def scratch():
    directory = tempfile.mkdtemp(prefix='bench-fit.')
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# -- the three benchmarks -----------------------------------------------------

def bench_fit(args):
    for size in args.sizes:
        for scenario in args.scenario:
            with scratch() as directory:
                path = os.path.join(directory, 'fit.sqlite')
                db = new_database(path)
                start = time.perf_counter()
                targets = load('sqlite:///' + path, scenario, size)
                loaded = time.perf_counter() - start
                app = inprocess.application(db)
                query = (NESTED_FLAVOR if scenario == 'nested'
                         else FLAT_FLAVOR)
                index_load, _ = inprocess.timed_get(
                    app, '/capacity/fit?resources=VCPU:1')
                name = '%s-%d' % (scenario, size)
                print('%s: written in %.1f s; index load %.2f s' % (
                    name, loaded, index_load), flush=True)
                first, resp = inprocess.timed_get(
                    app, '/capacity/fit?' + query)
                fit = resp.json['fit']
                report(name + ' fit, first', [first],
                       '  total %d over %d trees%s' % (
                           fit['total'], len(fit['by_root']),
                           '' if fit.get('exact', True) else ' (at least)'))
                report(name + ' fit, unchanged', [
                    inprocess.timed_get(app, '/capacity/fit?' + query)[0]
                    for _ in range(args.repeat)])
                rng = random.Random(size)
                times = []
                for _ in range(args.repeat):
                    write(app, *rng.choice(targets))
                    times.append(inprocess.timed_get(
                        app, '/capacity/fit?' + query)[0])
                report(name + ' fit, after one write', times)
                db.dispose()


def bench_metrics(args):
    named = flavors(args.flavors)
    lines = ['%s = %s' % pair for pair in named]
    with scratch() as directory:
        path = os.path.join(directory, 'metrics.sqlite')
        db = new_database(path)
        targets = load('sqlite:///' + path, 'flat', args.providers)
        conf = fixtures.new_conf(capacity__flavors=lines,
                                 metrics__capacity_refresh_interval=3600)
        app = inprocess.application(
            db, capacity__flavors=lines,
            metrics__capacity_refresh_interval=3600)
        plain = inprocess.application(
            db, metrics__capacity_refresh_interval=3600)
        ctx = context.AdminContext(db, conf)
        requests = capacity_flavors.named(conf)
        # The index, loaded.
        inprocess.timed_get(app, '/capacity/fit?resources=VCPU:1')
        name = 'flat-%d, %d flavors' % (args.providers, len(requests))
        start = time.perf_counter()
        # As GET /metrics runs it: the collector paused.
        with responses.collector_paused():
            fits = capacity_fit.flavor_fits(ctx, requests, 0)
        report(name + ': fit part, first in process',
               [time.perf_counter() - start],
               '  (%s: %d more)' % (fits[0].name, fits[0].total))
        rng = random.Random(1)
        times = []
        for _ in range(args.repeat):
            for _ in range(args.writes):
                write(app, *rng.choice(targets))
            start = time.perf_counter()
            with responses.collector_paused():
                capacity_fit.flavor_fits(ctx, requests, 0)
            times.append(time.perf_counter() - start)
        report(name + ': fit part, %d writes between' % args.writes, times)
        first, _ = inprocess.timed_get(app, '/metrics')
        report(name + ': /metrics, cold', [first])
        report(name + ': /metrics, cached', [
            inprocess.timed_get(app, '/metrics')[0]
            for _ in range(args.repeat)])
        inprocess.timed_get(plain, '/metrics')
        report('flat-%d, no flavors: /metrics, cached' % args.providers, [
            inprocess.timed_get(plain, '/metrics')[0]
            for _ in range(args.repeat)])
        db.dispose()


def os_capacity_scrape(client, named):
    """The requests os-capacity sends per scrape; the answer: the
    candidates each flavor has (what it reports, capped or not)."""
    found = {}
    for name, query in named:
        body = client.checked('GET', '/allocation_candidates?' + query)
        found[name] = len(body['allocation_requests'])
    providers = client.checked('GET', '/resource_providers')
    for provider in providers['resource_providers']:
        base = '/resource_providers/%s' % provider['uuid']
        for part in ('/inventories', '/usages', '/aggregates'):
            client.checked('GET', base + part)
    return found


def bench_os_capacity(args):
    named = flavors(args.flavors)
    with scratch() as directory:
        servers = toolkit_servers.on_sqlite_files(
            directory, args.upstream_venv, timeout=args.timeout)
        try:
            for server in servers:
                server.create_schema()
                load(server.db_url, 'flat', args.providers)
                server.start(120)
                server.wait('/allocation_candidates?' + named[0][1],
                            args.timeout)
            for round_ in range(args.rounds):
                for server in servers:
                    client = placement_http.Client(server.url,
                                                   timeout=args.timeout)
                    start = time.perf_counter()
                    found = os_capacity_scrape(client, named)
                    elapsed = time.perf_counter() - start
                    print('round %d %-8s os-capacity scrape (%d flavors, '
                          '%d providers): %.2f s; candidates of %s: %d' % (
                              round_ + 1, server.label, len(named),
                              args.providers, elapsed, named[0][0],
                              found[named[0][0]]), flush=True)
                    client.close()
                client = placement_http.Client(servers[0].url,
                                               timeout=args.timeout)
                start = time.perf_counter()
                totals = [client.checked('GET', '/capacity/fit?' + query)[
                    'fit']['total'] for _, query in named]
                print('round %d ours     /capacity/fit x %d: %.3f s; %s: '
                      '%d more fit' % (round_ + 1, len(named),
                                       time.perf_counter() - start,
                                       named[0][0], totals[0]), flush=True)
                client.close()
        finally:
            for server in servers:
                server.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='what', required=True)
    fit = sub.add_parser('fit')
    fit.add_argument('--sizes', default='1000,10000,100000',
                     type=lambda v: [int(s) for s in v.split(',')])
    fit.add_argument('--scenario', action='append',
                     choices=['flat', 'nested', 'sharing'])
    fit.add_argument('--repeat', type=int, default=9)
    metrics = sub.add_parser('metrics')
    metrics.add_argument('--flavors', type=int, default=50)
    metrics.add_argument('--providers', type=int, default=10000)
    metrics.add_argument('--writes', type=int, default=20,
                         help='allocation writes between refreshes')
    metrics.add_argument('--repeat', type=int, default=5)
    oscap = sub.add_parser('os-capacity')
    oscap.add_argument('--providers', type=int, default=1000)
    oscap.add_argument('--flavors', type=int, default=5)
    oscap.add_argument('--rounds', type=int, default=3)
    oscap.add_argument('--timeout', type=float, default=120.0)
    oscap.add_argument('--upstream-venv',
                       help='virtualenv with openstack-placement 16.0.0 '
                       'and gunicorn (e.g. /tmp/upvenv)')
    args = parser.parse_args(argv)
    if args.what == 'fit':
        args.scenario = args.scenario or ['flat', 'nested']
        bench_fit(args)
    elif args.what == 'metrics':
        bench_metrics(args)
    else:
        bench_os_capacity(args)


if __name__ == '__main__':
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
