"""The application in process, for the benchmarks that call it without
a server: built as gunicorn's worker builds it (``deploy.loadapp``:
start-up work, then the middleware pipeline), on a migrated database,
``noauth2``, configured by ``group__option`` overrides."""

import time

import webob

from placement import deploy
from placement.db import api as db_api
from placement.db import migration
from placement.observability import log_format
from placement.tests import fixtures


def database(url):
    """The database at ``url``, migrated to the head revision."""
    db = db_api.Database(url)
    migration.upgrade(db)
    return db


def application(db, log_file=None, **overrides):
    """The WSGI application on ``db``; with ``log_file``, logging is set
    up as ``placement.wsgi.api`` sets it up, into that file."""
    conf = fixtures.new_conf(**overrides)
    if log_file is not None:
        conf.set_override('log_file', log_file)
        log_format.setup(conf)
    return deploy.loadapp(conf, db)


def timed_get(app, path, expect=200, headers=None):
    """(seconds, response) of one ``GET path`` through ``app`` from
    127.0.0.1 (which the metrics pages answer); AssertionError unless it
    answered ``expect``."""
    req = webob.Request.blank(path, remote_addr='127.0.0.1',
                              headers=headers)
    start = time.perf_counter()
    resp = req.get_response(app)
    elapsed = time.perf_counter() - start
    assert resp.status_int == expect, resp.text[:300]
    return elapsed, resp
