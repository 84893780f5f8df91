"""Our PyMySQL connections read results as PyMySQL's own do, with less
work (MySQL/MariaDB pass only)."""

import datetime
import decimal

import pymysql
import pytest
import sqlalchemy as sa
from pymysql import protocol

from placement.db import api as db_api
from placement.db import pymysql_connection
from placement.tests import fixtures

#: Columns of many types (and a NULL, a repeated name), in rows whose
#: values change between executions while their descriptions do not.
_QUERY = """
SELECT %s AS n, CAST(%s AS DECIMAL(10, 2)) AS d, 'x' AS s, NULL AS z,
       TIMESTAMP('2026-01-02 03:04:05') + INTERVAL %s SECOND AS t,
       SUM(%s) AS total, 'y' AS s
"""


@pytest.fixture
def db():
    if fixtures.backend_name() != 'mysql':
        pytest.skip('the mysql pass only')
    database = db_api.Database(fixtures.create_server_database(
        fixtures.server_url(), 'pymysql_connection'))
    yield database
    database.dispose()


def _parsed(monkeypatch):
    """A list that grows by one for every column description parsed."""
    parsed = []
    parse = protocol.FieldDescriptorPacket._parse_field_descriptor

    def counted(self, encoding):
        parsed.append(True)
        return parse(self, encoding)

    monkeypatch.setattr(protocol.FieldDescriptorPacket,
                        '_parse_field_descriptor', counted)
    return parsed


def _plain_result(db, query, values):
    """(description, rows) of ``query`` on a connection of PyMySQL's."""
    url = db.engine.url
    conn = pymysql.connect(host=url.host, port=url.port, user=url.username,
                           password=url.password or '', database=url.database,
                           charset='utf8mb4')
    try:
        with conn.cursor() as cursor:
            cursor.execute(query, values)
            return cursor.description, cursor.fetchall()
    finally:
        conn.close()


def test_a_column_description_is_parsed_once_per_connection(
        db, monkeypatch):
    runs = [(number, number / 4, number, number) for number in (1, 2, 3)]
    expected = [_plain_result(db, _QUERY, values) for values in runs]
    with db.engine.connect() as conn:
        parsed = _parsed(monkeypatch)
        dbapi_conn = conn.connection.dbapi_connection
        assert isinstance(dbapi_conn, pymysql_connection.connection_class())
        for values, plain in zip(runs, expected):
            with dbapi_conn.cursor() as cursor:
                cursor.execute(_QUERY, values)
                found = cursor.description, cursor.fetchall()
            # The first execution's columns only, the two alike once.
            assert len(parsed) == 6
            assert found == plain
    description, rows = found
    assert [d[0] for d in description] == ['n', 'd', 's', 'z', 't', 'total',
                                           's']
    assert rows == ((3, decimal.Decimal('0.75'), 'x', None,
                     datetime.datetime(2026, 1, 2, 3, 4, 8),
                     decimal.Decimal(3), 'y'),)


def test_known_columns_are_bounded(db, monkeypatch):
    monkeypatch.setattr(pymysql_connection, 'KNOWN_COLUMNS', 2)
    with db.engine.connect() as conn:
        parsed = _parsed(monkeypatch)
        for text in ('a', 'bb', 'ccc', 'a'):
            # A selected value's length is in its column's description.
            assert conn.execute(sa.text('SELECT :v AS v'),
                                {'v': text}).scalar() == text
            assert len(conn.connection.dbapi_connection._columns) <= 2
    assert len(parsed) == 4
