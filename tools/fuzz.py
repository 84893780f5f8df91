"""Fuzz a live Placement server with schemathesis over its OpenAPI document.

Starts this checkout under gunicorn (2 workers, noauth2, on 127.0.0.1) on
a fresh database -- the one PLACEMENT_TEST_DB_URL names when set (e.g.
under tools/with-postgresql.sh), else SQLite in a temporary directory --
or uses a running server (--url), and runs every operation of the latest
document through schemathesis with the contract's checks and its stateful
(links) mode. Exit status 1 when any request failed a check.

    PYTHONPATH=$PWD .venv/bin/python tools/fuzz.py --max-examples 200
    sh tools/with-postgresql.sh env PYTHONPATH=$PWD \
        .venv/bin/python tools/fuzz.py --max-examples 200
"""

import argparse
import contextlib
import json
import pathlib
import sys
import tempfile
import time
import urllib.request

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
                        help='keep the NDJSON report here')
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
    with tempfile.TemporaryDirectory(prefix='placement-fuzz-') as workdir:
        with _server(arguments, workdir) as url:
            with urllib.request.urlopen(url + '/openapi.json') as answer:
                version = json.load(answer)['info']['version']
            started = time.monotonic()
            summary, code, output = fuzzing.run(
                url, arguments.report_dir or workdir + '/report', version,
                arguments.max_examples, arguments.seed,
                workers=arguments.workers, max_time=arguments.max_time)
            print(output[-3000:])
            print(summary.report())
            print('wall time %.1fs, microversion %s'
                  % (time.monotonic() - started, version))
    return 1 if code or summary.failures or summary.server_errors else 0


if __name__ == '__main__':
    sys.exit(main())
