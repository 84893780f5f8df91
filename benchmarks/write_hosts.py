"""Allocation write throughput through HAProxy for 1, 2 and 3 API hosts.

Starts three independent gunicorn masters (standing for three hosts) on
one database, and one HAProxy per host count balancing over the first
1, 2 or 3 of them; then, round after round, runs the same
``allocation_writes`` load through each balancer in turn (alternating,
since timings on a shared machine drift) and reads it back through every
host. Needs ``haproxy`` and a database server; run from the checkout::

    sh tools/with-postgresql.sh .venv/bin/python -m benchmarks.write_hosts \\
        [--hosts 1,2,3] [--workers 2] [--rounds 3] [--mode put] \\
        [--clients 12] [--attempts 400]

It prints successful writes per second for each host count and round,
their median and spread, and fails (exit 1) on any 5xx or failed
verification. All hosts share the machine, so on a small one more hosts
add processes, not cores.
"""

import argparse
import statistics
import sys
import tempfile

from benchmarks.toolkit import allocation_load
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import haproxy


def _run(balancer, hosts, args, seed):
    load = allocation_load.AllocationLoad(
        balancer.url, mode=args.mode, clients=args.clients,
        attempts=args.attempts, seed=seed)
    load.prepare()
    load.run()
    verification = load.verify([host.url for host in hosts])
    rate = load.tally.successes / load.seconds
    problems = []
    if load.tally.server_errors:
        problems.append('%d 5xx' % load.tally.server_errors)
    if not verification.ok:
        problems.extend(verification.problems)
    return rate, problems


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--hosts', default='1,2,3',
                        help='host counts to compare (default: 1,2,3)')
    parser.add_argument('--workers', type=int, default=2,
                        help='gunicorn workers per host (default: 2)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--mode', choices=('put', 'post', 'mixed'),
                        default='put')
    parser.add_argument('--clients', type=int, default=12)
    parser.add_argument('--attempts', type=int, default=400)
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.hosts.split(',')]
    url = fixtures.server_url()
    if not url:
        parser.error('set PLACEMENT_TEST_DB_URL (tools/with-postgresql.sh)')
    db_url = fixtures.create_server_database(url, 'write_hosts')
    rates = {n: [] for n in counts}
    failed = False
    with tempfile.TemporaryDirectory(prefix='write-hosts-') as tmp:
        hosts = []
        balancers = []
        try:
            for index in range(max(counts)):
                host = gunicorn_server.GunicornServer(
                    db_url, '%s/host%d.log' % (tmp, index),
                    workers=args.workers)
                host.start()
                hosts.append(host)
            for n in counts:
                balancer = haproxy.HAProxy([h.url for h in hosts[:n]], tmp)
                balancer.start()
                balancers.append(balancer)
            print('%s, %d workers per host, %d clients, %d attempts per run'
                  % (args.mode, args.workers, args.clients, args.attempts))
            for round_number in range(args.rounds):
                for n, balancer in zip(counts, balancers):
                    rate, problems = _run(balancer, hosts, args,
                                          seed=round_number + 1)
                    rates[n].append(rate)
                    print('round %d, %d host(s): %.1f writes/s %s' % (
                        round_number + 1, n, rate,
                        'PROBLEMS: %s' % problems if problems else 'ok'),
                        flush=True)
                    failed = failed or bool(problems)
        finally:
            for balancer in balancers:
                balancer.stop()
            for host in hosts:
                host.stop()
    base = statistics.median(rates[counts[0]])
    for n in counts:
        median = statistics.median(rates[n])
        print('%d host(s): median %.1f writes/s (min %.1f, max %.1f), '
              '%.2fx of %d host(s)' % (n, median, min(rates[n]),
                                       max(rates[n]), median / base,
                                       counts[0]))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
