"""What a loaded provider index keeps per provider: one int object per
provider id, however many rows name it."""

import uuid

import sqlalchemy as sa

from benchmarks.toolkit import cloud_rows
from placement.db import tables
from placement.objects.candidates import provider_index


def _load(db):
    index = provider_index.ProviderIndex()
    with db.transaction(write=False) as conn:
        index.refresh(conn)
    return index


def test_each_provider_id_is_one_object(ctx):
    # Ids past 256 are new int objects per row read: the maps and sets
    # must all hold the one the provider's own row brought.
    url = str(ctx.db.engine.url)
    cloud_rows.bulk_load(url, cloud_rows.flat_providers(300))
    cloud_rows.bulk_load(url, cloud_rows.nested_providers(2))
    with ctx.db.transaction(write=True) as conn:
        vcpu = conn.execute(sa.select(tables.resource_classes.c.id).where(
            tables.resource_classes.c.name == 'VCPU')).scalar()
        conn.execute(sa.insert(tables.allocations), [
            dict(resource_provider_id=provider, resource_class_id=vcpu,
                 consumer_id=str(uuid.uuid4()), used=1)
            for provider in (280, 290)])
    index = _load(ctx.db)
    assert max(index.uuid) > 300
    own = {id(provider) for provider in index.uuid}
    held = [*index.root.values(), *index.parent.values(), *index.usage,
            *index.members]
    for reverse in (index.with_class, index.with_trait,
                    index.in_aggregate):
        for members in reverse.values():
            held += members
    for tree in index.members.values():
        held += tree
    held = [provider for provider in held if provider is not None]
    assert {280, 290} <= set(index.usage)
    assert len(held) > 1000
    assert [p for p in held if id(p) not in own] == []
