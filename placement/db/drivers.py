"""Is the database driver a connection URL names installed?

SQLAlchemy picks the driver from the URL scheme: since SQLAlchemy 2.1 a
bare ``postgresql://`` means psycopg 3 and ``mysql://`` means mysqlclient,
while our ``[postgresql]`` and ``[mysql]`` extras install psycopg2 and
PyMySQL. Without this check such a URL fails at the first connection with
an ImportError from deep inside SQLAlchemy; with it the operator is told
which URL to write.
"""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

_HINTS = {
    'postgresql': ' Install placement-server[postgresql] and write '
                  'postgresql+psycopg2://...',
    'mysql': ' Install placement-server[mysql] and write '
             'mysql+pymysql://...',
}


def problem(url):
    """Why ``url``'s driver cannot be used, as a sentence; None if it can.

    The URL itself is never repeated: it may hold a password.
    """
    try:
        parsed = sa.engine.make_url(url)
    except sa_exc.ArgumentError:
        return '[placement_database] connection is not a database URL.'
    try:
        parsed.get_dialect().import_dbapi()
    except sa_exc.NoSuchModuleError:
        return ('[placement_database] connection: unknown database type '
                '"%s://"; use sqlite://, postgresql+psycopg2:// or '
                'mysql+pymysql://.' % parsed.drivername)
    except ImportError as exc:
        return ('[placement_database] connection: the driver for "%s://" '
                'is not installed (%s).%s' % (
                    parsed.drivername, exc,
                    _HINTS.get(parsed.get_backend_name(), '')))
    return None
