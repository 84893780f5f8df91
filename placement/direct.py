"""Talk to placement in process through a keystoneauth1 Adapter.

For tools and tests that want placement's API without running a server:
``PlacementDirect`` builds the application from a configuration and
makes it answer at a private URL that only ``requests`` in this process
reaches (wsgi-intercept), for as long as the ``with`` block lasts.
"""

import uuid

from keystoneauth1 import adapter
from keystoneauth1 import session
from wsgi_intercept import interceptor

from placement import deploy


class PlacementDirect(interceptor.RequestsInterceptor):
    """``with PlacementDirect(conf) as client:`` gives an Adapter.

    ``conf`` is a ``ConfigOpts`` with placement's options registered and
    a database configured (its schema at the latest revision). The
    adapter needs no service catalog; requests still carry
    ``x-auth-token`` under noauth2. With ``latest_microversion`` it asks
    for the latest microversion unless a request says otherwise.
    """

    def __init__(self, conf, latest_microversion=False):
        self.conf = conf
        self.latest_microversion = latest_microversion
        self._db = self._app = None
        # wsgi-intercept asks for the app once per connection: hand it
        # the one built on entry.
        super().__init__(lambda: self._app,
                         url='http://%s/placement' % uuid.uuid4())

    def __enter__(self):
        self._db = deploy.create_database(self.conf)
        try:
            self._app = deploy.loadapp(self.conf, self._db)
            super().__enter__()
        except BaseException:
            self._close()
            raise
        return adapter.Adapter(
            session.Session(auth=None), service_type='placement',
            endpoint_override=self.url,
            default_microversion=(
                'latest' if self.latest_microversion else None),
            raise_exc=False)

    def __exit__(self, *exc_info):
        try:
            super().__exit__(*exc_info)
        finally:
            self._close()

    def _close(self):
        if self._db is not None:
            self._db.dispose()
        self._db = self._app = None
