"""Splitting large sets of values into statements the databases accept.

A request may name tens of thousands of consumers. One ``IN`` list or
multi-row ``INSERT`` per request would hit SQLite's limit on bound
variables (999 before 3.32) and grow packets towards MySQL's
``max_allowed_packet``; one statement per value would cost a round trip
each. Chunks of ``SIZE`` keep both bounded.
"""

#: Values per IN list or rows per multi-row statement.
SIZE = 500


def chunks(values, size=None):
    """``values`` (any iterable) as lists of at most ``size`` (default
    ``SIZE``) items."""
    size = size or SIZE
    values = list(values)
    return [values[start:start + size]
            for start in range(0, len(values), size)]


def select_in(conn, stmt, column, values, size=None):
    """Rows of ``stmt`` restricted to ``column IN values``, one
    statement per chunk; nothing is sent for no values."""
    rows = []
    for chunk in chunks(values, size):
        rows.extend(conn.execute(stmt.where(column.in_(chunk))).all())
    return rows
