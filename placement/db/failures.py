"""What a database error means: a lost conflict, a database that cannot
be used now, a duplicate, a trigger MariaDB failed to load.

The transaction decorators (``db/api.py``) re-run or give up on what
these functions say, and the API answers with what they decide (409,
503); nothing here retries or logs.
"""

from sqlalchemy import exc as sa_exc

from placement.db import tables


# SQLSTATE / driver codes that mean "run the transaction again".
_PG_RETRY_CODES = {'40001', '40P01', '55P03'}


# 1305 "SAVEPOINT does not exist": MariaDB rolled the whole transaction
# back under a savepoint (a Galera node aborts a local transaction that
# conflicts with a replicated one), so releasing or rolling back to the
# savepoint fails; the transaction lost a conflict like a deadlock.
_MYSQL_RETRY_CODES = {1205, 1213, 1305}


# Messages of sqlite3 errors that mean the file cannot be used now.
_SQLITE_UNAVAILABLE = ('unable to open database', 'database is locked',
                       'disk i/o error', 'database or disk is full')


# Tables only our migrations create: missing, they mean the schema was
# taken back down to upstream's (placement-manage db downgrade) under a
# running worker. "Undefined table" in PostgreSQL and MySQL.
_OUR_TABLES = (tables.provider_change_log.name,)


_PG_UNDEFINED_TABLE = '42P01'


_MYSQL_NO_SUCH_TABLE = 1146


# MariaDB loads a table's triggers into each instance of the table it
# caches. When the statement opening a new instance is killed while the
# trigger bodies are parsed (a Galera node aborting a local transaction
# that conflicts with a replicated one kills it), the instance is cached
# with the parse failure, and later statements that are handed it fail
# when a trigger fires: 1064 "Unknown trigger has an error in its body:
# 'Query was empty'", though the stored trigger is sound. 1710 and 1711
# are the same condition's own codes.
_MYSQL_TRIGGER_BODY_CODES = {1064, 1710, 1711}


_MYSQL_TRIGGER_BODY_SIGN = 'has an error in its body'


def is_retryable(exc):
    """True for errors after which re-running the transaction may work."""
    if not isinstance(exc, sa_exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    pgcode = getattr(orig, 'pgcode', None)
    if pgcode in _PG_RETRY_CODES:
        return True
    args = getattr(orig, 'args', ())
    if args and args[0] in _MYSQL_RETRY_CODES:
        return True
    if isinstance(exc, sa_exc.OperationalError):
        text = str(orig).lower()
        return 'database is locked' in text or 'deadlock' in text
    return False


def is_broken_trigger(exc):
    """True if a MySQL/MariaDB statement failed on a trigger the server
    could not load, though the stored trigger is sound (see
    ``_MYSQL_TRIGGER_BODY_CODES``). Our triggers are created by our
    migrations; a genuine syntax error in our own SQL has another
    message."""
    args = getattr(getattr(exc, 'orig', exc), 'args', ())
    return (len(args) >= 2 and args[0] in _MYSQL_TRIGGER_BODY_CODES
            and _MYSQL_TRIGGER_BODY_SIGN in str(args[1]))


def is_conflict(exc):
    """True if ``exc`` means the transaction lost a conflict with another
    (deadlock, serialization or certification failure, lock timeout) and
    was rolled back: re-running it may work, and nothing was written."""
    return is_retryable(exc) and not exc.connection_invalidated


def is_unavailable(exc):
    """True if ``exc`` means the database cannot serve us right now.

    Operational errors (server down, refusing or dropping connections,
    shutting down, out of resources, lock timeouts) and interface errors
    on a closed connection are; so is a pool with no connection to give,
    and a schema handed back to upstream's under a running worker.
    Errors of the statement itself (integrity, programming, data) are not.
    """
    if isinstance(exc, sa_exc.TimeoutError):
        return True
    if not isinstance(exc, sa_exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if _lacks_our_tables(exc):
        return True
    if type(exc.orig).__module__ == 'sqlite3':
        # sqlite3 reports bad SQL as OperationalError too.
        text = str(exc.orig).lower()
        return any(sign in text for sign in _SQLITE_UNAVAILABLE)
    return isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError))


def _lacks_our_tables(exc):
    """True if the statement failed on a missing change-log table: the
    database has been handed back to upstream's schema (see
    api-ref/behaviour-choices.rst, 'What db downgrade removes')."""
    orig = exc.orig
    args = getattr(orig, 'args', ())
    missing = (
        getattr(orig, 'pgcode', None) == _PG_UNDEFINED_TABLE
        or getattr(orig, 'sqlstate', None) == _PG_UNDEFINED_TABLE
        or (args and args[0] == _MYSQL_NO_SUCH_TABLE)
        or (type(orig).__module__ == 'sqlite3'
            and str(orig).startswith('no such table')))
    return bool(missing) and any(name in str(orig) for name in _OUR_TABLES)


def describe_failure(exc):
    """The first line of the driver's message: enough for one log line."""
    orig = getattr(exc, 'orig', None) or exc
    text = str(orig).strip().splitlines()
    return '%s: %s' % (type(orig).__name__, text[0] if text else '')


def is_duplicate(exc):
    """True if ``exc`` is a unique-constraint violation."""
    if not isinstance(exc, sa_exc.IntegrityError):
        return False
    orig = exc.orig
    if getattr(orig, 'pgcode', None) == '23505':
        return True
    args = getattr(orig, 'args', ())
    if args and args[0] == 1062:
        return True
    return 'unique' in str(orig).lower()
