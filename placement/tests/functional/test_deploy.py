"""Start-up of the application when the database is not there."""

import logging
import threading
import time

import pytest
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
    assert ('Waiting for the database at start-up (attempt 1): Database '
            'unavailable (OperationalError: unable to open database file)'
            in caplog.text)
    assert 'Traceback' not in caplog.text


def test_start_up_work_gives_up_after_max_retries(outage):
    conf = fixtures.new_conf(placement_database__retry_interval=1,
                             placement_database__max_retries=0)
    outage.stop()
    with pytest.raises(exception.DatabaseUnavailable):
        deploy.loadapp(conf, db=outage.db)


def test_first_connection_waits_for_the_database(tmp_path, caplog):
    missing = tmp_path / 'not-yet'
    conf = fixtures.new_conf(
        placement_database__connection='sqlite:///%s' % (
            missing / 'placement.sqlite'),
        placement_database__retry_interval=1)
    comeback = threading.Timer(1.5, missing.mkdir)
    comeback.start()
    with caplog.at_level(logging.WARNING, logger='placement'):
        db = deploy.create_database(conf)
    comeback.join()
    db.ping()
    db.dispose()
    # Only placement's own lines: an earlier test in the same process may
    # have left another logger (SQLAlchemy's engine echo) at INFO.
    lines = [r.getMessage() for r in caplog.records
             if r.name.startswith('placement')]
    assert 1 <= len(lines) <= 2, lines
    assert lines[0] == (
        'Waiting for the database at start-up (attempt 1): Database '
        'unavailable (OperationalError: unable to open database file)')
