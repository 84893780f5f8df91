"""Traits: the standard catalogue and custom ``CUSTOM_*`` names."""

import os_traits
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception

_TRAITS = tables.traits

#: Providers with this trait share their inventory through aggregates.
SHARES_VIA_AGGREGATE = os_traits.MISC_SHARES_VIA_AGGREGATE


@db_api.writer
def sync_standard(ctx):
    """Insert every standard trait that is missing; never delete any."""
    existing = set(ctx.conn.execute(sa.select(_TRAITS.c.name)).scalars())
    now = db_api.utcnow()
    db_api.insert_missing(ctx.conn, _TRAITS, [
        {'name': name, 'created_at': now}
        for name in os_traits.get_traits() if name not in existing])


@db_api.reader
def ids_by_name(ctx, names):
    """Map each of ``names`` to its id; TraitNotFound names the first
    unknown one (in the order given)."""
    names = list(names)
    rows = ctx.conn.execute(
        sa.select(_TRAITS.c.name, _TRAITS.c.id)
        .where(_TRAITS.c.name.in_(set(names))))
    found = dict(rows.all())
    for name in names:
        if name not in found:
            raise exception.TraitNotFound(names=name)
    return found
