"""Cover usages by consumer type with the consumers' project index.

Usages grouped by consumer type (``GET /usages`` from 1.38) read each
of the project's consumers' type. The project index held the project
and the consumer uuid only, so every one of those consumers was read
from the table too, and on MariaDB a project holding a third of the
consumers was read by a scan of all of them. The new index carries the
type between the two, so the read takes the project's consumers, their
types and uuids from the index alone. It replaces the index on
(``project_id``, ``uuid``), whose reads by project it serves as
well: a write still maintains as many indexes.

Building the index reads every consumer once; writes to consumers wait
for it (seconds for a million consumers).

Revision ID: c6f209155b76
Revises: 2517d0f02a51
"""

from alembic import op

revision = 'c6f209155b76'
down_revision = '2517d0f02a51'
branch_labels = None
depends_on = None


def upgrade():
    # The new index first, so that reads by project never lack one.
    op.create_index('consumers_project_id_consumer_type_id_uuid_idx',
                    'consumers', ['project_id', 'consumer_type_id', 'uuid'])
    op.drop_index('consumers_project_id_uuid_idx', table_name='consumers')


def downgrade():
    op.create_index('consumers_project_id_uuid_idx', 'consumers',
                    ['project_id', 'uuid'])
    op.drop_index('consumers_project_id_consumer_type_id_uuid_idx',
                  table_name='consumers')
