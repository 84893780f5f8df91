"""Solo service time of each kind of request of the cloud mix, ours and
upstream Placement 16.0.0 side by side.

"Solo": one client sends the requests one after the other, so that each
request has the server (one gunicorn sync worker) and the database to
itself, and what is measured is what the request costs, not how it
queues. Both servers get the same small flat cloud through their APIs
(``benchmarks.toolkit.mix_requests.Cloud``: nodes, aggregates with a sharing
provider, one instance per node) and the same requests
(``mix_requests.requests``: the refresh GETs nova-compute sends, the
inventory PUT, allocation PUT/POST/DELETE, usages), in ``--rounds``
rounds interleaved ours, upstream, ours...::

    tools/with-postgresql.sh .venv/bin/python -m benchmarks.solo_service
    tools/with-mysql.sh .venv/bin/python -m benchmarks.solo_service

Per kind of request (method, path, query parameter names) it prints the
median over the rounds of the service CPU per request, the worker's
thread CPU from gunicorn's ``pre_request`` to ``post_request`` hooks
(``benchmarks/toolkit/endpoint_cpu.py``), and of the client's median wall time
per request, each with the spread (lowest and highest round) and
upstream's figure divided by ours. On MySQL/MariaDB it also prints the
statements each server sent per request, read from the server's
``Questions`` counter around each request.
"""

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
import urllib.parse

import sqlalchemy as sa

from benchmarks.toolkit import endpoint_cpu
from benchmarks.toolkit import mix_requests
from placement.tests import fixtures
from placement.tests import placement_http


class Questions:
    """Statements a MySQL/MariaDB server received from its clients
    (its ``Questions`` counter, which counts this reading too)."""

    def __init__(self, url):
        self.engine = sa.create_engine(url, pool_size=1)
        self.conn = self.engine.connect()

    def __call__(self):
        return int(self.conn.exec_driver_sql(
            "SHOW GLOBAL STATUS LIKE 'Questions'").one()[1])

    def close(self):
        self.conn.close()
        self.engine.dispose()


def endpoint(method, path):
    """The kind of request ``endpoint_cpu`` files it under."""
    parts = urllib.parse.urlsplit(path)
    return endpoint_cpu.kind(method, parts.path, parts.query)


#: What nova's quota check asks ``GET /usages`` at (upstream answers 500
#: on PostgreSQL from 1.38, where usages are grouped by consumer type).
USAGES_MICROVERSION = '1.9'


def one_round(cloud, clients, pid, first, count, questions=None):
    """{kind: (CPU seconds per request, [wall seconds], [statements])}
    of ``count`` rounds of the mix's requests from index ``first``
    (``clients``: the client at 1.39, then the one for usages)."""
    client, usages = clients
    directory = os.environ[endpoint_cpu.ENV]
    before = endpoint_cpu.snapshot(directory, pid)
    walls = collections.defaultdict(list)
    sent = collections.defaultdict(list)
    for index in range(first, first + count):
        for _label, method, path, body in mix_requests.requests(cloud,
                                                               index):
            asked = questions() if questions else 0
            start = time.perf_counter()
            status, answer = mix_requests.call(
                usages if path.startswith('/usages') else client, method,
                path, body)
            walls[endpoint(method, path)].append(
                time.perf_counter() - start)
            if questions:
                # Less the reading itself.
                sent[endpoint(method, path)].append(
                    questions() - asked - 1)
            if status >= 300:
                raise RuntimeError('%s %s -> %s %s' % (
                    method, path, status, answer))
    # The worker writes its totals after a request at most every
    # WRITE_EVERY seconds.
    time.sleep(endpoint_cpu.WRITE_EVERY * 2)
    client.request('GET', '/')
    spent = endpoint_cpu.difference(endpoint_cpu.snapshot(directory, pid),
                                    before)
    return {kind: (spent[kind][1] / spent[kind][0], walls[kind],
                   sent[kind])
            for kind in walls if kind in spent}


def measure(started, clouds, rounds, count, questions=None):
    """{label: {kind: [(CPU s/request, median wall s, median
    statements)] per round}}."""
    found = {served.label: collections.defaultdict(list)
             for served in started}
    clients = {served.label: (
        placement_http.Client(served.url, timeout=120),
        placement_http.Client(served.url, timeout=120,
                              microversion=USAGES_MICROVERSION))
        for served in started}
    try:
        for number in range(rounds + 1):
            for served in started:
                got = one_round(clouds[served.label],
                                clients[served.label], served.pid,
                                number * count, count, questions)
                if number == 0:
                    continue  # warm-up: caches, indexes, the consumer type
                for kind, (cpu, walls, sent) in got.items():
                    found[served.label][kind].append((
                        cpu, statistics.median(walls),
                        statistics.median(sent) if sent else None))
    finally:
        for pair in clients.values():
            for client in pair:
                client.close()
    return found


def _spread(values, scale=1000.0):
    values = [v * scale for v in values]
    return '%7.2f [%.2f-%.2f]' % (statistics.median(values), min(values),
                                  max(values))


def report(found):
    labels = list(found)
    ours = found[labels[0]]
    lines = []
    for column, title in ((0, 'service CPU ms per request'),
                          (1, 'wall ms per request (client)'),
                          (2, 'statements per request')):
        if column == 2 and all(sample[2] is None for samples in ours.values()
                               for sample in samples):
            continue
        lines.append('')
        lines.append('%-52s %s' % (title, '  '.join(
            '%-22s' % label for label in labels) + '  ratio'))
        for kind in sorted(ours):
            cells, medians = [], []
            for label in labels:
                values = [s[column] for s in found[label].get(kind, ())]
                if not values:
                    cells.append('%-22s' % '-')
                    medians.append(None)
                    continue
                cells.append('%-22s' % _spread(
                    values, 1 if column == 2 else 1000.0))
                medians.append(statistics.median(values))
            ratio = ('%6.1fx' % (medians[-1] / medians[0])
                     if len(medians) > 1 and medians[0] and medians[-1]
                     else '')
            lines.append('%-52s %s %s' % (kind[:52], '  '.join(cells),
                                          ratio))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--nodes', type=int, default=200)
    parser.add_argument('--aggregates', type=int, default=10)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--per-round', type=int, default=20,
                        help='rounds of the mix per server and round')
    parser.add_argument('--ours-only', action='store_true')
    args = parser.parse_args(argv)
    from benchmarks.toolkit import servers
    clouds = {}

    def prepare(label, url):
        client = placement_http.Client(url, timeout=120)
        start = time.monotonic()
        clouds[label] = mix_requests.Cloud(client, args.nodes,
                                           args.aggregates)
        print('%s: %d nodes loaded in %.0f s' % (
            label, args.nodes, time.monotonic() - start), flush=True)

    server = fixtures.server_url()
    questions = None
    if server and sa.engine.make_url(server).get_backend_name() == 'mysql':
        questions = Questions(server)
    with tempfile.TemporaryDirectory(prefix='solo-service.') as tmp:
        os.environ[endpoint_cpu.ENV] = tmp
        try:
            with servers.side_by_side(
                    1, not args.ours_only, prepare=prepare, copy=False,
                    gunicorn_args=['-c', os.path.abspath(
                        endpoint_cpu.__file__)]) as started:
                found = measure(started, clouds, args.rounds,
                                args.per_round, questions)
        finally:
            os.environ.pop(endpoint_cpu.ENV, None)
            if questions:
                questions.close()
    print('%s, %d nodes, 1 sync worker each, %d rounds of %d' % (
        fixtures.backend_name(), args.nodes, args.rounds, args.per_round))
    for line in report(found):
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
