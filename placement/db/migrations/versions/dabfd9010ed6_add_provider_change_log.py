"""Add the provider change log (ours; upstream has no such revision).

``provider_change_counter`` holds one row whose version every writer
that changes provider data bumps last before committing;
``provider_changes`` lists the providers each version changed. See
``placement/db/changes.py``.

Revision ID: dabfd9010ed6
Revises: a082b8bb98d0
"""

from alembic import op
import sqlalchemy as sa

revision = 'dabfd9010ed6'
down_revision = 'a082b8bb98d0'
branch_labels = None
depends_on = None


def upgrade():
    counter = op.create_table(
        'provider_change_counter',
        sa.Column('id', sa.Integer, primary_key=True, nullable=False,
                  autoincrement=False),
        sa.Column('version', sa.BigInteger, nullable=False),
        sa.Column('pruned_to', sa.BigInteger, nullable=False))
    # Version 0 with nothing pruned: a reader that starts now loads
    # everything once (it has no version yet) and then follows the log.
    op.bulk_insert(counter, [{'id': 1, 'version': 0, 'pruned_to': 0}])
    op.create_table(
        'provider_changes',
        sa.Column('version', sa.BigInteger, primary_key=True,
                  nullable=False, autoincrement=False),
        sa.Column('resource_provider_id', sa.Integer, primary_key=True,
                  nullable=False, autoincrement=False))


def downgrade():
    # Back to upstream's head schema: both tables are ours alone and
    # nothing else refers to them.
    op.drop_table('provider_changes')
    op.drop_table('provider_change_counter')
