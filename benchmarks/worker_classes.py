"""The cloud mix on ours under several gunicorn worker classes at once.

Which worker to run in front of a database is a matter of measurement:
this starts one gunicorn of ours per ``--worker LABEL=OPTIONS`` (each
with ``--workers`` processes and a fresh database of its own on the
database server ``tools/with-mysql.sh`` or ``tools/with-postgresql.sh``
started, or an SQLite file), then runs ``benchmarks.cloud_traffic`` on
all of them, steps interleaved, so that one run compares them::

    tools/with-mysql.sh .venv/bin/python -m benchmarks.worker_classes \\
        --worker sync= \\
        --worker gevent='--worker-class gevent --keep-alive 5' \\
        --worker gthread='--worker-class gthread --threads 4 --keep-alive 5' \\
        -- --nodes 1000 --factors 2,4,8

Options after ``--`` go to ``benchmarks.cloud_traffic`` (not ``--url``,
``--pid`` or ``--side-by-side``, which this sets). Each label's line in
its report is one worker class: requests/s sustained within the p99
bound, p99, the gunicorn's CPU per request and the database server's.
"""

import argparse
import contextlib
import os
import shlex
import subprocess
import sys
import tempfile

from benchmarks.toolkit import labels
from benchmarks.toolkit import servers
from placement.tests import gunicorn_server


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--worker', type=labels.gunicorn_options,
                        action='append',
                        required=True, metavar='LABEL=OPTIONS')
    parser.add_argument('--workers', type=int, default=2,
                        help='gunicorn processes per worker class')
    parser.add_argument('traffic', nargs=argparse.REMAINDER,
                        help='-- then options of benchmarks.cloud_traffic')
    args = parser.parse_args(argv)
    traffic = [a for a in args.traffic if a != '--']
    with tempfile.TemporaryDirectory(prefix='bench-workers.') as tmp, \
            contextlib.ExitStack() as stack:
        targets = []
        for number, (label, options) in enumerate(args.worker):
            server = gunicorn_server.GunicornServer(
                servers._database(tmp, 'worker%d' % number),
                os.path.join(tmp, label + '.log'), workers=args.workers,
                gunicorn_args=['--timeout', '300', *options])
            # gunicorn puts its working directory on sys.path.
            server.cwd = tmp
            stack.enter_context(server)
            print('%s: gunicorn --workers %d %s' % (
                label, args.workers, shlex.join(options)), flush=True)
            targets += ['--url', '%s=%s' % (label, server.url),
                        '--pid', '%s=%d' % (label, server._process.pid)]
        # Its own process: a script is not another's library.
        return subprocess.call([sys.executable, '-m',
                                'benchmarks.cloud_traffic',
                                *traffic, *targets])


if __name__ == '__main__':
    sys.exit(main())
