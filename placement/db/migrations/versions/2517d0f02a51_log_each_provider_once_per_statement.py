"""On PostgreSQL, log each changed provider once per statement.

The row triggers of revision 8c49c564818b log one change log row per
changed row: an allocation write inserting three rows on one provider
logs it three times. On PostgreSQL the provider tables get statement
triggers instead, which read the statement's transition tables and log
each distinct provider once (see placement/db/triggers.py). The log's
rows and what they mean do not change, so workers of the previous
release read it as before. SQLite and MySQL/MariaDB have no statement
triggers and keep theirs.

The old triggers are dropped and the new ones created in the migration's
transaction: a write waits for it and is logged by one or the other.
Dropping a trigger locks its table, so reads of those tables wait for
it too (and it for the transactions running when it starts).

Revision ID: 2517d0f02a51
Revises: 8b870f51e68b
"""

from alembic import op

revision = '2517d0f02a51'
down_revision = '8b870f51e68b'
branch_labels = None
depends_on = None

from placement.db import triggers  # noqa: E402


def _recreate(statement_level):
    conn = op.get_bind()
    if conn.dialect.name != 'postgresql':
        return
    triggers.drop_triggers(conn)
    triggers.create_triggers(conn, statement_level=statement_level)


def upgrade():
    _recreate(statement_level=True)


def downgrade():
    _recreate(statement_level=False)
