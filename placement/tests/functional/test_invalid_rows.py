"""A row the service did not write hurts only itself.

Each kind of row no write of ours makes is written with SQL, as a hand
edit or another program sharing the database would: candidates,
listings, usages, ``/metrics`` and ``/capacity`` keep serving every
other provider; the row's own provider offers nothing of that class; the
index logs it once at WARNING and counts it; ``placement-status upgrade
check`` lists it. On every database the pass runs on, with the kinds
that database can store.
"""

import json
import logging
import uuid

import pytest
import sqlalchemy as sa

from placement.cmd import status
from placement import context
from placement.db import tables
from placement.objects.candidates import provider_index
from placement.objects import fleet_totals
from placement.objects import invalid_rows
from placement.observability import metrics
from placement.tests import fixtures
# The in-process application on a fresh database, as ``app.db``.
from placement.tests.functional.test_metrics_domain import app  # noqa

# Set anew for every test (``fresh_uuids``): a process logs a row once.
GOOD = BAD = CONSUMER = None

_INV = tables.inventories
_RP = tables.resource_providers
_RC = tables.resource_classes


def _ratio(value):
    return lambda conn: conn.execute(
        sa.update(_INV).where(_INV.c.resource_provider_id == _bad_id(conn),
                              _INV.c.resource_class_id == _vcpu(conn))
        .values(allocation_ratio=sa.literal_column(value)))


def _vcpu_record(**values):
    return lambda conn: conn.execute(
        sa.update(_INV).where(_INV.c.resource_provider_id == _bad_id(conn),
                              _INV.c.resource_class_id == _vcpu(conn))
        .values(**values))


def _stray_allocation(conn):
    memory = conn.execute(sa.select(_RC.c.id).where(
        _RC.c.name == 'MEMORY_MB')).scalar_one()
    conn.execute(sa.insert(tables.allocations).values(
        resource_provider_id=_bad_id(conn), consumer_id=CONSUMER,
        resource_class_id=memory, used=64))


def _bad_id(conn):
    return conn.execute(sa.select(_RP.c.id).where(
        _RP.c.uuid == BAD)).scalar_one()


def _vcpu(conn):
    return conn.execute(sa.select(_RC.c.id).where(
        _RC.c.name == 'VCPU')).scalar_one()


#: kind -> (databases that can store it, SQL, Problem kind, class).
KINDS = {
    # PostgreSQL stores NaN and infinity in a float column; SQLite keeps
    # 'NaN' as text; MySQL stores neither.
    'nan-ratio': (('postgresql', 'sqlite'), _ratio("'NaN'"),
                  'not_a_number', 'VCPU'),
    'infinite-ratio': (('postgresql',), _ratio("'Infinity'"),
                       'not_a_number', 'VCPU'),
    'negative-ratio': (None, _vcpu_record(allocation_ratio=-1.0),
                       'capacity_below_minimum', 'VCPU'),
    'negative-total': (None, _vcpu_record(total=-5), 'negative_value',
                       'VCPU'),
    'reserved-above-total': (None, _vcpu_record(reserved=9),
                             'reserved_above_total', 'VCPU'),
    'min-unit-above-max-unit': (None, _vcpu_record(min_unit=6, max_unit=2),
                                'units', 'VCPU'),
    'zero-step': (None, _vcpu_record(step_size=0), 'units', 'VCPU'),
    'allocation-without-inventory': (None, _stray_allocation,
                                     'allocation_without_inventory',
                                     'MEMORY_MB'),
}


@pytest.fixture(autouse=True)
def fresh_uuids(monkeypatch):
    for name in ('GOOD', 'BAD', 'CONSUMER'):
        monkeypatch.setitem(globals(), name, str(uuid.uuid4()))


call = fixtures.call_as_admin


def _ok(resp):
    assert resp.status_int == 200, resp.body[:500]
    return resp.json


def _providers(app):  # noqa: F811 (the fixture's name)
    for name, rp in (('good', GOOD), ('bad', BAD)):
        assert call(app, 'POST', '/resource_providers',
                    {'name': name, 'uuid': rp}).status_int == 200
        assert call(app, 'PUT', '/resource_providers/%s/inventories' % rp, {
            'resource_provider_generation': 0,
            'inventories': {'VCPU': {'total': 8},
                            'DISK_GB': {'total': 100}}}).status_int == 200
    assert call(app, 'PUT', '/allocations/%s' % CONSUMER, {
        'allocations': {BAD: {'resources': {'VCPU': 1, 'DISK_GB': 1}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'}).status_int == 204


def _counted(kind):
    return metrics.active().registry.get_sample_value(
        'placement_invalid_rows_total', {'kind': kind}) or 0


@pytest.mark.parametrize('name', sorted(KINDS))
def test_a_bad_row_hurts_only_itself(app, name, caplog, tmp_path,  # noqa: F811
                                     capsys):
    backends, write, kind, resource_class = KINDS[name]
    if backends and fixtures.backend_name() not in backends:
        pytest.skip('%s cannot store it' % fixtures.backend_name())
    _providers(app)
    # The index of this process has the good rows already.
    _ok(call(app, 'GET', '/allocation_candidates?resources=VCPU:1'))
    before = _counted(kind)
    with app.db.transaction(write=True) as conn:
        write(conn)
    caplog.set_level(logging.WARNING, logger=provider_index.__name__)

    for _twice in range(2):
        found = _ok(call(app, 'GET',
                         '/allocation_candidates?resources=VCPU:1'))
        providers = {rp for request in found['allocation_requests']
                     for rp in request['allocations']}
        if resource_class == 'VCPU':
            assert providers == {GOOD}
            assert found['provider_summaries'].keys() == {GOOD}
        else:
            assert providers == {GOOD, BAD}
        found = _ok(call(app, 'GET',
                         '/allocation_candidates?resources=DISK_GB:1'))
        assert {GOOD, BAD} <= found['provider_summaries'].keys()
        listed = _ok(call(app, 'GET', '/resource_providers?resources=VCPU:1'))
        assert GOOD in {rp['uuid'] for rp in listed['resource_providers']}
        listed = _ok(call(app, 'GET', '/resource_providers'))
        assert len(listed['resource_providers']) == 2
        for rp in (GOOD, BAD):
            _ok(call(app, 'GET', '/resource_providers/%s/usages' % rp))
            _ok(call(app, 'GET', '/resource_providers/%s' % rp))
        _ok(call(app, 'GET', '/usages?project_id=p'))
        _ok(call(app, 'GET', '/allocations/%s' % CONSUMER))
        assert call(app, 'GET', '/metrics').status_int == 200
        assert call(app, 'GET', '/capacity').status_int == 200

    fleet = fleet_totals.read(context.AdminContext(app.db))
    assert {(row.provider_uuid, row.resource_class): row.capacity
            for row in fleet.rows}[BAD, 'VCPU'] in (0, 8)
    assert all(row.capacity >= 0 for row in fleet.rows)

    # Writes to the good provider go on; the bad record is refused
    # (409), never a 500.
    resp = call(app, 'PUT', '/allocations/%s' % uuid.uuid4(), {
        'allocations': {GOOD: {'resources': {'VCPU': 1}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'})
    assert resp.status_int == 204, resp.body
    if resource_class == 'VCPU':
        resp = call(app, 'PUT', '/allocations/%s' % uuid.uuid4(), {
            'allocations': {BAD: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
        assert resp.status_int == 409, resp.body

    warnings = [r for r in caplog.records
                if r.levelno == logging.WARNING and BAD in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
    assert resource_class in warnings[0].getMessage()
    assert _counted(kind) - before == 1

    found = invalid_rows.find(context.AdminContext(app.db))
    assert [(row.provider_uuid, row.resource_class, row.problem.kind)
            for row in found] == [(BAD, resource_class, kind)]
    config = tmp_path / 'placement.conf'
    config.write_text('[placement_database]\nconnection = %s\n'
                      % app.db.engine.url.render_as_string(
                          hide_password=False))
    code = status.main(['--config-file', str(config), 'upgrade', 'check',
                        '--json'])
    out = capsys.readouterr().out
    assert code == 1, out
    [check] = [check for check in json.loads(out)['checks']
               if check['check'] == 'Invalid Inventory And Allocation Rows']
    assert check['result'] == 1
    assert 'Resource provider %s, %s: %s' % (
        BAD, resource_class, found[0].problem.text) in check['details']
