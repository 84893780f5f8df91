"""SQL spans for osprofiler traces (``[profiler] trace_sqlalchemy``; see
``placement/middleware/profiler.py``).

osprofiler listens to SQLAlchemy's engine events, which never see the
statements ``placement.db.prepared`` runs on the driver's cursor (most
of a request's SQL): those get the same ``db`` span through
``prepared.TRACER``.
"""

import sqlalchemy

from placement.db import prepared

#: The span name of SQL statements, as osprofiler's SQLAlchemy tracing
#: names them.
DB_SPAN = 'db'


class _StatementTracer:
    """``db`` spans around the statements run on the driver's cursor."""

    def __init__(self):
        from osprofiler import profiler
        self._profiler = profiler

    def start(self, statement, parameters):
        self._profiler.start(DB_SPAN, info={'db': {
            'statement': statement, 'params': parameters}})

    def stop(self):
        self._profiler.stop()


def trace_sql(db):
    """Every statement of ``db`` in the current trace, if any
    (process-wide: ``prepared.TRACER``)."""
    from osprofiler import sqlalchemy as profiler_sqlalchemy
    profiler_sqlalchemy.add_tracing(sqlalchemy, db.engine, DB_SPAN)
    prepared.TRACER = _StatementTracer()
