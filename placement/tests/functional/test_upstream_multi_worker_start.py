"""Upstream 16.0.0 with several workers starts on a fresh SQLite file.

Its workers each write the standard traits they lack as they boot, and
one that meets the file locked by another writer fails to boot, which
stops the whole gunicorn: two workers booting at once broke the
side-by-side benchmarks at random. ``UpstreamServer`` therefore boots
one worker alone first on SQLite, so that the workers started after it
only read. The test holds the file's write lock while those boot: were
any of them to write, the server would be gone.
"""

import os
import sqlite3
import time

import pytest

from placement.tests import fixtures
from placement.tests import upstream
from placement.tests.functional.test_upstream_upgrade_rollback import (
    upstream_venv)  # noqa: F401 (a fixture)


class LockedAtFullStart(upstream.UpstreamServer):
    """Takes the SQLite write lock just before gunicorn starts with all
    its workers."""

    lock = None

    def _command_and_env(self):
        if self.workers > 1 and self.lock is None:
            self.lock = sqlite3.connect(self.db_url[len('sqlite:///'):],
                                        isolation_level=None)
            self.lock.execute('BEGIN IMMEDIATE')
        return super()._command_and_env()


@pytest.mark.skipif(fixtures.backend_name() != 'sqlite',
                    reason='the race is particular to an SQLite file')
def test_workers_boot_without_writing(
        upstream_venv, tmp_path):  # noqa: F811 (the fixture)
    db_url = 'sqlite:///%s' % (tmp_path / 'upstream.sqlite')
    workdir = str(tmp_path)
    conf = upstream.write_config(os.path.join(workdir, 'upstream.conf'),
                                 db_url)
    upstream.manage(upstream_venv, conf, workdir, 'db', 'sync')
    server = LockedAtFullStart(upstream_venv, db_url, workdir,
                               str(tmp_path / 'upstream.log'), workers=2)
    try:
        with upstream.serving(server):
            server.wait_for_workers()
            time.sleep(2)  # both workers have loaded the application
            assert server._process.poll() is None, server.log()
            server.lock.execute('COMMIT')
            status, _headers, body = server.request('GET', '/traits')
            assert status == 200 and 'COMPUTE_NODE' in body['traits']
    finally:
        if server.lock is not None:
            server.lock.close()
