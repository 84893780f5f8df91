"""Every transaction the database committed, in commit order.

The checker replays these to see every intermediate committed state,
not only the final one. They come from the database's own replication
stream, which records each committed transaction once, whole, in the
order of commit:

* PostgreSQL: logical decoding into a replication slot with the
  ``test_decoding`` output plugin (``wal_level=logical``). The slot is
  created before the service writes anything and survives restarts and
  crashes of the server.
* MariaDB and Galera: the binary log in row format, read with
  ``mariadb-binlog --verbose``. On Galera one node keeps it with
  ``log_slave_updates``, so it holds the write-sets of every node in the
  cluster's commit order.

Only the tables the checker replays are kept (``TABLES``).
"""

import dataclasses
import glob
import os
import re
import shutil
import subprocess

import sqlalchemy as sa

TABLES = ('resource_providers', 'inventories', 'allocations', 'consumers',
          'users')
SLOT = 'placement_faults'


@dataclasses.dataclass
class Change:
    """One row change: ``row`` is the new row (insert, update) or the
    old one (delete; on PostgreSQL only its key)."""

    table: str
    op: str  # insert, update, delete
    row: dict


@dataclasses.dataclass
class Transaction:
    index: int
    changes: list


def _transactions(groups):
    return [Transaction(i, changes) for i, changes in enumerate(groups)
            if changes]


# -- PostgreSQL: logical decoding ---------------------------------------------

#: Server options that logical decoding needs.
POSTGRESQL_OPTIONS = '-c wal_level=logical -c max_replication_slots=4'


def create_slot(url):
    """Create the decoding slot on the database of ``url``."""
    engine = sa.create_engine(url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(
                "SELECT pg_create_logical_replication_slot('%s', "
                "'test_decoding')" % SLOT)
    finally:
        engine.dispose()


_PG_LINE = re.compile(r'^table [^.]+\.(\w+): (INSERT|UPDATE|DELETE): (.*)$')
_PG_FIELD = re.compile(r"(\w+)\[[^\]]*\]:('(?:[^']|'')*'|\S+)")


def _pg_value(text):
    if text == 'null':
        return None
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return _number(text)


def _number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def parse_test_decoding(lines):
    """Transactions from ``test_decoding`` lines (BEGIN, table ...,
    COMMIT)."""
    groups, current = [], None
    for line in lines:
        if line.startswith('BEGIN'):
            current = []
        elif line.startswith('COMMIT'):
            groups.append(current or [])
            current = None
        else:
            match = _PG_LINE.match(line)
            if match and match.group(1) in TABLES and current is not None:
                row = {name: _pg_value(value) for name, value
                       in _PG_FIELD.findall(match.group(3))}
                current.append(Change(match.group(1),
                                      match.group(2).lower(), row))
    return _transactions(groups)


def read_slot(url):
    """All transactions decoded so far (peeked: they can be read
    again)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            lines = [row[0] for row in conn.exec_driver_sql(
                "SELECT data FROM pg_logical_slot_peek_changes('%s', NULL, "
                "NULL)" % SLOT)]
            conn.commit()
    finally:
        engine.dispose()
    return parse_test_decoding(lines)


# -- MariaDB: the binary log --------------------------------------------------

#: Server options that keep the binary log (``log_slave_updates``: also
#: what other Galera nodes replicated).
def binlog_args(directory, server_id=1):
    return ['--log-bin=%s' % os.path.join(directory, 'binlog'),
            '--server-id=%d' % server_id, '--binlog-format=ROW',
            '--log-slave-updates=ON', '--binlog-row-image=FULL']


def binlog_columns(url):
    """{table: [column, ...]} in the binary log's order (ordinal)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            database = conn.exec_driver_sql('SELECT DATABASE()').scalar()
            columns = {}
            for table, column in conn.exec_driver_sql(
                    'SELECT table_name, column_name FROM '
                    'information_schema.columns WHERE table_schema = %s '
                    'ORDER BY table_name, ordinal_position', (database,)):
                columns.setdefault(table, []).append(column)
    finally:
        engine.dispose()
    return database, columns


_BINLOG_EVENT = re.compile(
    r'^### (INSERT INTO|UPDATE|DELETE FROM) `([^`]+)`\.`([^`]+)`')
_BINLOG_VALUE = re.compile(r"^###   @(\d+)=(.*)$")


def _binlog_value(text):
    text = text.strip()
    if text == 'NULL':
        return None
    if text.startswith("'"):
        end = text.rfind("'")
        return text[1:end].replace("\\'", "'").replace('\\\\', '\\')
    # Integers may be followed by their unsigned reading: "-1 (4294967295)".
    return _number(text.split(' ')[0])


def parse_binlog(lines, database, columns):
    """Transactions from ``mariadb-binlog --verbose`` output."""
    groups, current = [], []
    event = None  # [table, op, section, before, after]

    def flush():
        if event is None or event[0] not in TABLES:
            return
        names = columns[event[0]]
        image = event[4] if event[1] != 'delete' else event[3]
        current.append(Change(event[0], event[1], {
            names[i - 1]: value for i, value in image.items()}))

    for line in lines:
        match = _BINLOG_EVENT.match(line)
        if match:
            flush()
            event = None
            if match.group(2) == database:
                op = {'INSERT INTO': 'insert', 'UPDATE': 'update',
                      'DELETE FROM': 'delete'}[match.group(1)]
                event = [match.group(3), op, None, {}, {}]
            continue
        if event is not None and line.startswith('### WHERE'):
            event[2] = 3
        elif event is not None and line.startswith('### SET'):
            event[2] = 4
        elif event is not None and line.startswith('###   @'):
            value = _BINLOG_VALUE.match(line)
            event[event[2]][int(value.group(1))] = _binlog_value(
                value.group(2))
        elif line.startswith('COMMIT') or line.startswith('# at '):
            if line.startswith('COMMIT'):
                flush()
                event = None
                groups.append(current)
                current = []
            elif event is not None:
                flush()
                event = None
    return _transactions(groups)


def read_binlog(directory, url):
    """All transactions in the binary logs under ``directory`` on the
    database of ``url``."""
    database, columns = binlog_columns(url)
    files = sorted(f for f in glob.glob(os.path.join(directory, 'binlog.*'))
                   if not f.endswith('.index'))
    tool = shutil.which('mariadb-binlog') or shutil.which('mysqlbinlog')
    done = subprocess.run([tool, '--no-defaults', '--verbose',
                           '--base64-output=DECODE-ROWS'] + files,
                          capture_output=True, text=True, check=True,
                          timeout=600)
    return parse_binlog(done.stdout.splitlines(), database, columns)
