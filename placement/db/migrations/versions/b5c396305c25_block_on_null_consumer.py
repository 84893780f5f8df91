"""Refuse to continue while allocations reference missing consumers.

Revision ID: b5c396305c25
Revises: 611cd6dffd7b
"""

from alembic import op
import sqlalchemy as sa

revision = 'b5c396305c25'
down_revision = '611cd6dffd7b'
branch_labels = None
depends_on = None


def upgrade():
    count = op.get_bind().execute(sa.text(
        'SELECT COUNT(*) FROM allocations a '
        'LEFT JOIN consumers c ON a.consumer_id = c.uuid '
        'WHERE c.id IS NULL')).scalar()
    if count:
        raise Exception(
            'There are %d allocation records without a consumer. Run the '
            '"placement-manage db online_data_migrations" command.' % count)
