"""Every prepared statement of the application can be prepared on a
PostgreSQL server: one whose parameter types are unknown silently runs
as plain text, parsed and planned at every request."""

import importlib
import sys

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import psycopg2 as pg_psycopg2

from placement.db import changes
from placement.db import prepared
from placement.objects import usage


class _Conn:
    """What ``changes._prepared`` reads of a connection."""

    dialect = pg_psycopg2.dialect()


def _every_prepared():
    # The route table imports every handler, hence every object module.
    importlib.import_module('placement.web.route_table')
    for kind in ('start', 'after'):
        changes._prepared(_Conn, kind)
    found = [value for value in changes._STATEMENTS.values()
             if isinstance(value, prepared.Prepared)]
    found += [usage._totals(with_user) for with_user in (False, True)]
    found += [usage._by_type(with_user, kept, rollup)[0]
              for with_user in (False, True)
              for kept in (None, usage.UNKNOWN, usage.ALL, 'other')
              for rollup in (False, True)]
    for name, module in list(sys.modules.items()):
        if not name.startswith('placement.') or '.tests' in name:
            continue
        for value in vars(module).values():
            # Module constants, and the provider index's sources.
            value = getattr(value, 'few', value)
            if isinstance(value, prepared.Prepared):
                found.append(value)
    return found


def test_every_statement_is_prepared_on_postgresql():
    dialect = _Conn.dialect
    dialect.server_version_info = (16, 0)
    statements = _every_prepared()
    assert len(statements) >= 15
    unprepared = [str(statement.stmt)[:80] for statement in statements
                  if statement._for(dialect).name is None]
    assert not unprepared, unprepared


def test_a_statement_with_untyped_parameters_runs_as_text():
    statement = prepared.Prepared(
        sa.select(sa.column('x')).where(sa.column('y') == sa.bindparam('y')))
    compiled = statement._for(_Conn.dialect)
    assert compiled.name is None
    assert compiled.sql.startswith('SELECT x')
