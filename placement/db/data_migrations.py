"""Online data migrations and the counts upgrade checks use.

Databases written by old releases may hold providers without a root
provider id and allocations whose consumer has no ``consumers`` row. The
blocking schema revisions refuse to go on while such rows exist; these
functions repair them in bounded batches while the service keeps running.
Each migration takes the remaining batch budget and returns
``(found, done)``.

The change log's triggers (``placement.db.changes``) record what they
change, where the schema already has them.
"""

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables

_RP = tables.resource_providers
_ALLOC = tables.allocations
_CONSUMER = tables.consumers


def _orphan_consumer_ids():
    """Distinct consumer ids of allocations that have no consumer row."""
    return sa.select(_ALLOC.c.consumer_id).distinct().where(
        ~sa.exists().where(_CONSUMER.c.uuid == _ALLOC.c.consumer_id))


def missing_root_provider_count(db):
    with db.transaction(write=False) as conn:
        return conn.execute(sa.select(sa.func.count()).where(
            _RP.c.root_provider_id.is_(None))).scalar()


def incomplete_consumer_count(db):
    with db.transaction(write=False) as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            _orphan_consumer_ids().subquery())).scalar()


def set_root_provider_ids(db, conf, max_count):
    """A provider without a root is its own root."""
    with db.transaction(write=True) as conn:
        ids = conn.execute(sa.select(_RP.c.id).where(
            _RP.c.root_provider_id.is_(None)).order_by(_RP.c.id).limit(
                max_count)).scalars().all()
        if ids:
            conn.execute(sa.update(_RP).where(_RP.c.id.in_(ids)).values(
                root_provider_id=_RP.c.id))
    return len(ids), len(ids)


def _external_id_row(conn, table, external_id):
    """The id of the project/user row for ``external_id``, created if new."""
    db_api.insert_missing(conn, table, [
        {'external_id': external_id, 'created_at': db_api.utcnow()}])
    return conn.execute(sa.select(table.c.id).where(
        table.c.external_id == external_id)).scalar_one()


def create_incomplete_consumers(db, conf, max_count):
    """Give allocations without a consumer row the incomplete consumer's
    project and user (``[placement] incomplete_consumer_*_id``)."""
    project = conf.placement.incomplete_consumer_project_id
    user = conf.placement.incomplete_consumer_user_id
    with db.transaction(write=True) as conn:
        consumer_ids = conn.execute(_orphan_consumer_ids().order_by(
            _ALLOC.c.consumer_id).limit(max_count)).scalars().all()
        if consumer_ids:
            project_id = _external_id_row(conn, tables.projects, project)
            user_id = _external_id_row(conn, tables.users, user)
            now = db_api.utcnow()
            conn.execute(sa.insert(_CONSUMER), [
                {'uuid': consumer_id, 'project_id': project_id,
                 'user_id': user_id, 'generation': 0, 'created_at': now}
                for consumer_id in consumer_ids])
    return len(consumer_ids), len(consumer_ids)


#: In the order they run.
MIGRATIONS = (set_root_provider_ids, create_incomplete_consumers)
