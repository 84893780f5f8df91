"""Start-up of the application when the database is not there."""

import logging
import threading
import time

import pytest
from sqlalchemy import exc as sa_exc
import webob

from placement import deploy
from placement import exception
from placement.tests import fixtures
from placement.tests.sqlite_outage import SQLiteOutage


@pytest.fixture
def outage(tmp_path):
    database = SQLiteOutage(tmp_path)
    yield database
    database.db.dispose()


def _get(app, path):
    req = webob.Request.blank(path, headers={'x-auth-token': 'admin'})
    return req.get_response(app)


def test_start_up_work_waits_for_the_database(outage, caplog):
    # A gunicorn worker respawned during an outage: the database went
    # away after the process was configured.
    conf = fixtures.new_conf(placement_database__retry_interval=1,
                             placement_database__max_retries=-1)
    outage.stop()
    comeback = threading.Timer(1.5, outage.start)
    comeback.start()
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger='placement'):
        app = deploy.loadapp(conf, db=outage.db)
    comeback.join()
    assert time.monotonic() - started >= 1.5
    assert _get(app, '/resource_providers').status_int == 200
    assert 'Database unavailable during start-up (attempt 1)' in caplog.text
    assert 'Traceback' not in caplog.text


def test_start_up_work_gives_up_after_max_retries(outage):
    conf = fixtures.new_conf(placement_database__retry_interval=1,
                             placement_database__max_retries=0)
    outage.stop()
    with pytest.raises((exception.DatabaseUnavailable,
                        sa_exc.OperationalError)):
        deploy.loadapp(conf, db=outage.db)
