"""Time small GET requests on running servers, side by side.

Meant for measuring what a middleware costs: serve the same checkout
twice (e.g. ``OS_METRICS__ENABLED=True`` and ``False``) and compare::

    python3 -m benchmarks.small_gets \\
        --url metrics=http://127.0.0.1:8411 \\
        --url nometrics=http://127.0.0.1:8412

Each server gets one provider with an inventory (created if missing);
then ``GET /resource_providers/<uuid>``, ``GET /resource_providers/<uuid>/
inventories`` and ``GET /`` are timed in ``--rounds`` interleaved rounds
of ``--requests`` sequential requests each, over one client connection, and
the median of each round is printed, then the median of those medians
with the spread (lowest and highest round) and the ratio to the first
server. Standard library only.
"""

import argparse
import statistics
import sys
import time

from benchmarks import allocation_candidates as bench
from benchmarks import placement_http

PROVIDER = bench.ident('small-gets-provider')


def prepare(url):
    client = placement_http.Client(url, timeout=30)
    status = client.fetch('GET', '/resource_providers/' + PROVIDER).status
    client.close()
    if status == 404:
        bench.create_provider(bench.Client(url, 'admin', 30),
                              'small-gets-provider', {'VCPU': {'total': 8}})


def one_round(url, path, requests):
    client = placement_http.Client(url, timeout=30)
    times = []
    try:
        for _ in range(requests):
            start = time.perf_counter()
            response = client.fetch('GET', path)
            times.append(time.perf_counter() - start)
            if response.status != 200:
                raise RuntimeError('%s -> %s' % (path, response.status))
    finally:
        client.close()
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', action='append', required=True,
                        metavar='[LABEL=]URL')
    parser.add_argument('--requests', type=int, default=200)
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args(argv)
    urls = bench.label_urls(args.url)
    for _label, url in urls:
        prepare(url)
    paths = ['/resource_providers/' + PROVIDER,
             '/resource_providers/%s/inventories' % PROVIDER, '/']
    for path in paths:
        medians = {label: [] for label, _url in urls}
        for _ in range(args.rounds):
            for label, url in urls:
                medians[label].append(one_round(url, path, args.requests))
        first = statistics.median(medians[urls[0][0]])
        for label, _url in urls:
            values = medians[label]
            middle = statistics.median(values)
            print('GET %-60s %-10s median %.3f ms (rounds %.3f-%.3f ms) '
                  'x%.3f of %s' % (
                      path, label, middle * 1000, min(values) * 1000,
                      max(values) * 1000, middle / first, urls[0][0]),
                  flush=True)


if __name__ == '__main__':
    sys.exit(main())
