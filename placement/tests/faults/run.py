"""One fault run: servers, workload, faults, then the checker.

    python -m placement.tests.faults --database galera --operations 10000 \\
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
import shutil
import sys
import tempfile
import threading
import time

from placement.tests.faults import checker
from placement.tests.faults import history as history_mod
from placement.tests.faults import nemesis as nemesis_mod
from placement.tests.faults import topology as topology_mod
from placement.tests.faults import workload as workload_mod


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
        return self.report.ok and self.reached and not self.failures

    @property
    def failures(self):
        return [note for note in self.notes if note.startswith('fault ')]

    def text(self):
        lines = ['%d writes in %.0f s; faults injected: %s' % (
            self.writes, self.seconds, dict(sorted(self.faults.items())))]
        lines += self.notes
        lines.append(self.report.text())
        if not self.reached:
            lines.append('the run stopped before reaching its counts')
        return '\n'.join(lines)


class FaultRun:
    """``start`` the topology, ``load`` it under faults, ``check``;
    ``stop`` stops everything it started (by pid). A context manager."""

    def __init__(self, database, workdir=None, environment=None, seed=1,
                 clients=6, log=None, **options):
        self.log = log or (lambda text: None)
        self.seed = seed
        self.clients = clients
        # A directory of its own is removed at the end; the caller's
        # keeps the servers' logs.
        self._own_workdir = workdir is None
        self.workdir = str(workdir or tempfile.mkdtemp(
            prefix='placement-faults-'))
        self.topology = topology_mod.make(database, self.workdir,
                                          environment, **options)
        self.history = history_mod.History()
        self.started = time.monotonic()
        self.nemesis = None
        self.workload = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def start(self):
        try:
            self.topology.start()
            self.log('started: %s' % self.topology.urls)
            self.workload = workload_mod.Workload(
                self.topology.urls, self.history, self.seed, self.clients)
            self.workload.prepare()
        except BaseException:
            self.stop()
            raise

    def load(self, operations, faults_per_kind, seconds, kinds=None):
        """Send at least ``operations`` writes while injecting at least
        ``faults_per_kind`` faults of each of ``kinds`` (default: all the
        topology has), within ``seconds``; whether both were reached."""
        self.nemesis = nemesis_mod.Nemesis(
            self.topology, self.seed,
            self.topology.FAULTS if kinds is None else kinds,
            faults_per_kind, log=self.log)
        self.workload.stop.clear()
        thread = threading.Thread(target=self.workload.run, daemon=True)
        thread.start()
        start_writes = self.workload.sent
        self.nemesis.run(lambda: (
            self.workload.sent - start_writes >= operations
            and (self.nemesis.done or not self.nemesis.kinds)),
            time.monotonic() + seconds)
        self.workload.stop.set()
        thread.join()
        self.log('load done: %d writes, faults %s' % (
            self.workload.sent, dict(self.nemesis.counts)))
        return (self.workload.sent - start_writes >= operations
                and all(self.nemesis.counts[kind] >= faults_per_kind
                        for kind in self.nemesis.kinds))

    def check(self, history=None):
        """The checker's report on ``history`` (default: the run's)."""
        transactions = self.topology.transactions()
        final = checker.read_final(self.topology.final_url())
        return checker.Checker(history or self.history).check(
            transactions, final)

    def result(self, reached):
        report = self.check()
        counts = self.nemesis.counts if self.nemesis else {}
        notes = ['API workers killed while serving: %d of %d' % (
            self.topology.worker_kills_busy, counts.get('worker', 0))]
        isolations = [what for _s, _e, kind, what in (
            self.nemesis.events if self.nemesis else ()) if kind == 'isolate']
        if isolations:
            notes.append('isolated nodes that left the primary component: '
                         '%d of %d' % (sum('went non-Primary' in what
                                           for what in isolations),
                                       len(isolations)))
        notes += ['fault that failed: %s' % f
                  for f in (self.nemesis.failures if self.nemesis else ())]
        return Result(report, counts, time.monotonic() - self.started,
                      self.workload.sent, reached, notes)

    def stop(self):
        try:
            self.topology.stop()
        finally:
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)


def run(database, operations=300, faults_per_kind=2, seconds=120, seed=1,
        clients=6, workdir=None, environment=None, kinds=None, log=None,
        **options):
    """Start, load under faults, check, stop: the Result."""
    with FaultRun(database, workdir, environment, seed, clients,
                  log, **options) as fault_run:
        reached = fault_run.load(operations, faults_per_kind, seconds,
                                 kinds)
        return fault_run.result(reached)


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
                        help='comma-separated kinds, or "none" (default: '
                        'all of the database\'s)')
    parser.add_argument('--innodb-flush', type=int, choices=(0, 1, 2),
                        help='mariadb: innodb_flush_log_at_trx_commit '
                        '(default %d)' % topology_mod.INNODB_FLUSH)
    parser.add_argument('--workdir',
                        help='keep the servers\' logs here (default: a '
                        'temporary directory, removed)')
    parser.add_argument('--service-env', action='append', default=[],
                        help='NAME=VALUE for the API hosts, e.g. '
                        'OS_PLACEMENT_DATABASE__MYSQL_WSREP_SYNC_WAIT=0')
    args = parser.parse_args(argv)
    environment = dict(item.split('=', 1) for item in args.service_env)

    def log(text):
        print('[%s] %s' % (time.strftime('%H:%M:%S'), text),
              file=sys.stderr, flush=True)

    options = {}
    if args.innodb_flush is not None:
        options['innodb_flush'] = args.innodb_flush
    result = run(args.database, args.operations, args.faults_per_kind,
                 args.seconds, args.seed, args.clients,
                 workdir=args.workdir, environment=environment,
                 kinds=(None if args.faults is None else
                        [k for k in args.faults.split(',') if k != 'none']),
                 log=log, **options)
    print('database: %s, seed %d, service environment %s' % (
        args.database, args.seed, environment or '-'))
    print(result.text())
    return 0 if result.ok else 1


if __name__ == '__main__':
    sys.exit(main())
