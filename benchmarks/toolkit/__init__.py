"""What every benchmark needs, in one place; the scripts beside this
package measure, this package serves them:

``servers``
    our server, upstream Placement 16.0.0, or both side by side, under
    gunicorn on databases of their own (``side_by_side``), or on SQLite
    files a benchmark fills between starts (``on_sqlite_files``);
``labels``
    how reports name the servers: ours, upstream, or ``--url LABEL=``;
``hello_app``
    the smallest WSGI application, for what gunicorn alone costs;
``inprocess``
    the application in this process, built as gunicorn's worker builds it,
    and a request through it as a WSGI server passes one;
``http_loop``
    many concurrent HTTP exchanges from one thread;
``cloud_api``, ``cloud_rows``, ``small_requests``
    the clouds benchmarks build: over the API, or as bulk rows in the
    database; the one provider and paths of the small GETs;
``perfload``
    upstream's perfload job: its cloud and its candidates query;
``mix_requests``
    one request of each kind of the cloud mix on a small flat cloud, in
    process or over HTTP;
``allocation_load``, ``allocation_ledger``
    concurrent allocation writes, and what clients were told about them
    checked against the server's state;
``cloud_state``
    a cloud read back after a load that kept no ledger, checked for
    what every state must hold (usages, capacities, candidates);
``proc_cpu``, ``endpoint_cpu``
    server CPU per request, per process tree and per kind of request
    (and the workers' memory);
``db_server``
    the database server read from outside: its processes' CPU, the
    statements it ran, each database's size; HAProxy over a Galera
    cluster's nodes;
``stats``
    percentiles, one definition for every report.

The HTTP client itself (``placement.tests.placement_http``) and the
gunicorn starters (``placement.tests.gunicorn_server``,
``placement.tests.upstream``) live with the tests, which use them too;
nothing under ``placement/`` imports ``benchmarks``.
"""
