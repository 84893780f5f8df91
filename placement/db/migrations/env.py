"""Alembic environment: always runs on the connection handed in by
placement.db.migration, which has already taken the migration lock."""

from alembic import context

from placement.db import tables

connection = context.config.attributes['connection']
context.configure(connection=connection,
                  target_metadata=tables.metadata,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
