"""Fixed SELECTs compiled once per dialect and run on the driver's cursor.

``Connection.execute`` of a statement built once still costs several
times what the driver's own ``execute`` does (cache key, execution
context, result set metadata, events): measured on SQLite, about 55 µs
against 12 µs per statement, and a small GET runs two or three of them.
For the statements of the hot read paths, ``Prepared`` keeps the SQL
text, the order of its parameters and the column types' own bind and
result processors per dialect, and runs it on the DBAPI connection of the
open transaction (``ctx.conn``). A driver error is handed to SQLAlchemy's
own handling for the connection, so it leaves as the same
``DBAPIError`` (a lost connection invalidated, the pool told) that
``conn.execute`` would raise, and the transaction decorators retry it or
answer 503 as usual.

Only statements without expanding (``IN``) or literal-rendered
parameters qualify; building one that has them fails at compile time.
"""

import threading

_LOCK = threading.Lock()


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
        self.types = [column.type.dialect_impl(dialect)
                      for column in stmt.selected_columns]
        self.dialect = dialect
        # Result processors depend on the driver's type codes, which the
        # first execution's cursor description gives.
        self.processors = None

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
        found = [kind.result_processor(self.dialect, column[1])
                 for kind, column in zip(self.types, description)]
        self.processors = found if any(found) else ()


class Prepared:
    """A Core SELECT to run with ``rows(conn, **values)``."""

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
        cursor = None
        try:
            cursor = conn.connection.dbapi_connection.cursor()
            cursor.execute(compiled.sql, parameters)
            rows = cursor.fetchall()
            description = cursor.description
            cursor.close()
        except conn.dialect.loaded_dbapi.Error as exc:
            # Wraps, invalidates on disconnect and raises, exactly as for
            # statements SQLAlchemy runs itself.
            conn._handle_dbapi_exception(exc, compiled.sql, parameters,
                                         cursor, None)
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


def execute(conn, sql):
    """Run ``sql`` (no parameters, no result) on the driver's cursor of
    ``conn``, failing as ``conn.exec_driver_sql`` would."""
    cursor = None
    try:
        cursor = conn.connection.dbapi_connection.cursor()
        cursor.execute(sql)
        cursor.close()
    except conn.dialect.loaded_dbapi.Error as exc:
        conn._handle_dbapi_exception(exc, sql, (), cursor, None)
