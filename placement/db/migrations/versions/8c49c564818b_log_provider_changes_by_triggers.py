"""Log provider changes with database triggers instead of a counter row.

Creates provider_change_log and the triggers that fill it on every
change to the tables the candidates' provider index reads (see
placement/db/changes.py), and drops provider_change_counter and
provider_changes: nothing in them is needed any more, since a reader
that starts on the new log loads everything once. A NULL row is logged
so that even a reader that somehow carried a cursor over reloads.

Workers of the previous release still running answer 503 until they are
replaced (their tables are gone), as after db downgrade.

Revision ID: 8c49c564818b
Revises: dabfd9010ed6
"""

from alembic import op
import sqlalchemy as sa

revision = '8c49c564818b'
down_revision = 'dabfd9010ed6'
branch_labels = None
depends_on = None

# The trigger statements as this revision creates them (row triggers
# everywhere). Later revisions that change the triggers must drop and
# recreate them themselves.
from placement.db import triggers  # noqa: E402


def upgrade():
    log = op.create_table(
        'provider_change_log',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'),
                  primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer, nullable=True),
        sqlite_autoincrement=True)
    op.bulk_insert(log, [{'resource_provider_id': None}])
    triggers.create_triggers(op.get_bind(), statement_level=False)
    op.drop_table('provider_changes')
    op.drop_table('provider_change_counter')


def downgrade():
    triggers.drop_triggers(op.get_bind())
    op.drop_table('provider_change_log')
    # Back to the counter log of dabfd9010ed6, starting afresh.
    counter = op.create_table(
        'provider_change_counter',
        sa.Column('id', sa.Integer, primary_key=True, nullable=False,
                  autoincrement=False),
        sa.Column('version', sa.BigInteger, nullable=False),
        sa.Column('pruned_to', sa.BigInteger, nullable=False))
    op.bulk_insert(counter, [{'id': 1, 'version': 0, 'pruned_to': 0}])
    op.create_table(
        'provider_changes',
        sa.Column('version', sa.BigInteger, primary_key=True,
                  nullable=False, autoincrement=False),
        sa.Column('resource_provider_id', sa.Integer, primary_key=True,
                  nullable=False, autoincrement=False))
