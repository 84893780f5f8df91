"""Fixed SELECTs compiled once per dialect and run on the driver's cursor.

``Connection.execute`` of a statement built once still costs several
times what the driver's own ``execute`` does (cache key, execution
context, result set metadata, events), and a small GET runs two or
three statements.
For the statements of the hot read paths, ``Prepared`` keeps the SQL
text, the order of its parameters and the column types' own bind and
result processors per dialect, and runs it on the DBAPI connection of the
open transaction (``ctx.conn``). A driver error is handed to SQLAlchemy's
own handling for the connection, so it leaves as the same
``DBAPIError`` (a lost connection invalidated, the pool told) that
``conn.execute`` would raise, and the transaction decorators retry it or
answer 503 as usual.

On PostgreSQL through psycopg2 the statement is also prepared on the
server, once per connection (``PREPARE``, then ``EXECUTE`` with the
values): psycopg2 sends every statement as text, and parsing and
planning a join cost the server two to three times what running it
does. The server's prepared statements live as long as its session,
whatever becomes of the transaction that created them; the names made
on a connection are kept in its pool ``info``, which SQLAlchemy empties
when the connection is closed or replaced. ``Database`` turns this on
per connection (``serve_prepared``) unless ``[placement_database]
postgresql_prepared_statements`` is off. See
api-ref/behaviour-choices.rst, 'Prepared statements on PostgreSQL'.

Only statements without expanding (``IN``) or literal-rendered
parameters qualify; building one that has them fails at compile time.
An ``IN`` list of a few values qualifies as that many single parameters
(``in_``), one statement per length; so does the VALUES list of an
INSERT of a few rows (``rows_of``). ``run`` picks between such a
statement and the expanding one by the lists' lengths.
Besides SELECTs, an INSERT, UPDATE or DELETE qualifies: its rows are
what it returns with RETURNING (the provider lock that bumps the
generations of a write, ``provider_generation.lock_and_bump``), else
none (the bump that follows the locking read where UPDATE cannot
return rows, on MySQL/MariaDB).
"""

import functools
import itertools
import re
import threading

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

_LOCK = threading.Lock()
#: Server-side statement names, unique within the process.
_NAMES = itertools.count(1)
#: Key of the set of names prepared on a connection, in its pool info.
_READY = 'placement_prepared'
_PYFORMAT = re.compile(r'%\((\w+)\)s|%%')

#: While osprofiler traces SQL (``placement.db.profiler``): ``start(sql,
#: parameters)`` and ``stop()`` around each statement run here, which
#: SQLAlchemy's events (what osprofiler listens to) never see. None
#: otherwise.
TRACER = None


class _Compiled:
    """One statement's SQL, parameters and processors for one dialect."""

    def __init__(self, stmt, dialect):
        compiled = stmt.compile(dialect=dialect)
        if (getattr(compiled, 'post_compile_params', None)
                or getattr(compiled, 'literal_execute_params', None)
                or getattr(compiled, 'escaped_bind_names', None)):
            raise ValueError('Prepared statements take plain parameters '
                             'only: %s' % compiled.string)
        self.sql = compiled.string
        self.positional = compiled.positional
        names = (list(compiled.positiontup) if compiled.positional
                 else list(compiled.binds))
        self.binds = []
        for name in names:
            bind = compiled.binds[name]
            processor = bind.type.dialect_impl(dialect).bind_processor(
                dialect)
            # A named parameter comes from the caller; a bound literal
            # (``col == 3``) carries its value.
            key = bind.key if bind.required else None
            fixed = None if bind.required else bind.effective_value
            self.binds.append((name, key, fixed, processor))
        # A SELECT's columns, or what an INSERT/UPDATE/DELETE returns.
        columns = getattr(stmt, 'selected_columns', None)
        if columns is None:
            columns = stmt.exported_columns
        self.types = [column.type.dialect_impl(dialect)
                      for column in columns]
        self.dialect = dialect
        # Result processors depend on the driver's type codes, which the
        # first execution's cursor description gives.
        self.processors = None
        self.name = self.prepare = self.execute = None
        if dialect.name == 'postgresql' and dialect.driver == 'psycopg2':
            self._server_side(compiled, dialect)

    def _server_side(self, compiled, dialect):
        """PREPARE and EXECUTE texts for this statement. Parameters get
        their column types: left to inference, a parameter that is only
        selected (a bound literal) would come back as text."""
        order = []
        for match in _PYFORMAT.finditer(self.sql):
            if match.group(1) and match.group(1) not in order:
                order.append(match.group(1))
        try:
            types = [_server_type(compiled.binds[name].type, dialect)
                     for name in order]
        except sa_exc.CompileError:  # no type to declare: run as text
            return

        def numbered(match):
            if match.group(0) == '%%':
                return '%'  # executed without parameters: no escaping
            return '$%d' % (order.index(match.group(1)) + 1)

        self.name = 'placement_%d' % next(_NAMES)
        self.prepare = 'PREPARE %s%s AS %s' % (
            self.name, '(%s)' % ', '.join(types) if types else '',
            _PYFORMAT.sub(numbered, self.sql))
        self.execute = 'EXECUTE %s%s' % (self.name, '(%s)' % ', '.join(
            '%%(%s)s' % name for name in order) if order else '')

    def parameters(self, values):
        ordered = []
        for _name, key, fixed, processor in self.binds:
            value = fixed if key is None else values[key]
            ordered.append(processor(value) if processor else value)
        if self.positional:
            return tuple(ordered)
        return {name: value for (name, *_rest), value
                in zip(self.binds, ordered)}

    def learn_processors(self, description):
        # No description: a statement that returns no rows.
        found = [kind.result_processor(self.dialect, column[1])
                 for kind, column in zip(self.types, description or ())]
        self.processors = found if any(found) else ()


def _server_type(kind, dialect):
    """The type a parameter is declared with: without a length or a
    width, so that a value the plain statement would merely not find
    (a name too long for the column, a huge number) is not an error."""
    if isinstance(kind, sa.String):
        return 'TEXT'
    if isinstance(kind, sa.Integer):
        return 'BIGINT'
    return dialect.type_compiler_instance.process(kind)


class Prepared:
    """A Core SELECT (or DML with RETURNING) to run with
    ``rows(conn, **values)``."""

    def __init__(self, stmt):
        self.stmt = stmt
        self._compiled = {}

    def _for(self, dialect):
        key = (type(dialect), dialect.paramstyle,
               dialect.server_version_info)
        found = self._compiled.get(key)
        if found is None:
            with _LOCK:
                found = self._compiled.get(key)
                if found is None:
                    found = self._compiled[key] = _Compiled(
                        self.stmt, dialect)
        return found

    def rows(self, conn, **values):
        """All result rows as tuples, in the statement's column order.

        ``conn`` is the SQLAlchemy Connection of an open transaction.
        """
        compiled = self._for(conn.dialect)
        parameters = compiled.parameters(values)
        sql = compiled.sql
        cursor = None
        tracer = TRACER
        if tracer is not None:
            tracer.start(sql, parameters)
        try:
            cursor = conn.connection.dbapi_connection.cursor()
            ready = (None if compiled.name is None
                     else conn.connection.info.get(_READY))
            if ready is None:
                cursor.execute(sql, parameters)
            else:
                if compiled.name not in ready:
                    cursor.execute(compiled.prepare)
                    ready.add(compiled.name)
                sql = compiled.execute
                cursor.execute(sql, parameters)
            rows = cursor.fetchall()
            description = cursor.description
            cursor.close()
        except conn.dialect.loaded_dbapi.Error as exc:
            fail(conn, exc, sql, parameters, cursor)
        finally:
            if tracer is not None:
                tracer.stop()
        processors = compiled.processors
        if processors is None:
            compiled.learn_processors(description)
            processors = compiled.processors
        if not processors:
            return rows
        # A list comprehension, not a generator: a third less per row.
        return [tuple([value if process is None else process(value)
                       for process, value in zip(processors, row)])
                for row in rows]

    def first(self, conn, **values):
        """The first row, or None."""
        rows = self.rows(conn, **values)
        return rows[0] if rows else None


#: Most values of an ``IN`` list bound one by one (``in_``): the writes
#: of a cloud's daily traffic name one to three providers, consumers,
#: projects or users.
UP_TO = 3


def in_(column, name, count):
    """``column IN`` the expanding bound list ``name`` (``count`` None),
    or ``count`` single bound parameters ``name0``, ``name1``... (whose
    values ``run`` binds)."""
    if count is None:
        return column.in_(sa.bindparam(name, expanding=True))
    return column.in_([sa.bindparam('%s%d' % (name, index), type_=column.type)
                       for index in range(count)])


def rows_of(table, columns, count):
    """The VALUES of a multi-row INSERT into ``table`` of ``count`` rows
    of ``columns``, each value a bound parameter of its own
    (``column<index>``): an INSERT of a few rows qualifies, one
    statement per number of rows."""
    return [{column: sa.bindparam('%s%d' % (column, index),
                                  type_=table.c[column].type)
             for column in columns}
            for index in range(count)]


def run(conn, build, lists=None, values=None, rows=None, args=(),
        up_to=UP_TO):
    """The rows of the statement ``build(*args, ...)`` makes for the
    bound ``IN`` lists ``lists`` ({name: values}, see ``in_``) and the
    other parameters ``values``, or for the ``rows`` (dicts) of a
    multi-row INSERT (``rows_of``).

    While no list, and not ``rows``, has more than ``up_to`` entries,
    ``build`` is given their lengths (a keyword per list, ``rows=``)
    and the statement runs as a ``Prepared`` with the entries bound one
    by one: a cloud's writes name a few of each, and SQLAlchemy's
    execute (PostgreSQL's planning too) cost more than running the
    statement. Otherwise ``build`` is given None for each, for
    expanding lists, and ``conn`` executes the statement (once per row
    for ``rows``). Statements are built once per shape: name the lists
    in the same order at every call.
    """
    lists = lists or {}
    params = dict(values) if values else {}
    counts = []
    for name, items in lists.items():
        if len(items) > up_to:
            return _expanded(conn, build, args, lists, values, rows)
        counts.append((name, len(items)))
        for index, value in enumerate(items):
            params['%s%d' % (name, index)] = value
    if rows is not None:
        if len(rows) > up_to:
            return _expanded(conn, build, args, lists, values, rows)
        counts.append(('rows', len(rows)))
        for index, row in enumerate(rows):
            for column, value in row.items():
                params['%s%d' % (column, index)] = value
    return _built(build, args, tuple(counts)).rows(conn, **params)


def _expanded(conn, build, args, lists, values, rows):
    """``run`` of the expanding statement."""
    names = list(lists) + (['rows'] if rows is not None else [])
    stmt = _built(build, args, tuple((name, None) for name in names))
    result = conn.execute(stmt, rows if rows is not None
                          else dict(values or (), **lists))
    return result.all() if result.returns_rows else []


@functools.lru_cache(maxsize=None)
def _built(build, args, counts):
    """``run``'s statement of one shape: a ``Prepared`` for numbers of
    entries, the Core statement for expanding lists."""
    stmt = build(*args, **dict(counts))
    if any(count is None for _name, count in counts):
        return stmt
    return Prepared(stmt)


def serve_prepared(_dbapi_conn, record):
    """A ``connect`` event listener: ``Prepared`` statements run on this
    new connection are prepared on the server (PostgreSQL through
    psycopg2; elsewhere nothing changes)."""
    record.info[_READY] = set()


def execute(conn, sql):
    """Run ``sql`` (no parameters, no result) on the driver's cursor of
    ``conn``, failing as ``conn.exec_driver_sql`` would."""
    cursor = None
    tracer = TRACER
    if tracer is not None:
        tracer.start(sql, ())
    try:
        cursor = conn.connection.dbapi_connection.cursor()
        cursor.execute(sql)
        cursor.close()
    except conn.dialect.loaded_dbapi.Error as exc:
        fail(conn, exc, sql, (), cursor)
    finally:
        if tracer is not None:
            tracer.stop()


def fail(conn, exc, sql, parameters, cursor):
    """Raise the driver's error ``exc`` as SQLAlchemy would have, had
    ``conn`` (a Connection) run ``sql`` itself: wrapped in its
    ``DBAPIError``, the engine's ``handle_error`` listeners heard (see
    ``Database``), a lost connection invalidated and the pool told.

    This is ``Connection._handle_dbapi_exception``, a private method:
    SQLAlchemy has no public call that does all that for an error it
    did not see, and redoing it from the public pieces (``DBAPIError``,
    ``Dialect.is_disconnect``, ``invalidate``, the events) would copy
    its logic to drift from it. Going through SQLAlchemy's execute
    instead is what prepared statements save (see above). Only errors
    take this path. The tests of the wrapping, of lost connections and
    of the ``handle_error`` listeners (functional/db/test_prepared.py,
    test_api_reader_connection.py) fail if it disappears or changes.
    """
    conn._handle_dbapi_exception(exc, sql, parameters, cursor, None)
