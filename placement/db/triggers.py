"""The triggers that write the provider change log (``db/changes.py``).

Kept apart from the table definitions: the migration that adds the log
and the test schema (``migration.create_schema_for_tests``) create them
explicitly, and the reading side never needs them.
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


def _pg_function(column):
    return 'placement_log_%s' % ('everything' if column is None
                                 else 'provider_' + column)


def trigger_ddl(dialect):
    """The statements that create the triggers on ``dialect``."""
    statements = []
    if dialect == 'postgresql':
        for column in sorted(set(TRIGGERED.values()), key=str):
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
            events = ' OR '.join(e.upper() for e in _EVENTS
                                 if column is not None or e != 'insert')
            statements.append(
                'CREATE TRIGGER placement_log_changes AFTER %s ON %s '
                'FOR EACH ROW EXECUTE FUNCTION %s()'
                % (events, table, _pg_function(column)))
        return statements
    for table, column, event in _triggers():
        insert = _insert(_logged_values(column, event))
        if dialect == 'sqlite':
            statements.append(
                'CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW BEGIN %s; END'
                % (_trigger_name(table, event), event.upper(), table,
                   insert))
        elif dialect == 'mysql':
            statements.append(
                'CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW %s'
                % (_trigger_name(table, event), event.upper(), table,
                   insert))
        else:
            raise NotImplementedError(dialect)
    return statements


def drop_trigger_ddl(dialect):
    """The statements that remove what ``trigger_ddl`` created."""
    if dialect == 'postgresql':
        statements = ['DROP TRIGGER IF EXISTS placement_log_changes ON %s'
                      % table for table in TRIGGERED]
        statements += ['DROP FUNCTION IF EXISTS %s()' % _pg_function(column)
                       for column in sorted(set(TRIGGERED.values()), key=str)]
        return statements
    return ['DROP TRIGGER IF EXISTS %s' % _trigger_name(table, event)
            for table, _column, event in _triggers()]


def create_triggers(conn):
    for statement in trigger_ddl(conn.dialect.name):
        conn.exec_driver_sql(statement)


def drop_triggers(conn):
    for statement in drop_trigger_ddl(conn.dialect.name):
        conn.exec_driver_sql(statement)
