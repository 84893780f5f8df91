"""Resource classes: standard (fixed ids 0-20) and custom (ids >= 10000)."""

import os_resource_classes

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception

_RC = tables.resource_classes

#: Standard class names in id order (spec appendix A.1).
STANDARD = tuple(os_resource_classes.STANDARDS)
#: Ids from here on are custom classes.
CUSTOM_MIN_ID = 10000


@db_api.writer
def sync_standard(ctx):
    """Insert every standard class that is missing, with its fixed id."""
    existing = set(ctx.conn.execute(sa.select(_RC.c.name)).scalars())
    now = db_api.utcnow()
    db_api.insert_missing(ctx.conn, _RC, [
        {'id': rc_id, 'name': name, 'created_at': now}
        for rc_id, name in enumerate(STANDARD) if name not in existing])


@db_api.reader
def ids_by_name(ctx, names):
    """Map each of ``names`` to its id; ResourceClassNotFound if unknown.

    The first unknown name (in the order given) is reported.
    """
    names = list(names)
    rows = ctx.conn.execute(
        sa.select(_RC.c.name, _RC.c.id).where(_RC.c.name.in_(set(names))))
    found = dict(rows.all())
    for name in names:
        if name not in found:
            raise exception.ResourceClassNotFound(name=name)
    return found


@db_api.reader
def names_by_id(ctx):
    """Every class id mapped to its name (the table is small)."""
    return dict(ctx.conn.execute(sa.select(_RC.c.id, _RC.c.name)).all())
