"""Usages by consumer type read while allocations are written."""

import random
import uuid

import pytest
import sqlalchemy as sa

from placement import context
from placement.db import prepared
from placement.db import tables
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import usage as usage_obj
from placement.tests import fixtures


@pytest.fixture
def provider(ctx):
    rp = rp_obj.create(ctx, str(uuid.uuid4()), 'host')
    inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 100}})
    return rp_obj.get_by_uuid(ctx, rp.uuid)


def _claim(ctx, provider, consumer_type):
    alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
        dict(uuid=str(uuid.uuid4()), project='proj', user='user',
             generation=None, consumer_type=consumer_type),
        {provider.uuid: {'VCPU': 1}})], 0)


@pytest.mark.parametrize('kept', [None, 'all', 'INSTANCE'])
def test_a_consumer_type_committed_during_the_read(ctx, provider, kept,
                                                   monkeypatch):
    """A write committed while usages are read (a migration starting)
    never leaves a group half counted; it used to answer 500 on
    PostgreSQL, whose statements each see the latest commits."""
    _claim(ctx, provider, 'INSTANCE')
    wrote = []
    rows = prepared.Prepared.rows

    def meanwhile(statement, conn, **values):
        # The usage statements run on the driver's cursor: the write
        # commits right after the first one that sums.
        found = rows(statement, conn, **values)
        if not wrote and 'sum(' in str(statement.stmt).lower():
            wrote.append(True)
            _claim(context.AdminContext(ctx.db), provider, 'MIGRATION')
        return found

    monkeypatch.setattr(prepared.Prepared, 'rows', meanwhile)
    usages = usage_obj.by_consumer_type(ctx, 'proj', consumer_type=kept)
    monkeypatch.undo()
    assert wrote
    for group in usages.values():
        assert group['VCPU'] >= group['consumer_count'] >= 1
    expected = {None: {'INSTANCE', 'MIGRATION'}, 'all': {'all'},
                'INSTANCE': {'INSTANCE'}}[kept]
    assert set(usages) <= expected and usages


def _random_cloud(ctx, rng):
    """Consumers of a few projects, users and types (or none) with random
    allocations, written as rows; returns the allocations as (project,
    user, type, consumer, class, used), a consumer without a record with
    project None."""
    names = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'SRIOV_NET_VF']
    with ctx.db.transaction(write=True) as conn:
        classes = dict(conn.execute(
            sa.select(tables.resource_classes.c.name,
                      tables.resource_classes.c.id)
            .where(tables.resource_classes.c.name.in_(names))).all())
        conn.execute(sa.insert(tables.projects), [
            {'id': i, 'external_id': 'p%d' % i} for i in (1, 2, 3)])
        conn.execute(sa.insert(tables.users), [
            {'id': i, 'external_id': 'u%d' % i} for i in (1, 2)])
        conn.execute(sa.insert(tables.consumer_types), [
            {'id': 1, 'name': 'INSTANCE'}, {'id': 2, 'name': 'MIGRATION'},
            {'id': 3, 'name': 'UNUSED'}])
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': i, 'uuid': str(uuid.uuid4()), 'name': 'rp%d' % i,
             'generation': 0, 'root_provider_id': i} for i in (1, 2, 3)])
        consumers, allocations, expected = [], [], []
        for number in range(1, rng.randint(1, 40)):
            consumer = str(uuid.uuid4())
            owner = (rng.choice([1, 1, 2, 3]), rng.choice([1, 2]),
                     rng.choice([None, 1, 1, 2]))
            if rng.random() < 0.9:
                consumers.append({
                    'id': number, 'uuid': consumer, 'project_id': owner[0],
                    'user_id': owner[1], 'consumer_type_id': owner[2],
                    'generation': 0})
            else:
                owner = (None, None, None)
            # Some consumers (even recorded ones) have no allocations.
            for name in rng.sample(names, rng.randint(0, len(names))):
                used = rng.randint(1, 2048)
                allocations.append({
                    'resource_provider_id': rng.randint(1, 3),
                    'consumer_id': consumer,
                    'resource_class_id': classes[name], 'used': used})
                expected.append(owner + (consumer, name, used))
        if consumers:
            conn.execute(sa.insert(tables.consumers), consumers)
        if allocations:
            conn.execute(sa.insert(tables.allocations), allocations)
    return expected


def _reference(allocations, project, user=None, consumer_type=None):
    """by_consumer_type, computed plainly from the rows written."""
    type_names = {None: usage_obj.UNKNOWN, 1: 'INSTANCE', 2: 'MIGRATION'}
    groups = {}
    for owner_project, owner_user, kind, consumer, name, used in allocations:
        if owner_project is None or 'p%d' % owner_project != project:
            continue
        if user is not None and 'u%d' % owner_user != user:
            continue
        group = type_names[kind]
        if consumer_type == usage_obj.ALL:
            group = usage_obj.ALL
        elif consumer_type is not None and group != consumer_type:
            continue
        sums, members = groups.setdefault(group, ({}, set()))
        sums[name] = sums.get(name, 0) + used
        members.add(consumer)
    return {group: dict(sums, consumer_count=len(members))
            for group, (sums, members) in groups.items()}


@pytest.mark.parametrize('seed', range(12))
def test_usages_match_a_plain_sum_of_random_allocations(ctx, seed):
    """Totals and groups (every filter) equal sums over the allocation
    rows of the owner's consumers, whatever the mix of projects, users,
    types, consumers without allocations and allocations without a
    consumer record."""
    allocations = _random_cloud(ctx, random.Random(seed))
    for project in ('p1', 'p2', 'p3', 'nobody'):
        for user in (None, 'u1', 'u2', 'nobody'):
            expected = _reference(allocations, project, user)
            totals = {}
            for group in expected.values():
                for name, used in group.items():
                    if name != 'consumer_count':
                        totals[name] = totals.get(name, 0) + used
            assert usage_obj.totals(ctx, project, user) == totals
            for kept in (None, usage_obj.ALL, usage_obj.UNKNOWN,
                         'INSTANCE', 'MIGRATION', 'UNUSED', 'nothing'):
                assert usage_obj.by_consumer_type(
                    ctx, project, user, kept) == _reference(
                        allocations, project, user, kept), (project, user,
                                                            kept)


def _many_projects(ctx, projects=300, per_project=10):
    """Consumers of many projects, three allocations each, written as
    rows, and the database's statistics brought up to date, as a
    running cloud's are."""
    consumers, allocations = [], []
    for number in range(projects * per_project):
        consumer = str(uuid.uuid4())
        consumers.append({'id': number + 1, 'uuid': consumer,
                          'project_id': number % projects + 1,
                          'user_id': 1, 'consumer_type_id': None,
                          'generation': 0})
        allocations.extend({'resource_provider_id': 1,
                            'consumer_id': consumer,
                            'resource_class_id': rc, 'used': used}
                           for rc, used in ((0, 1), (1, 512), (2, 10)))
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.projects), [
            {'id': i + 1, 'external_id': 'p%d' % i}
            for i in range(projects)])
        conn.execute(sa.insert(tables.users), [
            {'id': 1, 'external_id': 'u'}])
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': 1, 'uuid': str(uuid.uuid4()), 'name': 'rp',
             'generation': 0, 'root_provider_id': 1}])
        conn.execute(sa.insert(tables.consumers), consumers)
        conn.execute(sa.insert(tables.allocations), allocations)
    with ctx.db.engine.connect() as conn:
        if ctx.db.dialect == 'postgresql':
            # VACUUM too: an index-only scan needs the visibility map.
            conn.execution_options(
                isolation_level='AUTOCOMMIT').exec_driver_sql(
                    'VACUUM ANALYZE allocations, consumers, projects')
        elif ctx.db.dialect == 'mysql':
            conn.exec_driver_sql(
                'ANALYZE TABLE allocations, consumers, projects').all()
        else:
            conn.exec_driver_sql('ANALYZE')
            conn.commit()
    return {'VCPU': per_project, 'MEMORY_MB': 512 * per_project,
            'DISK_GB': 10 * per_project}


_COVERING = 'allocations_consumer_id_class_used_idx'
_PROJECT_TYPES = 'consumers_project_id_consumer_type_id_uuid_idx'


def _steps(conn, statement, values, table='allocations'):
    """How the plan of the prepared ``statement`` reads ``table``:
    [(access, index)], as the dialect names them."""
    compiled = statement._for(conn.dialect)
    parameters = compiled.parameters(values)
    if conn.dialect.name == 'sqlite':
        return [(step.split()[0], step) for _i, _p, _n, step
                in conn.exec_driver_sql('EXPLAIN QUERY PLAN '
                                        + compiled.sql, parameters)
                if step.split()[1:2] == [table]]
    if conn.dialect.name == 'mysql':
        rows = conn.exec_driver_sql('EXPLAIN ' + compiled.sql,
                                    parameters).mappings().all()
        return [(row['type'], '%s %s' % (row['key'], row['Extra']))
                for row in rows if row['table'] == table]
    # PostgreSQL: the plan of the server's prepared statement after the
    # executions that make it choose between custom and generic plans.
    for _ in range(8):
        statement.rows(conn, **values)
    sql = compiled.execute or compiled.sql
    plan = conn.exec_driver_sql('EXPLAIN (FORMAT JSON) ' + sql,
                                parameters).scalar()[0]['Plan']
    found, nodes = [], [plan]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get('Plans', ()))
        if node.get('Relation Name') == table:
            found.append((node['Node Type'], node.get('Index Name', '')))
    return found


@pytest.mark.parametrize('with_user', [False, True])
@pytest.mark.parametrize('projects, per_project', [(300, 10), (3, 300)])
def test_usages_read_only_the_projects_allocations_from_the_index(
        ctx, with_user, projects, per_project):
    """Usages find the project's consumers, then their allocations by
    the consumer index, reading the class and amount from the index
    alone: no scan of every allocation, and no table row read per
    allocation. Without the covering index (before 8b870f51e68b) each
    allocation was read from the table too; totals grouped by the class
    column made SQLite walk the class index over every allocation of a
    cloud of few projects. By consumer type, MariaDB joined the
    project's consumers to their allocations twice, once for the sums
    and once for the counts, before ``GROUP BY ROLLUP``, and read each
    consumer's type from the table (all consumers, when the project held
    a third of them) before the project index carried it
    (c6f209155b76)."""
    if projects < 10 and ctx.db.dialect == 'postgresql':
        pytest.skip('a third of all allocations is rightly hashed there')
    expected = _many_projects(ctx, projects, per_project)
    user = 'u' if with_user else None
    assert usage_obj.totals(ctx, 'p1', user) == expected
    assert usage_obj.by_consumer_type(ctx, 'p1', user) == {
        usage_obj.UNKNOWN: dict(expected, consumer_count=per_project)}
    values = dict(project='p1', user=user, consumer_type=None)
    rollup = ctx.db.dialect != 'sqlite'
    by_type = usage_obj._by_type(with_user, None, rollup)[0]
    with ctx.db.transaction(write=False) as conn:
        if not with_user and ctx.db.dialect != 'postgresql':
            # The project's consumers and their types from the index
            # alone (PostgreSQL's planner may read the few from the
            # table).
            steps = _steps(conn, by_type, values, 'consumers')
            assert [index.split()[0] for _access, index in steps] == [
                _PROJECT_TYPES if ctx.db.dialect == 'mysql' else 'SEARCH'
            ], steps
            marker = {'mysql': 'Using index',
                      'sqlite': 'COVERING INDEX ' + _PROJECT_TYPES}
            assert marker[ctx.db.dialect] in steps[0][1], steps
        for statement in (usage_obj._totals(with_user), by_type):
            if ctx.db.dialect == 'mysql':
                # In this order whatever the statistics say (right after
                # a cloud was loaded they led MariaDB to read every
                # allocation first).
                sql = statement._for(conn.dialect).sql
                assert 'SELECT STRAIGHT_JOIN' in sql, sql
                assert sql.index(' consumers ON ') < sql.index(
                    ' allocations ON '), sql
            steps = _steps(conn, statement, values)
            assert steps, statement.stmt
            if rollup:
                # Sums and counts from one pass over the allocations.
                assert len(steps) == 1, steps
            for access, index in steps:
                assert _COVERING in index, steps
                assert access in ('SEARCH', 'ref', 'Index Only Scan'), steps
                if ctx.db.dialect == 'mysql':
                    assert 'Using index' in index, steps
                if ctx.db.dialect == 'sqlite':
                    assert 'COVERING INDEX' in index, steps


@pytest.mark.parametrize('consumer_type', [None, 'all', 'unknown', 'X'])
def test_usages_are_one_statement(ctx, provider, consumer_type):
    _claim(ctx, provider, 'INSTANCE')
    for fn, args in ((usage_obj.totals, ('proj',)),
                     (usage_obj.totals, ('proj', 'user')),
                     (usage_obj.by_consumer_type,
                      ('proj', None, consumer_type)),
                     (usage_obj.by_consumer_type,
                      ('proj', 'user', consumer_type))):
        sent = fixtures.statements_sent(ctx, fn, ctx, *args,
                                        prepared_too=True)
        assert len([s for s in sent if s.startswith(
            ('SELECT', 'WITH', 'EXECUTE'))]) == 1, sent
        assert len(sent) <= 1, sent
