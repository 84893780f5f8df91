"""Every log line names the request it was written for.

The lines are formatted by oslo.log's context-aware formatter, as a
deployment formats them, from the thread's current oslo.context.
"""

import logging

from keystonemiddleware import fixture as keystone_fixture
from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_log import formatters
from oslo_log import log as oslo_log
import pytest
import webob

from placement.middleware import requestlog
from placement.tests import fixtures

FORMAT = 'ctx %(request_id)s %(global_request_id)s %(user)s %(project)s'
DEFAULT_FORMAT = 'ctx none'


class _Lines(logging.Handler):
    """Formatted lines of every record, in order."""

    def __init__(self, formatter):
        super().__init__(logging.DEBUG)
        self.setFormatter(formatter)
        self.lines = []

    def emit(self, record):
        self.lines.append(self.format(record))


@pytest.fixture
def app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(), db)
    cleanup()


@pytest.fixture
def lines():
    conf = cfg.ConfigOpts()
    oslo_log.register_options(conf)
    conf([], default_config_files=[])
    conf.set_override('logging_context_format_string', FORMAT)
    conf.set_override('logging_default_format_string', DEFAULT_FORMAT)
    handler = _Lines(formatters.ContextFormatter(config=conf))
    loggers = [logging.getLogger(name)
               for name in ('placement', 'keystonemiddleware')]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)
    yield handler.lines
    for logger, level in zip(loggers, levels):
        logger.removeHandler(handler)
        logger.setLevel(level)


def _get(app, path, **headers):
    req = webob.Request.blank(path)
    req.headers.update(headers)
    return req.get_response(app)


GLOBAL_ID = 'req-11111111-2222-3333-4444-555555555555'


# 404, 400 and 406 are decided after the context builder in today's stack;
# they are here so that moving a layer outwards cannot bring the bug back.
@pytest.mark.parametrize('path, headers, status', [
    ('/traits', {}, 401),
    ('/nowhere', {'x-auth-token': 'admin'}, 404),
    ('/traits', {'x-auth-token': 'admin',
                 'openstack-api-version': 'placement 1.a'}, 400),
    ('/traits', {'x-auth-token': 'admin',
                 'openstack-api-version': 'placement 9.0'}, 406),
], ids=['401', '404-route', '400-microversion', '406'])
def test_early_rejection_is_logged_under_its_own_request(
        app, lines, path, headers, status):
    first = _get(app, '/resource_providers',
                 **{'x-auth-token': 'alice:p1', 'x-roles': 'admin'})
    assert first.status_int == 200
    second = _get(app, path, **{'x-openstack-request-id': GLOBAL_ID},
                  **headers)
    assert second.status_int == status
    first_id = first.headers['x-openstack-request-id']
    second_id = second.headers['x-openstack-request-id']
    assert lines[0].startswith('ctx %s None alice p1' % first_id), lines
    assert len(lines) == 2, lines
    # Nothing of the first request leaks into the second's line: not its
    # id, not its user (the second has no known user before auth).
    assert first_id not in lines[1] and 'alice' not in lines[1], lines
    assert lines[1].startswith('ctx %s %s' % (second_id, GLOBAL_ID)), lines


def test_authenticated_line_names_user_and_project(app, lines):
    resp = _get(app, '/resource_providers', **{'x-auth-token': 'bob:p2',
                                   'x-roles': 'admin'})
    assert lines == [
        'ctx %s None bob p2' % resp.headers['x-openstack-request-id']]


def test_context_is_cleared_after_the_request(app, lines):
    requestlog.restore_log_context(None)
    _get(app, '/traits', **{'x-auth-token': 'admin'})
    assert oslo_context.get_current() is None
    logging.getLogger('placement.test').info('outside any request')
    assert lines[-1] == 'ctx none'


def test_a_callers_context_is_current_again_after_the_request(app, lines):
    # In process, the thread serves the host application's own request.
    host = oslo_context.RequestContext(request_id='req-host', user_id='h')
    try:
        _get(app, '/traits', **{'x-auth-token': 'admin'})
        assert oslo_context.get_current() is host
        logging.getLogger('placement.test').info('the host goes on')
        assert lines[-1].startswith('ctx req-host ')
    finally:
        requestlog.restore_log_context(None)


@pytest.fixture
def keystone_app():
    tokens = keystone_fixture.AuthTokenFixture()
    tokens.setUp()
    tokens.add_token_data(token_id='admin-token', user_id='u-admin',
                          project_id='p-admin', role_list=['admin'])
    db, cleanup = fixtures.new_database()
    conf = fixtures.new_conf(
        keystone_authtoken__www_authenticate_uri='https://ks.example')
    conf.set_override('auth_strategy', 'keystone', group='api')
    yield fixtures.new_app(conf, db)
    cleanup()
    tokens.cleanUp()


def test_keystone_rejection_is_logged_under_its_own_request(
        keystone_app, lines):
    first = _get(keystone_app, '/resource_providers',
                 **{'x-auth-token': 'admin-token'})
    assert first.status_int == 200
    assert lines[-1].startswith('ctx %s None u-admin p-admin' % (
        first.headers['x-openstack-request-id']))
    del lines[:]
    second = _get(keystone_app, '/resource_providers',
                  **{'x-auth-token': 'forged-token'})
    assert second.status_int == 401
    # keystonemiddleware's own lines and the request line alike.
    assert lines, lines
    second_id = second.headers['x-openstack-request-id']
    for line in lines:
        assert line.startswith('ctx %s None None None' % second_id), lines
