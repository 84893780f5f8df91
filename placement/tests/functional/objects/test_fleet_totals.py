"""The fleet capacity snapshot and its sums."""

import uuid

import pytest

from placement import context
from placement.objects import fleet_totals
from placement.tests import fixtures


def call(app, method, path, body=None):
    resp = fixtures.call_as_admin(app, method, path, body)
    assert resp.status_int < 300, resp.text
    return resp


class Fleet:
    def __init__(self, app):
        self.app = app

    def provider(self, name, inventories, parent=None, aggregates=()):
        rp = str(uuid.uuid4())
        body = {'name': name, 'uuid': rp}
        if parent:
            body['parent_provider_uuid'] = parent
        call(self.app, 'POST', '/resource_providers', body)
        call(self.app, 'PUT', '/resource_providers/%s/inventories' % rp,
             {'resource_provider_generation': 0,
              'inventories': inventories})
        if aggregates:
            call(self.app, 'PUT', '/resource_providers/%s/aggregates' % rp,
                 {'resource_provider_generation': 1,
                  'aggregates': list(aggregates)})
        return rp

    def allocate(self, amounts):
        call(self.app, 'PUT', '/allocations/%s' % uuid.uuid4(),
             {'allocations': {rp: {'resources': resources}
                              for rp, resources in amounts.items()},
              'project_id': 'p', 'user_id': 'u',
              'consumer_generation': None, 'consumer_type': 'INSTANCE'})


AGG = str(uuid.uuid4())


@pytest.fixture
def fleet():
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(fixtures.new_conf(), db)
    fleet = Fleet(app)
    fleet.db = db
    fleet.cn1 = fleet.provider(
        'cn1', {'VCPU': {'total': 10, 'reserved': 2,
                         'allocation_ratio': 2.0},
                'MEMORY_MB': {'total': 1000}}, aggregates=[AGG])
    fleet.cn2 = fleet.provider('<b>cn2</b>', {'VCPU': {'total': 4}})
    fleet.gpu = fleet.provider('cn2-gpu', {'VGPU': {'total': 2}},
                               parent=fleet.cn2)
    fleet.allocate({fleet.cn1: {'VCPU': 4, 'MEMORY_MB': 100}})
    fleet.allocate({fleet.cn2: {'VCPU': 4}, fleet.gpu: {'VGPU': 1}})
    yield fleet
    cleanup()


def test_snapshot_sums(fleet):
    snap = fleet_totals.read(context.AdminContext(fleet.db))
    assert len(snap.rows) == 4
    assert snap.by_class() == {'MEMORY_MB': (1000, 100), 'VCPU': (20, 8),
                               'VGPU': (2, 1)}
    assert snap.by_aggregate() == {(AGG, 'MEMORY_MB'): (1000, 100),
                                   (AGG, 'VCPU'): (16, 4)}
    roots = snap.by_root()
    assert roots[fleet.cn2, '<b>cn2</b>'] == {'VCPU': (4, 4),
                                              'VGPU': (2, 1)}


def test_snapshot_is_reused_within_the_interval(fleet):
    ctx = context.AdminContext(fleet.db)
    first = fleet_totals.snapshot(ctx, max_age=60)
    fleet.provider('cn3', {'VCPU': {'total': 1}})
    assert fleet_totals.snapshot(ctx, max_age=60) == first
    assert len(fleet_totals.snapshot(ctx, max_age=0).rows) == 5
