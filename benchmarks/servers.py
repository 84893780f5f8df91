"""Start this checkout and upstream Placement 16.0.0 side by side.

For benchmarks that must compare both servers in one run (timings on a
shared machine drift over minutes, so separate runs do not compare).
Each server runs under gunicorn with ``workers`` processes, ``noauth2``
and a fresh database of its own: an SQLite file in a temporary
directory, or, when ``PLACEMENT_TEST_DB_URL`` names a database server
(``tools/with-postgresql.sh`` / ``tools/with-mysql.sh`` export it), a
new database on that server. Upstream runs from its own virtualenv
(``placement/tests/upstream.py`` creates or reuses it), as a black box.
"""

import contextlib
import dataclasses
import os
import tempfile

from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import upstream


@dataclasses.dataclass
class Served:
    """A started server: ``pid`` is the gunicorn master's."""

    label: str
    url: str
    pid: int


def _database(tmp, name):
    url = fixtures.server_url()
    if url:
        return fixtures.create_server_database(url, 'bench_' + name)
    return 'sqlite:///%s' % os.path.join(tmp, name + '.sqlite')


@contextlib.contextmanager
def side_by_side(workers=2, with_upstream=True, timeout=300):
    """Yield [Served] (ours, then upstream), stopped however it ends.

    ``timeout`` is gunicorn's worker timeout: above the client's, so
    that the client decides when a request took too long.
    """
    args = ['--timeout', str(int(timeout))]
    with tempfile.TemporaryDirectory(prefix='bench-servers.') as tmp:
        with contextlib.ExitStack() as stack:
            ours = gunicorn_server.GunicornServer(
                _database(tmp, 'ours'), os.path.join(tmp, 'ours.log'),
                workers=workers, gunicorn_args=args)
            # gunicorn puts its working directory on sys.path.
            ours.cwd = tmp
            stack.enter_context(ours)
            served = [Served('ours', ours.url, ours._process.pid)]
            if with_upstream:
                venv = upstream.ensure_venv(tmp)
                db_url = _database(tmp, 'upstream')
                config = upstream.write_config(
                    os.path.join(tmp, 'upstream.conf'), db_url)
                upstream.manage(venv, config, tmp, 'db', 'sync')
                theirs = upstream.UpstreamServer(
                    venv, db_url, tmp, os.path.join(tmp, 'upstream.log'),
                    workers=workers)
                stack.enter_context(theirs)
                served.append(Served('upstream', theirs.url,
                                     theirs._process.pid))
            yield served
