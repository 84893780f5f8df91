"""``GET``/``HEAD /healthcheck`` for load balancers.

It follows oslo.middleware's health check convention (the path, ``200``
with the body ``OK`` when healthy, ``503`` when not, ``204`` for a healthy
``HEAD``) but is a middleware of ours: oslo.middleware's loads its
backends by stevedore entry point and shows details by configuration,
while ours has one backend, the database, and shows details by policy.

Healthy means the database answers a trivial query within
``[api] healthcheck_timeout`` seconds. The answer is reused for
``[api] healthcheck_cache_time`` seconds and at most one probe per
process is ever in flight, so however often load balancers poll, the
database sees at most one query per process per cache period. The check
needs no token; callers that send one and pass the policy rule
``placement:healthcheck:details`` get a JSON document explaining the
answer.
"""

import json
import threading
import time
import typing

import webob

from placement import exception
from placement.middleware import auth
from placement.openapi import contract
from placement.policies import healthcheck as healthcheck_policy
from placement.schemas import healthcheck as schema

PATH = '/healthcheck'
UNHEALTHY = 'Database unavailable'

_ANSWER = [contract.Media('text/plain'),
           contract.Media(contract.JSON, schema.DETAILS)]
#: What this middleware serves, for the OpenAPI document: a text answer,
#: or the details to callers the policy allows.
OPERATIONS = {
    'GET': contract.Contract(
        {200: _ANSWER, 503: _ANSWER}, token_optional=True, extension=True,
        summary='Whether this process can use its database'),
    'HEAD': contract.Contract(
        {204: None, 503: None}, token_optional=True, extension=True,
        summary='Whether this process can use its database, no body'),
}


class Result(typing.NamedTuple):
    """One probe's outcome; ``latency`` in seconds, None without answer."""

    reachable: bool
    latency: typing.Optional[float]
    error: typing.Optional[str]
    checked_at: float


class _Attempt:
    """A probe running in a thread of its own, so callers can stop
    waiting for it without stopping it."""

    def __init__(self, db, clock):
        self.started = clock()
        self.done = threading.Event()
        self.result = None
        self._db = db
        self._clock = clock
        threading.Thread(target=self._run, name='placement-healthcheck',
                         daemon=True).start()

    def _run(self):
        try:
            self._db.ping()
        except exception.DatabaseUnavailable as exc:
            self.result = (False, None, str(exc))
        except Exception as exc:  # Whatever it is, the check says why.
            self.result = (False, None, '%s: %s' % (
                type(exc).__name__, str(exc).splitlines()[0]
                if str(exc) else ''))
        else:
            self.result = (True, self._clock() - self.started, None)
        self.done.set()


class DatabaseProbe:
    """Whether the database answers, asked at most once per cache period
    and never by more than one thread at a time."""

    def __init__(self, db, timeout, cache_time, clock=time.monotonic):
        self.db = db
        self.timeout = timeout
        self.cache_time = cache_time
        self._clock = clock
        self._lock = threading.Lock()
        self._result = None
        self._attempt = None

    def check(self):
        """The latest Result, probing first if it is older than the cache
        period; returns within ``timeout`` seconds."""
        with self._lock:
            now = self._clock()
            if (self._result is not None
                    and now - self._result.checked_at < self.cache_time):
                return self._result
            if self._attempt is None or self._attempt.done.is_set():
                self._attempt = _Attempt(self.db, self._clock)
            attempt = self._attempt
        # A probe still hanging from an earlier check gets only what is
        # left of its own time, so it never makes callers wait longer.
        attempt.done.wait(max(0.0, attempt.started + self.timeout
                              - self._clock()))
        if attempt.done.is_set():
            reachable, latency, error = attempt.result
        else:
            reachable, latency, error = (
                False, None, 'no answer within %.1f s' % self.timeout)
        result = Result(reachable, latency, error, self._clock())
        with self._lock:
            self._result = result
        return result

    def age(self, result):
        """Seconds since ``result`` was established."""
        return max(0.0, self._clock() - result.checked_at)


class HealthCheck:
    """Answer ``/healthcheck``; pass everything else on.

    It sits inside the context builder, which lets tokenless requests for
    this path through (see ``placement.middleware.auth``), and outside
    microversion negotiation: the check is not versioned.
    """

    def __init__(self, application, probe):
        self.application = application
        self.probe = probe

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO') != PATH:
            return self.application(environ, start_response)
        return self._answer(webob.Request(environ))(environ, start_response)

    def _answer(self, req):
        if req.method not in ('GET', 'HEAD'):
            return webob.Response(status=405, allow='GET, HEAD',
                                  content_type='text/plain', charset='utf-8',
                                  text='Only GET and HEAD are allowed.')
        result = self.probe.check()
        status = 200 if result.reachable else 503
        if req.method == 'HEAD':
            response = webob.Response(status=204 if result.reachable
                                      else 503)
        elif self._details_allowed(req):
            response = webob.Response(
                status=status, content_type='application/json',
                charset=None, body=json.dumps(
                    self._details(result)).encode())
        else:
            response = webob.Response(
                status=status, content_type='text/plain', charset='utf-8',
                text='OK' if result.reachable else UNHEALTHY)
        response.cache_control = 'no-cache'
        return response

    @staticmethod
    def _details_allowed(req):
        ctx = req.environ.get(auth.ENVIRON_CONTEXT)
        if ctx is None or ctx.user_id is None:
            return False
        return ctx.policy.allows(ctx, healthcheck_policy.DETAILS, {
            'project_id': ctx.project_id, 'user_id': ctx.user_id})

    def _details(self, result):
        return {
            'status': 'OK' if result.reachable else UNHEALTHY,
            'database': {
                'reachable': result.reachable,
                'dialect': self.probe.db.dialect,
                'latency_ms': (None if result.latency is None
                               else round(result.latency * 1000, 1)),
                'error': result.error,
                'age_s': round(self.probe.age(result), 1),
            },
        }
