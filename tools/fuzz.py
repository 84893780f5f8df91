"""Fuzz a live Placement server with schemathesis over its OpenAPI document.

Starts this checkout under gunicorn (2 workers, noauth2, on 127.0.0.1) on
a fresh database -- the one PLACEMENT_TEST_DB_URL names when set (e.g.
under tools/with-postgresql.sh), else SQLite in a temporary directory --
or uses a running server (--url), and runs every operation of the latest
and of the 1.0 document (or of --version) through schemathesis in all its
phases with the contract's checks, then sends the bodies schemathesis
never writes (``fuzzing.HOSTILE``: non-finite numbers, huge integers,
deep nesting, NUL, lone surrogates, long strings) at every leaf of every
body. Exit status 1 when any request failed a check.

    PYTHONPATH=$PWD .venv/bin/python tools/fuzz.py --max-examples 200
    sh tools/with-postgresql.sh env PYTHONPATH=$PWD \
        .venv/bin/python tools/fuzz.py --max-examples 200
"""

import argparse
import contextlib
import pathlib
import sys
import tempfile
import time

from placement import microversion
from placement.tests import contract_check
from placement.tests import fixtures
from placement.tests import fuzzing
from placement.tests.gunicorn_server import GunicornServer


def _arguments():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--max-examples', type=int, default=200,
                        help='cases per operation and phase (default 200)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--workers', type=int, default=1,
                        help='concurrent schemathesis workers (default 1: '
                             'schemathesis 4.32 on Python 3.11 can fail '
                             'with SystemError in its own threads)')
    parser.add_argument('--max-time', type=int, default=None,
                        help='time budget in seconds for the whole run')
    parser.add_argument('--url', default=None,
                        help='fuzz this running server instead')
    parser.add_argument('--report-dir', default=None,
                        help='keep the NDJSON reports here')
    parser.add_argument('--version', action='append', default=None,
                        help='microversion to fuzz (repeatable; default: '
                             'the latest and 1.0)')
    return parser.parse_args()


@contextlib.contextmanager
def _server(arguments, workdir):
    if arguments.url:
        yield arguments.url.rstrip('/')
        return
    tmp = pathlib.Path(workdir)
    db_url = fixtures.fresh_database_url(tmp, 'fuzz')
    server = GunicornServer(db_url, tmp / 'gunicorn.log', workers=2)
    server.cwd = workdir  # outside the checkout, as installed services run
    with server:
        yield server.url


def main():
    arguments = _arguments()
    versions = arguments.version or [str(microversion.MAX_VERSION),
                                     str(microversion.MIN_VERSION)]
    failed = False
    with tempfile.TemporaryDirectory(prefix='placement-fuzz-') as workdir:
        with _server(arguments, workdir) as url:
            for version in versions:
                started = time.monotonic()
                summary, code, output = fuzzing.run(
                    url, '%s/%s' % (arguments.report_dir
                                    or workdir + '/report', version),
                    version, arguments.max_examples, arguments.seed,
                    workers=arguments.workers, max_time=arguments.max_time)
                print(output[-3000:])
                print(summary.report())
                print('schemathesis at %s: wall time %.1fs'
                      % (version, time.monotonic() - started))
                hostile = fuzzing.run_hostile(url, version,
                                              contract_check.problems)
                print(hostile.report())
                print('hostile bodies at %s: %s' % (
                    version, dict(hostile.kinds)))
                failed = failed or bool(
                    code or summary.failures or summary.server_errors
                    or hostile.failures or hostile.server_errors)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
