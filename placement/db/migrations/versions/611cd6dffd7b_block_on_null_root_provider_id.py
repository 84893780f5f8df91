"""Refuse to continue while providers lack a root provider id.

Revision ID: 611cd6dffd7b
Revises: b4ed3a175331
"""

from alembic import op
import sqlalchemy as sa

revision = '611cd6dffd7b'
down_revision = 'b4ed3a175331'
branch_labels = None
depends_on = None


def upgrade():
    count = op.get_bind().execute(sa.text(
        'SELECT COUNT(*) FROM resource_providers '
        'WHERE root_provider_id IS NULL')).scalar()
    if count:
        raise Exception(
            'There is at least one resource provider table record which '
            'misses its root provider id. Run the "placement-manage db '
            'online_data_migrations" command.')
