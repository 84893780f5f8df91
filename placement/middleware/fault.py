"""The fault wrapper: any exception left becomes a 500 in the error format."""

import logging

from placement import microversion
from placement.middleware import requestlog
from placement.web import errors

LOG = logging.getLogger(__name__)


class FaultWrapper:
    """Turn any unexpected exception into a 500 in the placement format."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            return self.application(environ, start_response)
        except Exception:
            LOG.exception('Unexpected error handling %s %s',
                          environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            # The exception's text (SQL, driver messages) is for the log
            # only (see api-ref/behaviour-choices.rst, 'Server errors').
            error = errors.render(
                errors.InternalServerError(errors.SERVER_ERROR), environ,
                environ.get(requestlog.ENVIRON_REQUEST_ID),
                environ.get(microversion.ENVIRON_KEY))
            return error(environ, start_response)
