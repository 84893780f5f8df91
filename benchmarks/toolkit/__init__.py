"""What every benchmark needs, in one place; the scripts beside this
package measure, this package serves them:

``servers``
    our server, upstream Placement 16.0.0, or both side by side, under
    gunicorn on databases of their own;
``inprocess``
    the application in this process, built as gunicorn's worker builds it;
``http_loop``
    many concurrent HTTP exchanges from one thread;
``proc_cpu``, ``endpoint_cpu``
    server CPU per request, per process tree and per kind of request;
``stats``
    percentiles, one definition for every report;
``allocation_ledger``
    what clients were told about their writes, checked against the
    server's state.

The HTTP client itself (``placement.tests.placement_http``) and the
gunicorn starters (``placement.tests.gunicorn_server``,
``placement.tests.upstream``) live with the tests, which use them too;
nothing under ``placement/`` imports ``benchmarks``.
"""
