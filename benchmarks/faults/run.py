"""One fault run: servers, workload, faults, then the checker.

    python -m benchmarks.faults --database galera --operations 10000 \\
        --faults-per-kind 50 --seconds 7200 --seed 1

Starts the topology (``--database``: postgresql, mariadb or galera) on
loopback in throwaway directories, sends the workload through every API
host while the nemesis injects faults, until at least ``--operations``
writes were sent and every fault kind was injected
``--faults-per-kind`` times, or ``--seconds`` passed. Then it reads the
database's commit stream and final tables, runs the checker, prints
its report and stops everything it started. Exit status 0 when the
checker found no anomaly and the counts were reached.
"""

import argparse
import sys
import tempfile
import threading
import time

from benchmarks.faults import checker
from benchmarks.faults import history as history_mod
from benchmarks.faults import nemesis as nemesis_mod
from benchmarks.faults import topology as topology_mod
from benchmarks.faults import workload as workload_mod


class Result:
    def __init__(self, report, faults, seconds, writes, reached, notes):
        self.report = report
        self.faults = faults
        self.seconds = seconds
        self.writes = writes
        self.reached = reached
        self.notes = notes

    @property
    def ok(self):
        return self.report.ok and self.reached

    def text(self):
        lines = ['%d writes in %.0f s; faults injected: %s' % (
            self.writes, self.seconds, dict(sorted(self.faults.items())))]
        lines += self.notes
        lines.append(self.report.text())
        if not self.reached:
            lines.append('the run stopped before reaching its counts')
        return '\n'.join(lines)


def run(database, operations=300, faults_per_kind=2, seconds=120, seed=1,
        clients=6, workdir=None, environment=None, kinds=None,
        before_check=None, log=None):
    """Run and check; ``before_check(topology, history)`` may break
    things on purpose (the checker's own tests)."""
    log = log or (lambda text: None)
    workdir = workdir or tempfile.mkdtemp(prefix='placement-faults-')
    topology = topology_mod.make(database, str(workdir), environment)
    history = history_mod.History()
    started = time.monotonic()
    try:
        topology.start()
        log('%s started: %s' % (database, topology.urls))
        workload = workload_mod.Workload(topology.urls, history, seed,
                                         clients)
        workload.prepare()
        nemesis = nemesis_mod.Nemesis(topology, seed, kinds,
                                      faults_per_kind, log=log)
        load = threading.Thread(target=workload.run, daemon=True)
        load.start()
        nemesis.run(lambda: workload.sent >= operations and (
            nemesis.done or not nemesis.per_kind), started + seconds)
        workload.stop.set()
        load.join()
        reached = (workload.sent >= operations and all(
            nemesis.counts[kind] >= faults_per_kind
            for kind in nemesis.kinds))
        log('load done: %d writes, faults %s' % (workload.sent,
                                                 dict(nemesis.counts)))
        if before_check is not None:
            before_check(topology, history)
        topology.stop_hosts()
        transactions = topology.transactions()
        final = checker.read_final(topology.final_url())
        report = checker.Checker(history).check(transactions, final)
        notes = ['API workers killed while serving: %d of %d' % (
            topology.worker_kills_busy, nemesis.counts['worker'])]
        notes += ['fault that failed: %s' % f for f in nemesis.failures]
        return Result(report, nemesis.counts, time.monotonic() - started,
                      workload.sent, reached, notes)
    finally:
        topology.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--database', required=True,
                        choices=sorted(topology_mod.TOPOLOGIES))
    parser.add_argument('--operations', type=int, default=300,
                        help='writes to send at least (default 300)')
    parser.add_argument('--faults-per-kind', type=int, default=2,
                        help='faults of each kind at least (default 2)')
    parser.add_argument('--seconds', type=float, default=600,
                        help='stop after this long in any case')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--clients', type=int, default=6)
    parser.add_argument('--faults', default=None,
                        help='comma-separated kinds (default: all of the '
                        'database\'s)')
    parser.add_argument('--service-env', action='append', default=[],
                        help='NAME=VALUE for the API hosts, e.g. '
                        'OS_PLACEMENT_DATABASE__MYSQL_WSREP_SYNC_WAIT=0')
    args = parser.parse_args(argv)
    environment = dict(item.split('=', 1) for item in args.service_env)

    def log(text):
        print('[%s] %s' % (time.strftime('%H:%M:%S'), text),
              file=sys.stderr, flush=True)

    result = run(args.database, args.operations, args.faults_per_kind,
                 args.seconds, args.seed, args.clients,
                 environment=environment,
                 kinds=args.faults.split(',') if args.faults else None,
                 log=log)
    print('database: %s, seed %d, service environment %s' % (
        args.database, args.seed, environment or '-'))
    print(result.text())
    return 0 if result.ok else 1


if __name__ == '__main__':
    sys.exit(main())
