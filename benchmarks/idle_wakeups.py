"""CPU per request of gunicorn servers by the idle time between requests.

A server that is busy keeps the processor's caches (and branch
predictors, TLBs) warm with its own code and data; one that sleeps
between requests finds them filled by whatever ran meanwhile, and the
same request then costs more CPU. ``benchmarks.cloud_traffic`` shows it
as CPU per request falling as the load rises. This separates it from
anything the application does: it starts gunicorn (``--workers``
processes, sync worker unless ``--gunicorn-args`` says otherwise)
serving ``hello`` (``toolkit/hello_app.py``, the smallest WSGI
application: gunicorn's own cost) and ours (and upstream with
``--upstream``; fresh databases, SQLite or the server of
``tools/with-postgresql.sh`` / ``tools/with-mysql.sh``), then sends each
``--requests`` GETs one at a time, each on a new connection as nova's
clients meet a sync worker, sleeping ``--gaps`` milliseconds between
two; per server, path and gap it prints the CPU milliseconds per request
of the gunicorn master and workers (``proc_cpu``, to the nanosecond) and
their voluntary context switches per request (each one a sleep and a
wake-up)::

    python3 -m benchmarks.idle_wakeups --gaps 0,1,5,20,100
    python3 -m benchmarks.idle_wakeups --variant reuse-port=--reuse-port

``--variant LABEL=OPTIONS`` adds a server of each kind with more
gunicorn options (e.g. ``--reuse-port``: a listening socket per worker,
so that a connection wakes one worker rather than all those waiting).
Rounds (``--rounds``) interleave the servers; the figure is the median
of the rounds, with their spread.
"""

import argparse
import contextlib
import os
import shlex
import socket
import statistics
import sys
import tempfile
import time
import urllib.parse

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import hello_app
from benchmarks.toolkit import labels
from benchmarks.toolkit import proc_cpu
from benchmarks.toolkit import servers
from benchmarks.toolkit import small_requests
from placement.tests import gunicorn_server


def switches(root):
    """Voluntary context switches of ``root`` and its children so far."""
    total = 0
    for pid in [root] + proc_cpu.children(root):
        try:
            with open('/proc/%d/status' % pid) as status:
                for line in status:
                    if line.startswith('voluntary_ctxt_switches:'):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total


def request_bytes(path):
    return ('GET %s HTTP/1.1\r\nHost: placement\r\n'
            'X-Auth-Token: admin\r\nAccept: application/json\r\n'
            'OpenStack-API-Version: placement latest\r\n'
            'Connection: close\r\n\r\n' % path).encode()


def fetch(address, data):
    """One request on a new connection; its status line."""
    with socket.create_connection(address) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b''.join(chunks).split(b'\r\n', 1)[0]


def cost(address, pid, path, requests, gap):
    """(CPU ms, voluntary switches) per request of ``path``."""
    data = request_bytes(path)
    fetch(address, data)
    if gap:
        time.sleep(gap)
    cpu, switched = proc_cpu.tree_exact_seconds(pid), switches(pid)
    for _ in range(requests):
        status = fetch(address, data)
        if b' 200 ' not in status:
            raise RuntimeError('%s: %s' % (path, status.decode()))
        if gap:
            time.sleep(gap)
    return ((proc_cpu.tree_exact_seconds(pid) - cpu) * 1000 / requests,
            (switches(pid) - switched) / requests)


def summary(label, path, gap, results):
    """One report line: the median of the rounds and their spread."""
    cpu = [c for c, _s in results]
    return '%-22s %-14s gap %5g ms  %.3f ms CPU/req (%.3f-%.3f)  %.2f ' \
           'switches/req' % (label, path, gap, statistics.median(cpu),
                             min(cpu), max(cpu),
                             statistics.median(s for _c, s in results))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--gaps', default='0,1,5,20,100',
                        help='milliseconds between two requests')
    parser.add_argument('--requests', type=int, default=100,
                        help='per server, path, gap and round')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--gunicorn-args', type=shlex.split, default=[],
                        metavar='"ARGS"', help='for every server')
    parser.add_argument('--variant', type=labels.gunicorn_options,
                        action='append', default=[], metavar='LABEL=OPTIONS',
                        help='also each server with these options')
    parser.add_argument('--upstream', action='store_true',
                        help='also upstream Placement 16.0.0')
    args = parser.parse_args(argv)
    gaps = [float(g) for g in args.gaps.split(',')]
    variants = [('', [])] + args.variant
    base = ['--timeout', '300', *args.gunicorn_args]
    provider = '/resource_providers/%s/inventories' % small_requests.PROVIDER
    with tempfile.TemporaryDirectory(prefix='idle-wakeups.') as tmp, \
            contextlib.ExitStack() as stack:
        targets = []     # (label, url, pid, [paths])
        upstream = []
        if args.upstream:
            # It gives both gunicorns its own --timeout.
            upstream = stack.enter_context(servers.side_by_side(
                args.workers, timeout=300,
                gunicorn_args=args.gunicorn_args))
        for suffix, options in variants:
            def name(kind):
                return kind + ('-' + suffix if suffix else '')
            url, pid = servers.start_application(
                stack, tmp, name('hello'), hello_app.APPLICATION,
                base + options, args.workers)
            targets.append((name('hello'), url, pid, ['/']))
            if upstream and not suffix:
                url, pid = upstream[0].url, upstream[0].pid
            else:
                url, pid = servers.start_application(
                    stack, tmp, name(labels.OURS),
                    gunicorn_server.APPLICATION, base + options,
                    args.workers)
            targets.append((name(labels.OURS), url, pid, ['/', provider]))
        if upstream:
            targets.append((labels.UPSTREAM, upstream[1].url,
                            upstream[1].pid, ['/', provider]))
        for label, url, _pid, paths in targets:
            if provider in paths:
                small_requests.create_provider(
                    cloud_api.Client(url, 'admin', 60))
        found = {}
        for _round in range(args.rounds):
            for label, url, pid, paths in targets:
                parts = urllib.parse.urlsplit(url)
                address = (parts.hostname, parts.port)
                for path in paths:
                    for gap in gaps:
                        found.setdefault((label, path, gap), []).append(
                            cost(address, pid, path, args.requests,
                                 gap / 1000))
        print('gunicorn --workers %d %s; load average %.1f' % (
            args.workers, shlex.join(base), os.getloadavg()[0]))
        for label, _url, _pid, paths in targets:
            for path in paths:
                shown = 'inventories' if path == provider else path
                for gap in gaps:
                    print(summary(label, shown, gap,
                                  found[(label, path, gap)]), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
