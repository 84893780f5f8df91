"""Object-layer tests for resource providers."""

import datetime
import uuid

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception
from placement.objects import provider_generation
from placement.objects import resource_provider as rp_obj


def _new(ctx, name, parent=None):
    return rp_obj.create(ctx, str(uuid.uuid4()), name, parent)


def test_tree_roots_follow_creation_and_moves(ctx):
    root = _new(ctx, 'root')
    child = _new(ctx, 'child', root.uuid)
    leaf = _new(ctx, 'leaf', child.uuid)
    other = _new(ctx, 'other')
    assert (root.root_id, child.root_id, leaf.root_id) == (root.id,) * 3
    rp_obj.update(ctx, child, 'child', other.uuid, allow_reparent=True)
    assert rp_obj.get_by_uuid(ctx, leaf.uuid).root_provider_uuid == other.uuid
    assert rp_obj.get_by_uuid(ctx, root.uuid).root_provider_uuid == root.uuid


def test_duplicates_report_uuid_before_name(ctx):
    first = _new(ctx, 'first')
    with pytest.raises(exception.DuplicateResourceProvider) as caught:
        rp_obj.create(ctx, first.uuid, 'first')
    assert str(caught.value) == (
        'Conflicting resource provider uuid: %s already exists.'
        % first.uuid)


def test_generation_compare_and_set(ctx):
    provider = _new(ctx, 'gen')

    @db_api.writer
    def bump(ctx, expected):
        return provider_generation.increment_generation(
            ctx, provider.id, expected)

    assert bump(ctx, 0) == 1
    with pytest.raises(exception.ResourceProviderConcurrentUpdateDetected):
        bump(ctx, 0)
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 1


def test_lock_reports_existing_generations(ctx):
    provider = _new(ctx, 'locked')

    @db_api.writer
    def lock(ctx, ids):
        return provider_generation.lock(ctx, ids)

    assert lock(ctx, [provider.id, provider.id + 1000]) == {provider.id: 0}


def test_delete_refused_while_allocations_exist(ctx):
    provider = _new(ctx, 'busy')
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.allocations).values(
            resource_provider_id=provider.id, consumer_id=str(uuid.uuid4()),
            resource_class_id=0, used=1))
    with pytest.raises(exception.ResourceProviderInUse):
        rp_obj.destroy(ctx, provider.uuid)
    assert rp_obj.get_by_uuid(ctx, provider.uuid)


def test_delete_removes_associations_in_one_go(ctx):
    provider = _new(ctx, 'associated')
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.inventories).values(
            resource_provider_id=provider.id, resource_class_id=0, total=4,
            reserved=0, min_unit=1, max_unit=4, step_size=1,
            allocation_ratio=1.0))
        trait_id = conn.execute(sa.select(tables.traits.c.id).limit(1)
                                ).scalar()
        conn.execute(sa.insert(tables.resource_provider_traits).values(
            resource_provider_id=provider.id, trait_id=trait_id))
    rp_obj.destroy(ctx, provider.uuid)
    with ctx.db.transaction(write=False) as conn:
        for table in (tables.inventories, tables.resource_provider_traits):
            assert conn.execute(sa.select(sa.func.count()).select_from(
                table)).scalar() == 0


@pytest.mark.parametrize('name', ['inventory', 'trait', 'aggregate'])
def test_a_provider_and_its_rows_are_found_by_index(ctx, name):
    """A provider's inventories (traits, aggregates) read with its
    generation in one statement look the provider up by uuid and its
    rows up by provider: no table is read whole, nothing is sorted. On
    SQLite an outer join of an inner join was materialised whole, every
    inventory of the cloud read per request."""
    if ctx.db.dialect != 'sqlite':
        pytest.skip('reads the plan in SQLite terms')
    from placement.objects import aggregate
    from placement.objects import inventory
    from placement.objects import trait
    statement = {'inventory': inventory._GENERATION_AND_INVENTORIES,
                 'trait': trait._GENERATION_AND_TRAITS,
                 'aggregate': aggregate._GENERATION_AND_AGGREGATES,
                 }[name].stmt
    with ctx.db.engine.connect() as conn:
        sql = str(statement.compile(dialect=conn.dialect))
        plan = [row[-1] for row in conn.exec_driver_sql(
            'EXPLAIN QUERY PLAN ' + sql, ('x',))]
    assert plan and all(step.startswith('SEARCH') for step in plan), plan


def test_a_providers_rows_come_in_id_order_whatever_the_storage(ctx):
    """The GETs of a provider's inventories, traits and aggregates list
    them by resource class, trait and aggregate id, although the
    statement has no ORDER BY: rows written in the other order (stored
    first, so a heap scan meets them first) come back sorted."""
    from placement.objects import aggregate as aggregate_obj
    from placement.objects import inventory as inv_obj
    from placement.objects import trait as trait_obj
    provider = _new(ctx, 'ordered')
    first, second = 'CUSTOM_ORDER_FIRST', 'CUSTOM_ORDER_SECOND'
    trait_obj.ensure(ctx, first)
    trait_obj.ensure(ctx, second)
    aggregates = sorted([str(uuid.uuid4()), str(uuid.uuid4())])
    aggregate_obj.ensure(ctx, aggregates)
    inventory = {'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 8,
                 'step_size': 1, 'allocation_ratio': 1.0}
    # Rows of the higher ids first, those of the lower ids after them.
    generation = inv_obj.replace_all(ctx, provider, {'MEMORY_MB': inventory})
    generation = inv_obj.replace_all(
        ctx, provider, {'MEMORY_MB': inventory, 'VCPU': inventory},
        generation)
    _traits, generation = trait_obj.set_provider_traits(
        ctx, provider, [second], generation)
    _traits, generation = trait_obj.set_provider_traits(
        ctx, provider, [second, first], generation)
    generation = aggregate_obj.set_provider_aggregates(
        ctx, provider, aggregates[1:], generation=generation)
    generation = aggregate_obj.set_provider_aggregates(
        ctx, provider, aggregates, generation=generation)

    found, inventories = inv_obj.get_provider_inventories(ctx, provider.uuid)
    assert (found, [i.resource_class for i in inventories]) == (
        generation, ['VCPU', 'MEMORY_MB'])
    found, traits = trait_obj.get_provider_traits(ctx, provider.uuid)
    assert (found, [t.name for t in traits]) == (generation, [first, second])
    assert aggregate_obj.get_provider_aggregates(ctx, provider.uuid) == (
        generation, aggregates)


def test_a_providers_rows_tell_when_each_last_changed(ctx):
    """The GETs of a provider's inventories and traits read one time
    per row, updated_at else created_at, for Last-Modified: that of a
    row never updated is its creation, that of an updated row its
    update."""
    from placement.objects import inventory as inv_obj
    from placement.objects import trait as trait_obj
    provider = _new(ctx, 'modified')
    trait_obj.ensure(ctx, 'CUSTOM_MODIFIED')
    inventory = {'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 8,
                 'step_size': 1, 'allocation_ratio': 1.0}
    created, updated = (datetime.datetime(2020, 1, 2, 3, 4, 5),
                        datetime.datetime(2021, 6, 7, 8, 9, 10))
    generation = inv_obj.replace_all(
        ctx, provider, {'VCPU': inventory, 'MEMORY_MB': inventory})
    trait_obj.set_provider_traits(
        ctx, provider, ['CUSTOM_MODIFIED', 'HW_CPU_X86_AVX'], generation)

    @db_api.writer
    def set_times(ctx):
        inv, traits = tables.inventories, tables.traits
        ctx.conn.execute(sa.update(inv).where(
            inv.c.resource_provider_id == provider.id).values(
                created_at=created, updated_at=None))
        ctx.conn.execute(sa.update(inv).where(
            inv.c.resource_provider_id == provider.id,
            inv.c.resource_class_id == 0).values(updated_at=updated))
        ctx.conn.execute(sa.update(traits).where(
            traits.c.name == 'CUSTOM_MODIFIED').values(
                created_at=created, updated_at=updated))
        ctx.conn.execute(sa.update(traits).where(
            traits.c.name == 'HW_CPU_X86_AVX').values(
                created_at=created, updated_at=None))

    set_times(ctx)
    _generation, inventories = inv_obj.get_provider_inventories(
        ctx, provider.uuid)
    assert {i.resource_class: i.last_modified for i in inventories} == {
        'VCPU': updated, 'MEMORY_MB': created}
    _generation, traits = trait_obj.get_provider_traits(ctx, provider.uuid)
    assert {t.name: t.last_modified for t in traits} == {
        'CUSTOM_MODIFIED': updated, 'HW_CPU_X86_AVX': created}


def test_a_providers_rows_are_read_with_the_columns_shown_only():
    """Each column of a result costs PyMySQL about 5 µs to describe,
    whatever the rows: the generation, the key that orders the rows
    and what the GET shows, nothing more."""
    from placement.objects import aggregate
    from placement.objects import inventory
    from placement.objects import trait
    columns = {name: len(statement.stmt.selected_columns)
               for name, statement in (
                   ('inventory', inventory._GENERATION_AND_INVENTORIES),
                   ('trait', trait._GENERATION_AND_TRAITS),
                   ('aggregate', aggregate._GENERATION_AND_AGGREGATES))}
    # Six fields and the class name, one time for Last-Modified; the
    # trait's name and time; the aggregate's uuid.
    assert columns == {'inventory': 10, 'trait': 4, 'aggregate': 3}
