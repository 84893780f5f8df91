"""Time small GET requests on running servers, side by side.

The requests a compute node's periodic refresh sends (provider tree,
inventories, traits, aggregates) and usages, against ``GET /`` of the
same server, which is the floor a request cannot go below::

    python3 -m benchmarks.small_gets \\
        --url metrics=http://127.0.0.1:8411 \\
        --url nometrics=http://127.0.0.1:8412
    # ours and upstream 16.0.0, started for the run (gunicorn -w 2)
    python3 -m benchmarks.small_gets --side-by-side --concurrency 10

Each server gets one provider with an inventory, a trait and an
aggregate (created if missing); then every path is timed in ``--rounds``
interleaved rounds (server A, server B, A, B, ...): ``--requests``
sequential requests, the median of each round kept; with
``--concurrency`` C > 1 also ``--requests`` requests from C clients
(flows of one thread over non-blocking sockets, each sending its next
request when its answer came), requests per second kept. It prints,
per path and server, the median of the rounds' figures with the spread
(lowest and highest round), the ratio to the first server, and the
share of the same server's ``GET /`` rate. Standard library only
(``--side-by-side`` uses the test helpers).
"""

import argparse
import shlex
import statistics
import sys
import time

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import http_loop
from benchmarks.toolkit import labels
from benchmarks.toolkit import small_requests
from placement.tests import placement_http

def prepare(url):
    client = placement_http.Client(url, timeout=30)
    status = client.fetch(
        'GET', '/resource_providers/' + small_requests.PROVIDER).status
    client.close()
    if status == 404:
        small_requests.create_provider(cloud_api.Client(url, 'admin', 30))


def one_round(url, path, requests):
    """Median seconds of ``requests`` sequential GETs."""
    client = placement_http.RawClient(url, timeout=30)
    times = []
    try:
        for _ in range(requests):
            start = time.perf_counter()
            response = client.fetch('GET', path)
            times.append(time.perf_counter() - start)
            if response.status != 200:
                raise RuntimeError('%s -> %s %s' % (
                    path, response.status, response.failure or ''))
    finally:
        client.close()
    return statistics.median(times)


def concurrent_round(url, path, requests, concurrency):
    """Requests per second of ``requests`` GETs from ``concurrency``
    clients at once, each sending its next request when its answer came.

    All clients are flows of one thread over non-blocking sockets
    (``http_loop``), not a thread each: the load generator shares the
    cores of the servers it measures, and blocking threads cost them a
    GIL hand-over and a wake-up per response, which weighs most on the
    server with the cheapest requests.
    """
    share = [requests // concurrency + (i < requests % concurrency)
             for i in range(concurrency)]

    def client_flow(count):
        for _ in range(count):
            status, body = yield http_loop.Request('GET', 'GET', path)
            if status != 200:
                raise RuntimeError('%s -> %s %s' % (path, status, body))

    loop = http_loop.Loop(url, 'admin', 30, lambda *_answer: None)
    try:
        start = time.perf_counter()
        for count in share:
            loop.start(client_flow(count))
        while loop.flows:
            loop.poll(1.0)
        return requests / (time.perf_counter() - start)
    finally:
        loop.close()


def measure(urls, path, args):
    """{label: [median seconds per round]}, {label: [req/s per round]}."""
    medians = {label: [] for label, _url in urls}
    rates = {label: [] for label, _url in urls}
    for _ in range(args.rounds):
        for label, url in urls:
            medians[label].append(one_round(url, path, args.requests))
            if args.concurrency > 1:
                rates[label].append(concurrent_round(
                    url, path, args.requests, args.concurrency))
    return medians, rates


def report(urls, path, medians, rates, root_rates, args):
    first = urls[0][0]
    lines = []
    for label, _url in urls:
        values = medians[label]
        middle = statistics.median(values)
        line = ('GET %-60s %-10s median %.3f ms (rounds %.3f-%.3f) x%.2f '
                'of %s' % (path[:60], label, middle * 1000,
                           min(values) * 1000, max(values) * 1000,
                           middle / statistics.median(medians[first]),
                           first))
        if rates[label]:
            rate = statistics.median(rates[label])
            line += '; c%d %.0f req/s (rounds %.0f-%.0f), %.2fx %s' % (
                args.concurrency, rate, min(rates[label]),
                max(rates[label]),
                rate / statistics.median(rates[first]), first)
            if root_rates.get(label):
                line += ', %.2f of its GET /' % (
                    rate / statistics.median(root_rates[label]))
        lines.append(line)
    return lines


def run(urls, args):
    for _label, url in urls:
        prepare(url)
    root_rates = {}
    for path in small_requests.PATHS:
        medians, rates = measure(urls, path, args)
        if path == '/':
            root_rates = rates
        for line in report(urls, path, medians, rates, root_rates, args):
            print(line, flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', action='append', metavar='[LABEL=]URL')
    parser.add_argument('--side-by-side', action='store_true',
                        help='start ours and upstream 16.0.0 (gunicorn) '
                        'on fresh databases and measure both')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--gunicorn-args', type=shlex.split, default=[],
                        metavar='"ARGS"',
                        help='with --side-by-side: more gunicorn options '
                        'for both servers')
    parser.add_argument('--requests', type=int, default=200)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--concurrency', type=int, default=1)
    args = parser.parse_args(argv)
    if bool(args.url) == bool(args.side_by_side):
        parser.error('give either --url or --side-by-side')
    if args.side_by_side:
        from benchmarks.toolkit import servers
        with servers.side_by_side(
                args.workers, gunicorn_args=args.gunicorn_args) as started:
            return run([(s.label, s.url) for s in started], args)
    return run(labels.label_urls(args.url), args)


if __name__ == '__main__':
    sys.exit(main())
