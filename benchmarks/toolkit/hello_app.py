"""The smallest WSGI application: what gunicorn alone costs per request.

``benchmarks.idle_wakeups`` serves it next to ours, so that the cost of
the server and the kernel (accepting, parsing, answering, waking up) is
measured apart from the application's. With ``$BODY_FILE_ENV`` naming a
file it answers that file's bytes instead, read once at start-up:
``benchmarks.allocation_candidates --static-floor`` serves ours' own
answer that way, to measure what sending it costs gunicorn and the
kernel. Standard library only.
"""

import os

#: What gunicorn is told to serve.
APPLICATION = 'benchmarks.toolkit.hello_app:application'
#: The variable naming a file whose bytes every answer carries.
BODY_FILE_ENV = 'PLACEMENT_BENCH_BODY_FILE'
BODY = b'{"ok": true}'


def body(environ=os.environ):
    """The answer's bytes: the file ``$BODY_FILE_ENV`` names, else
    ``BODY``."""
    path = environ.get(BODY_FILE_ENV)
    if not path:
        return BODY
    with open(path, 'rb') as source:
        return source.read()


_BODY = body()


def application(environ, start_response):
    start_response('200 OK', [('Content-Type', 'application/json'),
                              ('Content-Length', str(len(_BODY)))])
    return [_BODY]
