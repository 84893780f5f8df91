"""Server CPU per kind of request, measured inside gunicorn's workers.

A benchmark's server CPU per request (``proc_cpu``) says how much a mix
costs, not which requests cost it. This file is also a gunicorn
configuration file: given to a gunicorn with ``-c`` and with
``$PLACEMENT_BENCH_ENDPOINT_CPU`` naming a directory, its hooks add up
each worker's thread CPU time from ``pre_request`` to ``post_request``
(the application and gunicorn writing its response, not accepting and
closing the connection) per kind of request: the method, the path with
uuids as ``{uuid}`` and the names of the query parameters. Each worker
writes its totals to ``<directory>/<master pid>-<worker pid>.json`` at
most every ``WRITE_EVERY`` seconds, after a request, and when it exits,
so a step's last ``WRITE_EVERY`` seconds of requests may be counted in
the next step. Standard library only: upstream's gunicorn reads the same
file.

``cloud_traffic --endpoint-cpu`` uses it for both servers and prints
the kinds that cost most per step.
"""

import glob
import json
import os
import re
import threading
import time

ENV = 'PLACEMENT_BENCH_ENDPOINT_CPU'
#: Seconds between two writes of a worker's totals.
WRITE_EVERY = 0.25
_UUID = re.compile(r'[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   r'[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}')

_totals = {}                # kind -> [requests, seconds]
_state = {'written': 0.0}
# A threaded worker (gthread) runs several requests at once, each hook
# pair in the request's thread.
_started = threading.local()
_lock = threading.Lock()


def kind(method, path, query):
    """``GET /resource_providers/{uuid}/traits``, ``GET
    /resource_providers?in_tree``: what a request is, without its
    values."""
    names = sorted({part.split('=', 1)[0]
                    for part in query.split('&') if part})
    text = '%s %s' % (method, _UUID.sub('{uuid}', path))
    return text + '?' + '&'.join(names) if names else text


def _write(directory):
    name = os.path.join(directory, '%d-%d.json' % (os.getppid(),
                                                    os.getpid()))
    with open(name + '.tmp', 'w') as out:
        json.dump(_totals, out)
    os.replace(name + '.tmp', name)


# -- gunicorn hooks ----------------------------------------------------------

def pre_request(worker, req):
    _started.cpu = time.thread_time()


def post_request(worker, req, environ, resp):
    spent = time.thread_time() - _started.cpu
    name = kind(req.method, req.path, req.query or '')
    directory = os.environ.get(ENV)
    now = time.monotonic()
    with _lock:
        entry = _totals.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += spent
        if directory and now - _state['written'] >= WRITE_EVERY:
            _state['written'] = now
            _write(directory)


def worker_exit(server, worker):
    directory = os.environ.get(ENV)
    if directory:
        with _lock:
            _write(directory)


# -- reading -----------------------------------------------------------------

def snapshot(directory, master):
    """{kind: (requests, seconds)} of the workers of gunicorn ``master``
    so far (workers that exited included)."""
    found = {}
    for name in glob.glob(os.path.join(directory, '%d-*.json' % master)):
        try:
            with open(name) as data:
                totals = json.load(data)
        except (OSError, ValueError):
            continue
        for key, (requests, seconds) in totals.items():
            before = found.get(key, (0, 0.0))
            found[key] = (before[0] + requests, before[1] + seconds)
    return found


def difference(after, before):
    """What ``after`` adds to ``before`` (two snapshots)."""
    found = {}
    for key, (requests, seconds) in after.items():
        old = before.get(key, (0, 0.0))
        if requests > old[0]:
            found[key] = (requests - old[0], seconds - old[1])
    return found


def lines(spent, top=12):
    """The ``top`` kinds by CPU spent: requests, ms per request, share."""
    total = sum(seconds for _requests, seconds in spent.values())
    ranked = sorted(spent.items(), key=lambda item: -item[1][1])[:top]
    return ['    %-58s n %6d  %6.3f ms/req  %5.1f%%' % (
        key[:58], requests, seconds * 1000 / requests,
        100 * seconds / total if total else 0.0)
        for key, (requests, seconds) in ranked]
