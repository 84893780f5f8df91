"""noauth2 announces itself whenever an application is built with it."""

import logging

from placement.middleware import auth


def test_noauth2_warns_when_built(caplog):
    with caplog.at_level(logging.WARNING, logger='placement.middleware.auth'):
        auth.NoAuth(lambda environ, start_response: [])
    assert [r.levelname for r in caplog.records] == ['WARNING']
    assert 'requests are NOT authenticated' in caplog.records[0].getMessage()
