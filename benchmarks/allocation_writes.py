"""Concurrent allocation writes: throughput, and proof that none is lost,
half-applied or over capacity.

Run from the checkout root against any running Placement server::

    python3 -m benchmarks.allocation_writes --url http://127.0.0.1:8000 \\
        [--token admin] [--mode put|post|mixed] [--clients 10] \\
        [--providers 10] [--attempts 400] [--seed 1] [--provider-writes]

``--url`` may be repeated (one URL per API host, or per host attached to
its own database node): clients are spread over them round-robin and the
read-back goes through each of them, so an acknowledged write that one
host cannot see yet is reported.

``--side-by-side`` instead starts this checkout and upstream Placement
16.0.0 (gunicorn, ``--workers`` each, fresh databases: SQLite, or the
server ``tools/with-postgresql.sh`` / ``tools/with-mysql.sh`` exports)
and runs the load ``--rounds`` times on each, interleaved (ours,
upstream, ours, ...), each run on fresh providers; it prints each run,
then the median successful writes/s of each server with the spread and
the ratio::

    tools/with-postgresql.sh .venv/bin/python -m benchmarks.allocation_writes \
        --side-by-side --mode put --rounds 3

The script creates ``--providers`` fresh providers with VCPU inventory
sized so that the demand of all attempts exceeds the total capacity by a
third, then ``--clients`` threads (one keep-alive connection each) send
``--attempts`` writes at microversion 1.39 (consumer_generation null for
new consumers); a quarter of the consumers are split over two providers.

Modes:

``put``    each attempt is ``PUT /allocations/{new consumer}``;
``post``   each attempt is ``POST /allocations`` for 2-3 new consumers;
``mixed``  PUTs and POSTs of new consumers, POSTs moving a client's own
           consumers to other providers (and projects), and DELETEs;
           with ``--provider-writes`` also inventory updates (read the
           provider, then replace its inventories with a new MEMORY_MB
           total and the same VCPU) and provider creates.

It prints successful writes per second, 409s by error code, 5xx, writes
that got no answer and other statuses, then reads everything back through
the API (see ``toolkit.allocation_ledger``) and exits 1 if any provider is over
capacity or the usages differ from the acknowledged writes. Writes whose
answer was a 5xx or never came may be applied or not, but only entirely;
they are reported separately. Standard library only (``--side-by-side``
uses the test helpers).
"""

import argparse
import collections
import statistics
import sys

from benchmarks.toolkit import allocation_load
from benchmarks.toolkit import labels


def side_by_side(args, out=sys.stdout):
    """Run the load on ours and upstream, interleaved; 0 if every run of
    ours verified and none had a 5xx."""
    from benchmarks.toolkit import servers
    rates, failures = collections.defaultdict(list), 0
    with servers.side_by_side(args.workers) as started:
        for round_ in range(1, args.rounds + 1):
            for served in started:
                load = allocation_load.AllocationLoad(
                    served.url, args.token, args.mode, args.clients,
                    args.providers, args.attempts, args.seed + round_,
                    args.provider_writes)
                load.prepare()
                load.run()
                verification = load.verify()
                print('-- round %d, %s' % (round_, served.label), file=out)
                allocation_load.report(load, verification, out)
                rates[served.label].append(
                    load.tally.successes / load.seconds)
                # Upstream answers 5xx under concurrent writes on SQLite
                # ("database is locked"): only ours is judged.
                if served.label == labels.OURS and (
                        not verification.ok or load.tally.server_errors):
                    failures += 1
    for label, values in rates.items():
        middle = statistics.median(values)
        print('%-8s %s: %.1f successful writes/s median (runs %s), '
              'x%.2f of upstream' % (
                  label, args.mode, middle,
                  ', '.join('%.1f' % v for v in values),
                  middle / statistics.median(rates[labels.UPSTREAM])
                  if labels.UPSTREAM in rates else float('nan')), file=out)
    per_round = [o / u for o, u in zip(rates[labels.OURS],
                                       rates[labels.UPSTREAM])]
    print('ours/upstream per round: %s' % ', '.join(
        '%.2f' % r for r in per_round), file=out)
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', action='append',
                        help='Placement endpoint, e.g. http://127.0.0.1:8000'
                        ' (repeat to spread clients over several)')
    parser.add_argument('--token', default='admin',
                        help='X-Auth-Token to send (default: admin)')
    parser.add_argument('--mode', choices=('put', 'post', 'mixed'),
                        default='put', help='kind of writes (default: put)')
    parser.add_argument('--clients', type=int, default=10,
                        help='concurrent connections (default: 10)')
    parser.add_argument('--providers', type=int, default=10,
                        help='providers to create (default: 10)')
    parser.add_argument('--attempts', type=int, default=400,
                        help='writes to send in total (default: 400)')
    parser.add_argument('--seed', type=int, default=1,
                        help='seed of the planned demands (default: 1)')
    parser.add_argument('--provider-writes', action='store_true',
                        help='mixed mode: add inventory updates and '
                        'provider creates')
    parser.add_argument('--side-by-side', action='store_true',
                        help='start ours and upstream 16.0.0 (gunicorn) on '
                        'fresh databases and load both, interleaved')
    parser.add_argument('--rounds', type=int, default=3,
                        help='--side-by-side: runs per server (default: 3)')
    parser.add_argument('--workers', type=int, default=2,
                        help='--side-by-side: gunicorn workers (default: 2)')
    args = parser.parse_args(argv)
    if bool(args.url) == bool(args.side_by_side):
        parser.error('give either --url or --side-by-side')
    if args.side_by_side:
        return side_by_side(args)
    load = allocation_load.AllocationLoad(
        args.url, args.token, args.mode, args.clients, args.providers,
        args.attempts, args.seed, args.provider_writes)
    load.prepare()
    load.run()
    verification = load.verify()
    allocation_load.report(load, verification)
    return 0 if verification.ok else 1


if __name__ == '__main__':
    sys.exit(main())
