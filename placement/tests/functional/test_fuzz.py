"""Schemathesis against a live gunicorn server, bounded; then bodies
schemathesis never writes.

Every operation of the latest OpenAPI document and of the 1.0 document,
in all schemathesis phases (examples, boundary coverage, random and
stateful through the links), with a fixed seed in its deterministic
mode so that a run repeats exactly. No version header is given: each
document requires the one it describes, and the coverage phase also
sends requests without it, which the document says are served at 1.0.
No response may be a 5xx, and every status, media type, header and body
must be one the document lists. Then ``fuzzing.run_hostile`` puts
non-finite numbers, huge integers, deep nesting, NUL, lone surrogates,
bytes that are not UTF-8 and very long strings at every leaf of every
body. The database is the one of the pass (SQLite, PostgreSQL, MySQL).
``tools/fuzz.py --max-examples N`` is the longer run.
"""

import importlib.util
import os

import pytest

from placement import microversion
from placement.tests import contract_check
from placement.tests import fixtures
from placement.tests import fuzzing
from placement.tests.gunicorn_server import GunicornServer

#: Cases per operation and phase, and the fewest requests expected, per
#: version: about 2,000 at the latest version, 800 at 1.0.
RUNS = {str(microversion.MAX_VERSION): (10, 1500),
        str(microversion.MIN_VERSION): (10, 500)}
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


@pytest.mark.parametrize('version', sorted(RUNS))
def test_every_operation_conforms(server, tmp_path, version):
    max_examples, min_requests = RUNS[version]
    status, _h, document = server.request(
        'GET', '/openapi.json?microversion=%s' % version)
    assert status == 200
    operations = {'%s %s' % (method.upper(), path)
                  for path, methods in document['paths'].items()
                  for method in methods}
    # Schemathesis does not call the operation serving its own schema.
    operations.discard('GET /openapi.json')

    summary, code, output = fuzzing.run(
        server.url, tmp_path / 'report', version, max_examples, SEED,
        timeout=TIMEOUT)

    report = summary.report()
    print(report)  # the figures, with pytest -s or -rP
    assert not summary.failures, report
    assert summary.server_errors == 0, report
    assert not summary.errors, report
    assert code == 0, output[-4000:]
    assert summary.requests >= min_requests, report
    assert operations <= set(summary.by_operation), report
    assert 'Traceback' not in server.log(tail=10 ** 7), server.errors()


@pytest.mark.parametrize('version', sorted(RUNS))
def test_hostile_bodies(server, version):
    summary = fuzzing.run_hostile(server.url, version,
                                  contract_check.problems)
    report = summary.report()
    print(report, dict(summary.kinds))
    assert summary.requests > 500, report
    assert summary.server_errors == 0, report
    assert not summary.failures, report
    assert set(summary.kinds) == set(fuzzing.HOSTILE)
    assert 'Traceback' not in server.log(tail=10 ** 7), server.errors()
