"""The triggers that write the provider change log (``db/changes.py``).

Kept apart from the table definitions: the migrations that add and
change them and the test schema (``migration.create_schema_for_tests``)
create them explicitly, and the reading side never needs them.

SQLite and MySQL/MariaDB have row triggers only: one log row per changed
row. PostgreSQL logs the provider tables' changes with statement
triggers reading the statement's transition tables (``REFERENCING NEW
TABLE``): one log row per distinct provider a statement changed, so an
allocation write inserting three rows on one provider logs it once (see
api-ref/design.rst, 'How workers learn about changes'). The
``statement_level=False`` form is the one revision 8c49c564818b created
(one row trigger per table), which the migration that replaced it
restores on downgrade.
"""

import collections

#: Table -> column naming the changed provider (None: every provider).
TRIGGERED = collections.OrderedDict([
    ('resource_providers', 'id'),
    ('inventories', 'resource_provider_id'),
    ('allocations', 'resource_provider_id'),
    ('resource_provider_traits', 'resource_provider_id'),
    ('resource_provider_aggregates', 'resource_provider_id'),
    ('resource_classes', None),
    ('traits', None),
    ('placement_aggregates', None),
])


_EVENTS = ('insert', 'update', 'delete')


def _trigger_name(table, event):
    return 'placement_log_%s_%s' % (table, event)


def _logged_values(column, event, null='NULL'):
    """VALUES rows the trigger of ``event`` logs."""
    if column is None:
        return ['(%s)' % null]
    if event == 'insert':
        return ['(NEW.%s)' % column]
    if event == 'delete':
        return ['(OLD.%s)' % column]
    if column == 'id':  # a provider's own row: its id never changes
        return ['(NEW.id)']
    return ['(OLD.%s)' % column, '(NEW.%s)' % column]


def _triggers():
    """(table, column, event) of every trigger."""
    for table, column in TRIGGERED.items():
        for event in _EVENTS:
            if column is None and event == 'insert':
                continue  # a new name or uuid is looked up when asked
            yield table, column, event


def _insert(values):
    # Trigger DDL over the column names of TRIGGERED, constants of this
    # module: no outside input reaches it.
    return ('INSERT INTO provider_change_log '  # nosec B608
            '(resource_provider_id) VALUES %s' % ', '.join(values))


#: The name of PostgreSQL's row trigger on a table (one per table, its
#: function telling the events apart).
_PG_ROW_TRIGGER = 'placement_log_changes'


def _pg_function(column):
    return 'placement_log_%s' % ('everything' if column is None
                                 else 'provider_' + column)


#: The transition tables of the PostgreSQL statement triggers.
_OLD_ROWS, _NEW_ROWS = 'placement_old_rows', 'placement_new_rows'


def _pg_statement_function(column, event):
    return 'placement_log_%s_%s' % (column, event)


def _pg_distinct_providers(column, event):
    """The query of the distinct providers a statement's ``event``
    changed, from its transition tables."""
    # Over the column names of TRIGGERED and this module's table names:
    # no outside input reaches it.
    if event == 'update' and column != 'id':
        # A row moved to another provider changed both.
        return 'SELECT %s FROM %s UNION SELECT %s FROM %s' % (  # nosec B608
            column, _OLD_ROWS, column, _NEW_ROWS)
    return 'SELECT DISTINCT %s FROM %s' % (  # nosec B608
        column, _OLD_ROWS if event == 'delete' else _NEW_ROWS)


def _pg_statement_triggers():
    """The statement triggers of the provider tables on PostgreSQL."""
    columns = sorted({column for column in TRIGGERED.values() if column})
    statements = [
        'CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS '
        '$body$ BEGIN INSERT INTO provider_change_log '
        '(resource_provider_id) %s; RETURN NULL; END $body$'
        % (_pg_statement_function(column, event),
           _pg_distinct_providers(column, event))
        for column in columns for event in _EVENTS]
    for table, column in TRIGGERED.items():
        if column is None:
            continue
        for event in _EVENTS:
            tables = {'insert': ['NEW TABLE AS ' + _NEW_ROWS],
                      'delete': ['OLD TABLE AS ' + _OLD_ROWS],
                      'update': ['OLD TABLE AS ' + _OLD_ROWS,
                                 'NEW TABLE AS ' + _NEW_ROWS]}[event]
            statements.append(
                'CREATE TRIGGER %s AFTER %s ON %s REFERENCING %s '
                'FOR EACH STATEMENT EXECUTE FUNCTION %s()' % (
                    _trigger_name(table, event), event.upper(), table,
                    ' '.join(tables), _pg_statement_function(column, event)))
    return statements


def _pg_row_triggers(statement_level):
    """The row triggers on PostgreSQL: of every table, or only of those
    logging every provider when the others have statement triggers."""
    statements = []
    for column in sorted(set(TRIGGERED.values()), key=str):
        if statement_level and column is not None:
            continue
        body = []
        for event in _EVENTS:
            if column is None and event == 'insert':
                continue
            body.append("IF TG_OP = '%s' THEN %s; END IF;" % (
                event.upper(), _insert(_logged_values(column, event))))
        statements.append(
            'CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS '
            '$body$ BEGIN %s RETURN NULL; END $body$'
            % (_pg_function(column), ' '.join(body)))
    for table, column in TRIGGERED.items():
        if statement_level and column is not None:
            continue
        events = ' OR '.join(e.upper() for e in _EVENTS
                             if column is not None or e != 'insert')
        statements.append(
            'CREATE TRIGGER %s AFTER %s ON %s '
            'FOR EACH ROW EXECUTE FUNCTION %s()'
            % (_PG_ROW_TRIGGER, events, table, _pg_function(column)))
    return statements


def trigger_ddl(dialect, statement_level=True):
    """The statements that create the triggers on ``dialect``
    (``statement_level``: statement triggers for the provider tables,
    on PostgreSQL)."""
    if dialect == 'postgresql':
        statements = _pg_row_triggers(statement_level)
        if statement_level:
            statements += _pg_statement_triggers()
        return statements
    return [statement for _table, _name, statement in _row_triggers(dialect)]


def _row_triggers(dialect):
    """(table, trigger name, statement) of every trigger on SQLite and
    MySQL/MariaDB, one per table and event."""
    if dialect == 'sqlite':
        form = 'CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW BEGIN %s; END'
    elif dialect == 'mysql':
        form = 'CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW %s'
    else:
        raise NotImplementedError(dialect)
    for table, column, event in _triggers():
        name = _trigger_name(table, event)
        yield table, name, form % (name, event.upper(), table,
                                   _insert(_logged_values(column, event)))


def drop_trigger_ddl(dialect):
    """The statements that remove what ``trigger_ddl`` created, in
    either form."""
    if dialect == 'postgresql':
        statements = ['DROP TRIGGER IF EXISTS %s ON %s' % (name, table)
                      for table, name in sorted(_created(dialect, True)
                                                | _created(dialect, False))]
        statements += ['DROP FUNCTION IF EXISTS %s()' % _pg_function(column)
                       for column in sorted(set(TRIGGERED.values()), key=str)]
        statements += [
            'DROP FUNCTION IF EXISTS %s()'
            % _pg_statement_function(column, event)
            for column in sorted({c for c in TRIGGERED.values() if c})
            for event in _EVENTS]
        return statements
    return ['DROP TRIGGER IF EXISTS %s' % name
            for _table, name in sorted(_created(dialect, True))]


def create_triggers(conn, statement_level=True):
    for statement in trigger_ddl(conn.dialect.name, statement_level):
        conn.exec_driver_sql(statement)


def drop_triggers(conn):
    for statement in drop_trigger_ddl(conn.dialect.name):
        conn.exec_driver_sql(statement)


def _created(dialect, statement_level):
    """(table, trigger name) of every trigger ``trigger_ddl`` creates."""
    if dialect != 'postgresql':
        return {(table, _trigger_name(table, event))
                for table, _column, event in _triggers()}
    created = set()
    for table, column in TRIGGERED.items():
        if statement_level and column is not None:
            created.update((table, _trigger_name(table, event))
                           for event in _EVENTS)
        else:
            created.add((table, _PG_ROW_TRIGGER))
    return created


#: The (table, trigger name) rows of the triggers present, per dialect.
_PRESENT = {
    'sqlite': "SELECT tbl_name, name FROM sqlite_master "
              "WHERE type = 'trigger'",
    'mysql': 'SELECT event_object_table, trigger_name '
             'FROM information_schema.triggers '
             'WHERE trigger_schema = DATABASE()',
    'postgresql': 'SELECT event_object_table, trigger_name '
                  'FROM information_schema.triggers '
                  'WHERE trigger_schema = current_schema()',
}


def missing(conn):
    """The ``table.trigger`` names of the change log's triggers that
    the database ``conn`` reaches lacks (an empty list when one form of
    them is complete). Without them writes to that table are not
    logged, and readers keep what they hold until their next full load:
    a Galera node that failed to apply the DDL another node replicated
    loses every write made through it."""
    dialect = conn.dialect.name
    present = {tuple(row) for row in conn.exec_driver_sql(_PRESENT[dialect])}
    forms = (True, False) if dialect == 'postgresql' else (True,)
    return min((sorted('%s.%s' % name
                       for name in _created(dialect, form) - present)
                for form in forms), key=len)


def create_missing(conn):
    """Create the change log's triggers the database lacks (``missing``)
    in the form of the schema's head, and log a NULL row, so that every
    reader reloads everything: writes made while they were missing were
    logged nowhere. PostgreSQL replaces them all in the transaction (its
    DDL is transactional); elsewhere only the missing ones are created,
    so that no write goes unlogged meanwhile. Returns what was missing."""
    absent = missing(conn)
    if not absent:
        return absent
    dialect = conn.dialect.name
    if dialect == 'postgresql':
        drop_triggers(conn)
        create_triggers(conn)
    else:
        for table, name, statement in _row_triggers(dialect):
            if '%s.%s' % (table, name) in absent:
                conn.exec_driver_sql(statement)
    conn.exec_driver_sql(_insert(['(NULL)']))
    return absent
