"""Object-layer tests for the filters of list_providers.

The capacity filter is exercised with inventory and allocation rows
inserted directly, independent of the endpoints that write them.
"""

import random
import threading
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import tables
from placement import exception
from placement.handlers import params
from placement.objects import aggregate as aggregate_obj
from placement.objects import provider_listing
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import trait as trait_obj

VCPU, MEMORY_MB, DISK_GB = 'VCPU', 'MEMORY_MB', 'DISK_GB'


def _new(ctx, name, parent=None):
    return rp_obj.create(ctx, str(uuid.uuid4()), name, parent)


def _inventory(ctx, provider, rc, total, reserved=0, min_unit=1,
               max_unit=2147483647, step_size=1, allocation_ratio=1.0):
    rc_id = rc_obj.ids_by_name(ctx, [rc])[rc]
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.inventories).values(
            resource_provider_id=provider.id, resource_class_id=rc_id,
            total=total, reserved=reserved, min_unit=min_unit,
            max_unit=max_unit,
            step_size=step_size, allocation_ratio=allocation_ratio))


def _allocate(ctx, provider, rc, used):
    rc_id = rc_obj.ids_by_name(ctx, [rc])[rc]
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.allocations).values(
            resource_provider_id=provider.id, resource_class_id=rc_id,
            consumer_id=str(uuid.uuid4()), used=used))


def _names(ctx, **filters):
    return [p.name for p in provider_listing.list_providers(ctx, **filters)]


# -- resources ---------------------------------------------------------------

def test_capacity_counts_reserved_ratio_and_usage(ctx):
    cn = _new(ctx, 'cn')
    # (10 - 1) * 1.5 = 13.5 units of room.
    _inventory(ctx, cn, VCPU, 10, reserved=1, allocation_ratio=1.5)
    assert _names(ctx, resources={VCPU: 13}) == ['cn']
    assert _names(ctx, resources={VCPU: 14}) == []
    # Usage is summed over every allocation of the class.
    _allocate(ctx, cn, VCPU, 2)
    _allocate(ctx, cn, VCPU, 1)
    assert _names(ctx, resources={VCPU: 10}) == ['cn']
    assert _names(ctx, resources={VCPU: 11}) == []


def test_usage_of_other_classes_and_providers_does_not_count(ctx):
    cn1, cn2 = _new(ctx, 'cn1'), _new(ctx, 'cn2')
    for cn in (cn1, cn2):
        _inventory(ctx, cn, VCPU, 4)
        _inventory(ctx, cn, MEMORY_MB, 1024)
    _allocate(ctx, cn1, MEMORY_MB, 1024)
    _allocate(ctx, cn2, VCPU, 3)
    assert _names(ctx, resources={VCPU: 4}) == ['cn1']
    assert _names(ctx, resources={MEMORY_MB: 1}) == ['cn2']


def test_unit_limits_and_step(ctx):
    cn = _new(ctx, 'cn')
    _inventory(ctx, cn, DISK_GB, 100, min_unit=10, max_unit=50, step_size=10)
    assert _names(ctx, resources={DISK_GB: 10}) == ['cn']
    assert _names(ctx, resources={DISK_GB: 50}) == ['cn']
    assert _names(ctx, resources={DISK_GB: 5}) == []
    assert _names(ctx, resources={DISK_GB: 60}) == []
    assert _names(ctx, resources={DISK_GB: 15}) == []


def test_every_class_on_the_provider_itself(ctx):
    root = _new(ctx, 'root')
    child = _new(ctx, 'child', root.uuid)
    _inventory(ctx, root, VCPU, 8)
    _inventory(ctx, child, MEMORY_MB, 2048)
    both = _new(ctx, 'both')
    _inventory(ctx, both, VCPU, 8)
    _inventory(ctx, both, MEMORY_MB, 2048)
    # Not matched by combining a tree's providers.
    assert _names(ctx, resources={VCPU: 1, MEMORY_MB: 1}) == ['both']
    assert _names(ctx, resources={MEMORY_MB: 1}) == ['child', 'both']


def test_overcommitted_provider_matches_nothing(ctx):
    cn = _new(ctx, 'cn')
    _inventory(ctx, cn, VCPU, 4)
    _allocate(ctx, cn, VCPU, 6)
    assert _names(ctx, resources={VCPU: 1}) == []


def test_unknown_class_reports_the_first(ctx):
    with pytest.raises(exception.ResourceClassNotFound) as caught:
        provider_listing.list_providers(ctx, resources={VCPU: 1, 'NOPE_B': 1,
                                              'NOPE_A': 1})
    assert str(caught.value) == 'No such resource class NOPE_B.'


def test_resources_with_other_filters(ctx):
    cn1, cn2 = _new(ctx, 'cn1'), _new(ctx, 'cn2')
    for cn in (cn1, cn2):
        _inventory(ctx, cn, VCPU, 4)
    trait_obj.set_provider_traits(ctx, cn2, ['HW_CPU_X86_AVX'], 0)
    required = params.parse_required(['HW_CPU_X86_AVX'], (1, 39))
    assert _names(ctx, resources={VCPU: 2}, required=required) == ['cn2']
    assert _names(ctx, resources={VCPU: 2}, name='cn1') == ['cn1']


def test_a_tree_is_listed_in_creation_order_after_its_root_changed(ctx):
    """``?in_tree=`` lists a tree in id order, although its statement has
    no ORDER BY: once the root's row was rewritten (a new row version,
    stored after its children's rows) it still comes first."""
    root = _new(ctx, 'root')
    child = _new(ctx, 'child', root.uuid)
    _new(ctx, 'grandchild', child.uuid)
    rp_obj.update(ctx, root, 'renamed root', rp_obj.UNCHANGED)
    assert _names(ctx, in_tree=child.uuid) == [
        'renamed root', 'child', 'grandchild']


# -- lookup order ------------------------------------------------------------

def test_unknown_tree_answers_before_traits_are_looked_up(ctx):
    required = params.parse_required(['CUSTOM_NOPE'], (1, 39))
    assert provider_listing.list_providers(ctx, in_tree=str(uuid.uuid4()),
                                 required=required) == []
    with pytest.raises(exception.TraitNotFound):
        provider_listing.list_providers(ctx, required=required)


def test_unknown_aggregates_answer_before_classes_are_looked_up(ctx):
    member_of = params.parse_member_of([str(uuid.uuid4())], (1, 39))
    assert provider_listing.list_providers(ctx, member_of=member_of,
                                 resources={'NOPE': 1}) == []
    # A known aggregate lets the class lookup complain.
    agg = str(uuid.uuid4())
    aggregate_obj.set_provider_aggregates(ctx, _new(ctx, 'in'), [agg])
    known = params.parse_member_of([agg], (1, 39))
    with pytest.raises(exception.ResourceClassNotFound):
        provider_listing.list_providers(ctx, member_of=known,
                                        resources={'NOPE': 1})


def test_traits_are_looked_up_before_aggregates(ctx):
    required = params.parse_required(['!CUSTOM_NOPE'], (1, 39))
    member_of = params.parse_member_of([str(uuid.uuid4())], (1, 39))
    with pytest.raises(exception.TraitNotFound) as caught:
        provider_listing.list_providers(ctx, required=required,
                                        member_of=member_of)
    assert str(caught.value) == 'No such trait(s): CUSTOM_NOPE.'


# -- aggregates and traits of a provider --------------------------------------

def _stored_aggregates(ctx):
    """Uuids of every aggregate row."""
    with ctx.db.transaction(write=False) as conn:
        return conn.execute(sa.select(
            tables.placement_aggregates.c.uuid)).scalars().all()


def test_aggregates_are_created_once_and_kept(ctx):
    a, b = _new(ctx, 'a'), _new(ctx, 'b')
    agg = str(uuid.uuid4())
    aggregate_obj.set_provider_aggregates(ctx, a, [agg])
    aggregate_obj.set_provider_aggregates(ctx, b, [agg])
    aggregate_obj.set_provider_aggregates(ctx, a, [])
    aggregate_obj.set_provider_aggregates(ctx, b, [])
    assert _stored_aggregates(ctx) == [agg]


def test_aggregate_generation_rules(ctx):
    provider = _new(ctx, 'p')
    agg = str(uuid.uuid4())
    # Without a generation: neither checked nor changed.
    assert aggregate_obj.set_provider_aggregates(ctx, provider, [agg]) == 0
    # With one: checked, and bumped even if nothing changes.
    assert aggregate_obj.set_provider_aggregates(
        ctx, provider, [agg], generation=0) == 1
    assert aggregate_obj.set_provider_aggregates(
        ctx, provider, [agg], generation=1) == 2
    with pytest.raises(exception.ResourceProviderGenerationMismatch):
        aggregate_obj.set_provider_aggregates(ctx, provider, [],
                                              generation=1)
    assert aggregate_obj.get_provider_aggregates(ctx, provider.uuid) == (
        2, [agg])


def test_aggregate_rows_survive_a_failed_association_write(ctx):
    provider = _new(ctx, 'p')
    agg = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderGenerationMismatch):
        aggregate_obj.set_provider_aggregates(ctx, provider, [agg],
                                              generation=7)
    # The aggregate was created before (and outside) the failed write.
    assert _stored_aggregates(ctx) == [agg]
    assert aggregate_obj.get_provider_aggregates(ctx, provider.uuid)[1] == []


def test_aggregates_of_a_deleted_provider(ctx):
    provider = _new(ctx, 'gone')
    rp_obj.destroy(ctx, provider.uuid)
    with pytest.raises(exception.ResourceProviderNotFound):
        aggregate_obj.set_provider_aggregates(ctx, provider,
                                              [str(uuid.uuid4())])


def test_provider_traits_unknown_names_change_nothing(ctx):
    provider = _new(ctx, 'p')
    trait_obj.set_provider_traits(ctx, provider, ['HW_CPU_X86_AVX'], 0)
    with pytest.raises(exception.TraitNotFound) as caught:
        trait_obj.set_provider_traits(
            ctx, provider, ['NOPE2', 'HW_CPU_X86_AVX2', 'NOPE1', 'NOPE2'], 1)
    assert caught.value.kwargs['names'] == 'NOPE2, NOPE1'
    generation, traits = trait_obj.get_provider_traits(ctx, provider.uuid)
    assert [t.name for t in traits] == ['HW_CPU_X86_AVX']
    assert generation == 1


def test_provider_traits_generation_only_moves_on_change(ctx):
    provider = _new(ctx, 'p')
    traits, generation = trait_obj.set_provider_traits(
        ctx, provider, ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX'], 0)
    assert ([t.name for t in traits], generation) == (['HW_CPU_X86_AVX'], 1)
    assert trait_obj.set_provider_traits(
        ctx, provider, ['HW_CPU_X86_AVX'], 1)[1] == 1
    with pytest.raises(exception.ResourceProviderGenerationMismatch):
        trait_obj.set_provider_traits(ctx, provider, [], 0)
    assert trait_obj.delete_provider_traits(ctx, provider) == 2
    assert trait_obj.delete_provider_traits(ctx, provider) == 2


def test_custom_trait_lifecycle(ctx):
    trait, created = trait_obj.ensure(ctx, 'CUSTOM_X')
    assert created and trait.name == 'CUSTOM_X' and trait.created_at
    assert trait_obj.ensure(ctx, 'CUSTOM_X') == (trait, False)
    provider = _new(ctx, 'p')
    trait_obj.set_provider_traits(ctx, provider, ['CUSTOM_X'], 0)
    with pytest.raises(exception.TraitInUse):
        trait_obj.destroy(ctx, 'CUSTOM_X')
    with pytest.raises(exception.TraitCannotDeleteStandard):
        trait_obj.destroy(ctx, 'HW_CPU_X86_AVX')
    trait_obj.delete_provider_traits(ctx, provider)
    trait_obj.destroy(ctx, 'CUSTOM_X')
    with pytest.raises(exception.TraitNotFound):
        trait_obj.destroy(ctx, 'CUSTOM_X')


def test_aggregate_creation_retries_a_duplicate_race(ctx, monkeypatch):
    provider = _new(ctx, 'p')
    agg = str(uuid.uuid4())
    real = aggregate_obj._create_missing
    calls = []

    def racing(ctx, uuids):
        calls.append(1)
        if len(calls) == 1:
            # Another writer created the row first and won the race.
            real(ctx, uuids)
            raise sa_exc.IntegrityError(
                'INSERT', {}, Exception('UNIQUE constraint failed'))
        return real(ctx, uuids)

    monkeypatch.setattr(aggregate_obj, '_create_missing', racing)
    aggregate_obj.set_provider_aggregates(ctx, provider, [agg])
    assert len(calls) == 2
    assert aggregate_obj.get_provider_aggregates(ctx, provider.uuid)[1] == [
        agg]


def test_aggregate_creation_gives_up_after_retries(ctx, monkeypatch):
    def always(ctx, uuids):
        raise sa_exc.IntegrityError(
            'INSERT', {}, Exception('UNIQUE constraint failed'))

    monkeypatch.setattr(aggregate_obj, '_create_missing', always)
    with pytest.raises(exception.AggregateCreateConflict) as caught:
        aggregate_obj.set_provider_aggregates(ctx, _new(ctx, 'p'),
                                              [str(uuid.uuid4())])
    assert str(caught.value).startswith('Update conflict: ')


def test_concurrent_writers_share_new_aggregates(ctx):
    providers = [_new(ctx, 'p%d' % i) for i in range(4)]
    aggs = [str(uuid.uuid4()) for _ in range(3)]
    errors = []

    def write(provider):
        try:
            aggregate_obj.set_provider_aggregates(
                context.AdminContext(ctx.db), provider, aggs)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in providers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with ctx.db.transaction(write=False) as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            tables.placement_aggregates)).scalar() == 3
        assert conn.execute(sa.select(sa.func.count()).select_from(
            tables.resource_provider_aggregates)).scalar() == 12


# -- filters against the tables, with hand-SQL writes between listings --------

_TRAITS = ['CUSTOM_T%d' % i for i in range(4)]


def _expected(ctx, terms, forbidden, agg_terms, agg_forbidden, in_tree):
    """Names of providers matching, worked out from the rows alone."""
    rp, tr, rpt = (tables.resource_providers, tables.traits,
                   tables.resource_provider_traits)
    ag, rpa = tables.placement_aggregates, tables.resource_provider_aggregates
    with ctx.db.transaction(write=False) as conn:
        providers = conn.execute(sa.select(
            rp.c.id, rp.c.name, rp.c.root_provider_id)).all()
        traits, aggs = {}, {}
        for provider, name in conn.execute(
                sa.select(rpt.c.resource_provider_id, tr.c.name)
                .join(tr, tr.c.id == rpt.c.trait_id)):
            traits.setdefault(provider, set()).add(name)
        for provider, agg in conn.execute(
                sa.select(rpa.c.resource_provider_id, ag.c.uuid)
                .join(ag, ag.c.id == rpa.c.aggregate_id)):
            aggs.setdefault(provider, set()).add(agg)
    root = {name: root for _, name, root in providers}
    found = []
    for provider, name, tree in sorted(providers):
        own, within = traits.get(provider, set()), aggs.get(provider, set())
        if (all(own & term for term in terms) and not own & forbidden
                and all(within & term for term in agg_terms)
                and not within & agg_forbidden
                and (in_tree is None or tree == root[in_tree])):
            found.append(name)
    return found


@pytest.mark.parametrize('seed', range(3))
def test_trait_and_aggregate_filters_follow_hand_sql(ctx, seed):
    """Listings filtered by traits and aggregates (from the provider
    index, or with ``in_tree`` from a statement) equal what the rows
    say, after trait and aggregate rows are written by hand between
    listings."""
    rng = random.Random(seed)
    aggs = [str(uuid.uuid4()) for _ in range(4)]
    for trait in _TRAITS:
        trait_obj.ensure(ctx, trait)
    trait_ids = trait_obj.ids_by_name(ctx, _TRAITS)
    providers = []
    for i in range(10):
        parent = rng.choice(providers[:3]).uuid if i > 3 else None
        provider = _new(ctx, 'rp%d' % i, parent)
        providers.append(provider)
        trait_obj.set_provider_traits(
            ctx, provider, rng.sample(_TRAITS, rng.randrange(3)), 0)
        aggregate_obj.set_provider_aggregates(
            ctx, rp_obj.get_by_uuid(ctx, provider.uuid),
            rng.sample(aggs, rng.randrange(3)))
    # Every aggregate row exists: associations are then written by hand.
    aggregate_obj.set_provider_aggregates(ctx, _new(ctx, 'holder'), aggs)
    with ctx.db.transaction(write=False) as conn:
        agg_ids = dict(conn.execute(sa.select(
            tables.placement_aggregates.c.uuid,
            tables.placement_aggregates.c.id)).all())
    for _ in range(12):
        provider = rng.choice(providers)
        with ctx.db.transaction(write=True) as conn:
            table = tables.resource_provider_traits
            trait = trait_ids[rng.choice(_TRAITS)]
            conn.execute(sa.delete(table).where(
                table.c.resource_provider_id == provider.id,
                table.c.trait_id == trait))
            if rng.random() < 0.5:
                conn.execute(sa.insert(table).values(
                    resource_provider_id=provider.id, trait_id=trait))
            table = tables.resource_provider_aggregates
            conn.execute(sa.delete(table).where(
                table.c.resource_provider_id == provider.id))
            for agg in rng.sample(aggs, rng.randrange(3)):
                conn.execute(sa.insert(table).values(
                    resource_provider_id=provider.id,
                    aggregate_id=agg_ids[agg]))
        terms = [set(rng.sample(_TRAITS, rng.randrange(1, 3)))
                 for _ in range(rng.randrange(3))]
        forbidden = set(rng.sample(_TRAITS, rng.randrange(2)))
        agg_terms = [set(rng.sample(aggs, rng.randrange(1, 3)))
                     for _ in range(rng.randrange(3))]
        agg_forbidden = set(rng.sample(aggs, rng.randrange(2)))
        in_tree = rng.choice([None, None, rng.choice(providers).name])
        required = params.parse_required(
            [','.join(sorted(t)) if len(t) == 1 else
             'in:' + ','.join(sorted(t)) for t in terms]
            + ['!' + t for t in sorted(forbidden)], (1, 39))
        member_of = params.parse_member_of(
            ['in:' + ','.join(sorted(t)) for t in agg_terms]
            + ['!in:' + ','.join(sorted(agg_forbidden))] * bool(
                agg_forbidden), (1, 39))
        filters = dict(required=required, member_of=member_of)
        if in_tree is not None:
            filters['in_tree'] = next(p.uuid for p in providers
                                      if p.name == in_tree)
        assert _names(ctx, **filters) == _expected(
            ctx, terms, forbidden, agg_terms, agg_forbidden, in_tree)
