"""The provider index against the database it follows."""

import sqlalchemy as sa

from placement.db import tables
from placement.objects import provider_index
from placement.tests.functional.objects import test_allocation_candidate


def test_a_summary_lists_classes_in_one_order_however_loaded(ctx):
    """Classes in the order their rows were made (not class ids), after
    a whole load and after the provider alone was loaded again."""
    topo = test_allocation_candidate.Topology(ctx)
    provider = topo.add('cn', inventory={'DISK_GB': 9, 'VCPU': 9,
                                         'MEMORY_MB': 9})
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    whole = index.summary(provider.id).resources
    assert [name for name, _, _ in whole] == ['DISK_GB', 'VCPU', 'MEMORY_MB']
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id == provider.id
        ).values(total=8))
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert [name for name, _, _ in index.summary(provider.id).resources] == [
        'DISK_GB', 'VCPU', 'MEMORY_MB']
