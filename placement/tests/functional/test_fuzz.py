"""Schemathesis against a live gunicorn server, bounded.

Every operation of the latest OpenAPI document, in the boundary-coverage,
random and stateful (links) phases, with a fixed seed in schemathesis's
deterministic mode so that a run repeats exactly: no response may be a
5xx, and every status, media type, header and body must be one the
document lists. The database is the one of the pass (SQLite, PostgreSQL,
MySQL). ``tools/fuzz.py --max-examples N`` is the longer run.
"""

import importlib.util
import os

import pytest

from placement.tests import fixtures
from placement.tests import fuzzing
from placement.tests.gunicorn_server import GunicornServer

#: Cases per operation and phase: just over 2,000 requests in all.
MAX_EXAMPLES = 20
MIN_REQUESTS = 2000
SEED = 1
#: A hung run fails instead of blocking CI.
TIMEOUT = 600


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    if importlib.util.find_spec('schemathesis') is None:
        if os.environ.get('REQUIRE_DB') == '1':
            pytest.fail('schemathesis is not installed')
        pytest.skip('schemathesis is not installed (test-requirements.txt)')
    tmp = tmp_path_factory.mktemp('fuzz')
    db_url = fixtures.fresh_database_url(tmp, 'fuzz')
    server = GunicornServer(db_url, tmp / 'gunicorn.log', workers=2)
    # Outside the checkout, as an installed service runs.
    server.cwd = str(tmp)
    with server:
        yield server


def test_every_operation_conforms(server, tmp_path):
    status, _h, document = server.request('GET', '/openapi.json')
    assert status == 200
    version = document['info']['version']
    operations = {'%s %s' % (method.upper(), path)
                  for path, methods in document['paths'].items()
                  for method in methods}
    # Schemathesis does not call the operation serving its own schema.
    operations.discard('GET /openapi.json')

    summary, code, output = fuzzing.run(
        server.url, tmp_path / 'report', version, MAX_EXAMPLES, SEED,
        timeout=TIMEOUT)

    report = summary.report()
    print(report)  # the figures, with pytest -s or -rP
    assert not summary.failures, report
    assert summary.server_errors == 0, report
    assert not summary.errors, report
    assert code == 0, output[-4000:]
    assert summary.requests >= MIN_REQUESTS, report
    assert operations <= set(summary.by_operation), report
    assert 'Traceback' not in server.log(tail=10 ** 7), server.errors()
