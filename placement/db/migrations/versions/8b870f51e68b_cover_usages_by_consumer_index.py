"""Cover the usage sums with the allocations' consumer index.

Usages (``GET /usages``) sum the allocations of a project's consumers,
found by their consumer uuid. With an index on ``consumer_id`` alone
every one of those rows was then read from the table (on MySQL a
second lookup by primary key each), which cost more than the rest of
the statement. The new index carries the class and the amount too, so
the sums read the index only. It replaces the index on ``consumer_id``,
which it starts with: lookups by consumer use it as before, and a write
still maintains as many indexes.

Building the index reads every allocation once; writes to allocations
wait for it (seconds for a million rows).

Revision ID: 8b870f51e68b
Revises: 8c49c564818b
"""

from alembic import op

revision = '8b870f51e68b'
down_revision = '8c49c564818b'
branch_labels = None
depends_on = None


def upgrade():
    # The new index first, so that reads by consumer never lack one.
    op.create_index('allocations_consumer_id_class_used_idx', 'allocations',
                    ['consumer_id', 'resource_class_id', 'used'])
    op.drop_index('allocations_consumer_id_idx', table_name='allocations')


def downgrade():
    op.create_index('allocations_consumer_id_idx', 'allocations',
                    ['consumer_id'])
    op.drop_index('allocations_consumer_id_class_used_idx',
                  table_name='allocations')
