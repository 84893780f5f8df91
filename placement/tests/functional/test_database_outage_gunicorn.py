"""The database server stopped for ten seconds under concurrent writes.

A real gunicorn serves a real database server of the test's own, which
the test stops (ending open sessions) and starts again while writers keep
sending requests: PostgreSQL in the PostgreSQL pass, MariaDB in the MySQL
pass (the SQLite pass has the in-process equivalent,
``test_database_unavailable.py``). Every answer must be a success or a
503 with ``Retry-After``; the service log must stay small and free of
tracebacks; once the server is back the service must answer again
without a restart, and every write it acknowledged must be there. The
health check must follow the database down and up, answering quickly.
Both under gunicorn's default worker and under its gevent worker.
"""

import http.client
import json
import os
import threading
import time
import uuid

import pytest

from placement.tests import database_servers
from placement.tests import fixtures
from placement.tests import gunicorn_server

OUTAGE = 10.0
#: [api] healthcheck_cache_time of the service under test.
CACHE_TIME = '0.5'
WRITERS = 4
#: Pause of each writer after each pair of requests: about 150 requests
#: a second while the database is down, the load under which a ten-second
#: stop once produced 1,562 answers 500 and 135 MB of tracebacks.
PAUSE = 0.05

SERVER = database_servers.for_this_pass()
pytestmark = pytest.mark.skipif(
    SERVER is None, reason='runs in the PostgreSQL and MySQL passes, with '
                           'a server of its own of that kind')


@pytest.fixture(scope='module')
def database_server():
    server = SERVER()
    try:
        server.start()
        yield server
    finally:
        server.destroy()


#: gunicorn's default worker, and the gevent worker the installation
#: guide offers (green database waits: placement.db.green).
WORKER_ARGS = {'sync': (), 'gevent': ('--worker-class', 'gevent')}


@pytest.fixture(params=sorted(WORKER_ARGS))
def service(request, database_server, tmp_path):
    url = database_server.create_database(
        'outage_%s' % uuid.uuid4().hex[:8])
    with gunicorn_server.GunicornServer(
            url, tmp_path / 'gunicorn.log', workers=2,
            environment={'OS_API__HEALTHCHECK_CACHE_TIME': CACHE_TIME},
            gunicorn_args=WORKER_ARGS[request.param]) as server:
        yield server


class Writers:
    """Threads that create providers and allocate from one provider,
    recording every answer, until stopped."""

    def __init__(self, server, provider):
        self.server = server
        self.provider = provider
        self.answers = []  # (kind, id, status, headers, body)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True)
                         for _ in range(WRITERS)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def _run(self):
        while not self._stop.is_set():
            for kind, ident, method, path, body in self._requests():
                try:
                    status, headers, answer = self.server.request(
                        method, path, body)
                except Exception as exc:  # No answer at all is a failure.
                    status, headers, answer = None, {}, repr(exc)
                self.answers.append((kind, ident, status, headers, answer))
            time.sleep(PAUSE)

    def _requests(self):
        name = uuid.uuid4().hex
        consumer = str(uuid.uuid4())
        yield ('provider', name, 'POST', '/resource_providers',
               {'name': name})
        yield ('consumer', consumer, 'PUT', '/allocations/%s' % consumer,
               {'allocations': {self.provider: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    def statuses(self, since=0):
        return [answer[2] for answer in self.answers[since:]]


def _ok(status):
    return status is not None and 200 <= status < 300


def test_outage_under_concurrent_writes(database_server, service):
    status, _h, body = service.request(
        'POST', '/resource_providers', {'name': 'pool'})
    assert status == 200, body
    provider = body['uuid']
    status, _h, body = service.request(
        'PUT', '/resource_providers/%s/inventories' % provider,
        {'resource_provider_generation': 0,
         'inventories': {'VCPU': {'total': 1000000}}})
    assert status == 200, body

    with Writers(service, provider) as writers:
        time.sleep(1)
        assert _ok(writers.statuses()[-1]), writers.answers[-1]
        log_size = os.path.getsize(service.log_path)
        stopped_at = len(writers.answers)
        database_server.stop()
        time.sleep(OUTAGE)
        during = writers.statuses(stopped_at)
        log_growth = os.path.getsize(service.log_path) - log_size
        with open(service.log_path, 'rb') as log:
            log.seek(log_size)
            log_lines = log.read(log_growth).count(b'\n')
        database_server.start()
        restarted_at = len(writers.answers)
        # Recovery without a restart: successes again within seconds.
        deadline = time.monotonic() + 15
        while not any(_ok(s) for s in writers.statuses(restarted_at)):
            assert time.monotonic() < deadline, writers.answers[-3:]
            time.sleep(0.2)
        time.sleep(1)

    statuses = writers.statuses()
    unexpected = [a for a in writers.answers
                  if not (_ok(a[2]) or a[2] == 503)]
    assert unexpected == [], unexpected[:5]
    failed = [a for a in writers.answers if a[2] == 503]
    # The outage was real, and answered as one.
    assert len(failed) >= 50, (len(failed), len(during))
    assert during.count(503) >= len(during) - 2 * WRITERS * 2
    for _kind, _id, _status, headers, body in failed:
        assert int(headers['retry-after']) > 0
        assert body['errors'][0]['code'] == 'placement.database_unavailable'
    assert log_growth < 1024 * 1024, log_growth
    # One line per request answered while the database was down (give
    # or take those in flight at the edges), nothing else.
    assert log_lines <= len(during) + 2 * WRITERS, (log_lines, len(during))
    assert 'Traceback' not in open(service.log_path).read()
    # One WARNING line per failed request.
    with open(service.log_path) as log:
        warnings = [line for line in log
                    if 'status: 503' in line and 'failure: ' in line]
    assert len(warnings) == len(failed)

    # Every acknowledged write is stored.
    status, _h, body = service.request('GET', '/resource_providers')
    assert status == 200
    names = {p['name'] for p in body['resource_providers']}
    status, _h, body = service.request(
        'GET', '/resource_providers/%s/allocations' % provider)
    assert status == 200
    consumers = set(body['allocations'])
    acknowledged = [a for a in writers.answers if _ok(a[2])]
    missing = [a[:2] for a in acknowledged
               if a[1] not in (names if a[0] == 'provider' else consumers)]
    assert missing == []
    print('answers: %d, 2xx: %d, 503: %d, log growth during outage: %d '
          'bytes' % (len(statuses), len(acknowledged), len(failed),
                     log_growth))


def _health(server, token=None, timeout=30):
    """(status, body text, seconds) of one GET /healthcheck."""
    connection = http.client.HTTPConnection('127.0.0.1', server.port,
                                            timeout=timeout)
    headers = {'x-auth-token': token} if token else {}
    started = time.monotonic()
    try:
        connection.request('GET', '/healthcheck', headers=headers)
        response = connection.getresponse()
        return (response.status, response.read().decode(),
                time.monotonic() - started)
    finally:
        connection.close()


def _health_until(server, status, seconds=10):
    deadline = time.monotonic() + seconds
    while True:
        answer = _health(server)
        # Bounded probe: its one-second timeout plus what a loaded test
        # machine adds, never the driver's own connect timeout.
        assert answer[2] < 3.0, answer
        if answer[0] == status or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_healthcheck_follows_the_database(database_server, service):
    assert _health(service)[:2] == (200, 'OK')
    database_server.stop()
    try:
        assert _health_until(service, 503)[:2] == (
            503, 'Database unavailable')
        # Each worker caches its own answer: let the other's expire too.
        time.sleep(float(CACHE_TIME) + 0.2)
        status, body, _seconds = _health(service, token='admin')
        details = json.loads(body)['database']
        assert (status, details['reachable'], details['dialect']) == (
            503, False, fixtures.backend_name())
        # The driver's refusal, or the probe's own timeout on a machine
        # too loaded to see it within a second.
        assert details['error'].startswith(
            ('Database unavailable (', 'no answer within')), details
    finally:
        database_server.start()
    assert _health_until(service, 200)[:2] == (200, 'OK')
    time.sleep(float(CACHE_TIME) + 0.2)
    status, body, _seconds = _health(service, token='admin')
    assert json.loads(body)['database']['reachable'] is True


def test_healthcheck_answers_in_time_while_the_database_hangs(
        database_server, service):
    """A server that accepts connections and answers nothing (stopped,
    as on a host out of memory) must not hold the health check, nor
    requests that need no database, beyond the check's own timeout:
    under the gevent worker that needs psycopg2's waits to be green
    (placement.db.green)."""
    assert _health(service)[:2] == (200, 'OK')
    with database_server.frozen():
        time.sleep(float(CACHE_TIME) + 0.2)  # cached answers expire
        # Both workers, and probes still hanging from earlier checks.
        for _attempt in range(4):
            status, body, seconds = _health(service, timeout=10)
            assert (status, body) == (503, 'Database unavailable')
            assert seconds < 3.0, seconds
            assert service.request('GET', '/')[0] == 200
            time.sleep(float(CACHE_TIME))
    assert _health_until(service, 200)[:2] == (200, 'OK')
