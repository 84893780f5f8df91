"""The smallest WSGI application: what gunicorn alone costs per request.

``benchmarks.idle_wakeups`` serves it next to ours, so that the cost of
the server and the kernel (accepting, parsing, answering, waking up) is
measured apart from the application's. Standard library only.
"""

BODY = b'{"ok": true}'


def application(environ, start_response):
    start_response('200 OK', [('Content-Type', 'application/json'),
                              ('Content-Length', str(len(BODY)))])
    return [BODY]
