"""What counting requests costs, measured in one process.

On a busy machine timings of separate servers drift more than the cost
of the metrics middleware; in one process the same request can be sent
alternately to an application with ``[metrics] enabled`` True and False
on the same database, thousands of times, and the medians compared::

    python3 -m benchmarks.metrics_overhead --requests 2000

``--providers N`` adds N flat compute nodes (bulk inserts, as
``benchmarks.toolkit.cloud_rows`` writes them) and times a candidates query
over them, the flat scenario of ``benchmarks.allocation_candidates``
without its trait. It also prints what the middleware alone costs per
request around an application that does nothing.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

import webob

from benchmarks.toolkit import cloud_rows
from benchmarks.toolkit import inprocess
from placement.middleware import request_metrics
from placement.observability import metrics
from placement.web import route_table


HEADERS = {'x-auth-token': 'admin',
           'openstack-api-version': 'placement latest'}


def _request(app, path):
    return inprocess.timed_get(app, path, headers=HEADERS)[0]


def _setup(app):
    rp = str(uuid.uuid4())
    for method, path, body in (
            ('POST', '/resource_providers', {'name': 'bench', 'uuid': rp}),
            ('PUT', '/resource_providers/%s/inventories' % rp,
             {'resource_provider_generation': 0,
              'inventories': {'VCPU': {'total': 8}}})):
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = 'admin'
        req.headers['openstack-api-version'] = 'placement latest'
        req.json_body = body
        req.content_type = 'application/json'
        assert req.get_response(app).status_int == 200
    return rp


def _first_aggregate(db):
    import sqlalchemy as sa
    from placement.db import tables
    with db.transaction(write=False) as conn:
        return conn.execute(sa.select(tables.placement_aggregates.c.uuid)
                            .order_by(tables.placement_aggregates.c.id)
                            ).scalar()


def middleware_alone(requests):
    def nothing(environ, start_response):
        start_response('200 OK', [('content-length', '0')])
        return [b'']

    wrapped = request_metrics.RequestMetrics(nothing, metrics.configure(),
                                             route_table.ROUTES)
    environ = {'REQUEST_METHOD': 'GET',
               'PATH_INFO': '/resource_providers/%s/inventories'
               % uuid.uuid4()}
    for app, name in ((nothing, 'bare'), (wrapped, 'metrics')):
        start = time.perf_counter()
        for _ in range(requests):
            app(dict(environ), lambda status, headers, exc=None: None)
        per = (time.perf_counter() - start) / requests
        print('middleware alone: %-8s %.1f us per request' % (
            name, per * 1e6), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--requests', type=int, default=2000)
    parser.add_argument('--providers', type=int, default=0)
    args = parser.parse_args(argv)
    fd, path = tempfile.mkstemp(suffix='.sqlite')
    os.close(fd)
    try:
        db = inprocess.database('sqlite:///' + path)
        on = inprocess.application(db)
        off = inprocess.application(db, metrics__enabled=False)
        paths = ['/allocation_candidates?resources=VCPU:1']
        if args.providers:
            cloud_rows.fill_compute_nodes(db, args.providers, 3)
            paths = ['/allocation_candidates?resources=VCPU:1,DISK_GB:10,'
                     'MEMORY_MB:256&member_of=%s' % _first_aggregate(db)]
        rp = _setup(on)
        for path_ in ['/', '/resource_providers/' + rp,
                      '/resource_providers/%s/inventories' % rp] + paths:
            times = {'on': [], 'off': []}
            for _ in range(args.requests):
                times['on'].append(_request(on, path_))
                times['off'].append(_request(off, path_))
            med_on = statistics.median(times['on'])
            med_off = statistics.median(times['off'])
            print('GET %-50s on %.3f ms  off %.3f ms  overhead %+.1f %%'
                  % (path_[:50], med_on * 1000, med_off * 1000,
                     (med_on / med_off - 1) * 100), flush=True)
        middleware_alone(args.requests * 5)
        db.dispose()
    finally:
        for suffix in ('', '-wal', '-shm'):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)


if __name__ == '__main__':
    sys.exit(main())
