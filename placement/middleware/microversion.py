"""Microversion negotiation: parse ``OpenStack-API-Version``, echo it."""

from placement import microversion
from placement.middleware import requestlog
from placement.web import errors

#: Set to False by the application for responses that lack ``Vary``.
ENVIRON_VARY = 'placement.vary'


def _request_id(environ):
    return environ.get(requestlog.ENVIRON_REQUEST_ID)


class Microversion:
    """Negotiate the microversion and echo it on every response.

    Parse failures answer 400/406 without ``code`` and without version
    headers (api-ref/general.rst, 'Microversions').
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            version = microversion.from_header(
                environ.get('HTTP_OPENSTACK_API_VERSION'))
        except microversion.InvalidVersion as exc:
            error = errors.BadRequest('Invalid microversion: %s' % exc)
            return errors.render(error, environ, _request_id(environ))(
                environ, start_response)
        except microversion.UnacceptableVersion as exc:
            error = errors.NotAcceptable('Invalid microversion: %s' % exc)
            extra = {'max_version': str(microversion.MAX_VERSION),
                     'min_version': str(microversion.MIN_VERSION)}
            return errors.render(error, environ, _request_id(environ),
                                 extra=extra)(environ, start_response)
        environ[microversion.ENVIRON_KEY] = version
        echo = '%s %s' % (microversion.SERVICE_TYPE, version)

        def _start_response(status, headers, exc_info=None):
            headers.append((microversion.HEADER, echo))
            if environ.get(ENVIRON_VARY, True):
                headers.append(('vary', microversion.HEADER))
            return start_response(status, headers, exc_info)

        return self.application(environ, _start_response)
