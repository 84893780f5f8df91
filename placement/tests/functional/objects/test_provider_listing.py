"""Listings rendered chunk by chunk (``render_providers``): the newest
change time behind Last-Modified, the chunking, and the header as the
API sends it."""

import datetime
import uuid

import pytest
import sqlalchemy as sa
import webob

from placement.db import tables
from placement.objects import provider_listing
from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures

_RP = tables.resource_providers
_T0 = datetime.datetime(2024, 3, 1, 12, 0, 0)


def _stamp(ctx, provider, created_at, updated_at):
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(_RP).where(_RP.c.id == provider.id).values(
            created_at=created_at, updated_at=updated_at))


@pytest.fixture
def three(ctx):
    """Three providers: the newest change is the created_at of one never
    updated, later than the updated_at of the others."""
    providers = [rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
                 for i in range(3)]
    hour = datetime.timedelta(hours=1)
    _stamp(ctx, providers[0], _T0, _T0 + hour)
    _stamp(ctx, providers[1], _T0 + 3 * hour, None)
    _stamp(ctx, providers[2], _T0, _T0 + 2 * hour)
    return providers


@pytest.mark.parametrize('chunk', [1, 2, 1000])
def test_newest_is_the_latest_update_else_creation(ctx, three, monkeypatch,
                                                   chunk):
    monkeypatch.setattr(provider_listing, 'LISTING_CHUNK', chunk)
    chunks, newest = provider_listing.render_providers(ctx, list, changed=True)
    assert newest == _T0 + datetime.timedelta(hours=3)
    assert [len(c) for c in chunks] == {1: [1, 1, 1], 2: [2, 1],
                                        1000: [3]}[chunk]
    _chunks, newest = provider_listing.render_providers(
        ctx, list, uuid=three[2].uuid, changed=True)
    assert newest == _T0 + datetime.timedelta(hours=2)


@pytest.mark.parametrize('filters', [{}, {'name': 'rp1'}])
def test_newest_only_when_asked_for(ctx, three, filters):
    # Rows carry their change time either way (kept rows and read rows
    # alike); ``changed`` only asks for the newest.
    chunks, newest = provider_listing.render_providers(ctx, list, **filters)
    assert newest is None
    assert None not in {row.changed for chunk in chunks for row in chunk}


def test_nothing_listed_has_no_newest(ctx, three):
    assert provider_listing.render_providers(ctx, list, name='nope',
                                   changed=True) == ([], None)


def test_filtered_after_reading_newest_is_among_the_fitting(ctx, three,
                                                           monkeypatch):
    # The resources filter past the IN-list bound filters rows in Python:
    # only the fitting ones count for Last-Modified.
    monkeypatch.setattr(provider_listing, '_MAX_IDS_IN_QUERY', 0)
    with ctx.db.transaction(write=True) as conn:
        class_id = conn.execute(sa.select(tables.resource_classes.c.id).where(
            tables.resource_classes.c.name == 'VCPU')).scalar()
        for provider in (three[0], three[2]):
            conn.execute(sa.insert(tables.inventories).values(
                resource_provider_id=provider.id, resource_class_id=class_id,
                total=4, reserved=0, min_unit=1, max_unit=4, step_size=1,
                allocation_ratio=1.0))
    # Inserting inventories does not change the providers' rows.
    chunks, newest = provider_listing.render_providers(ctx, list,
                                             resources={'VCPU': 1},
                                             changed=True)
    assert [row.name for chunk in chunks for row in chunk] == ['rp0', 'rp2']
    assert newest == _T0 + datetime.timedelta(hours=2)


@pytest.mark.parametrize('version,header', [
    ('1.14', None), ('1.15', 'Fri, 01 Mar 2024 15:00:00 GMT')])
def test_listing_last_modified_header(ctx, three, version, header):
    app = fixtures.new_app(fixtures.new_conf(), ctx.db)
    req = webob.Request.blank('/resource_providers', headers={
        'x-auth-token': 'admin',
        'openstack-api-version': 'placement %s' % version})
    resp = req.get_response(app)
    assert resp.status_int == 200
    assert resp.headers.get('Last-Modified') == header
    assert resp.content_length == len(resp.body)
    assert [p['name'] for p in resp.json['resource_providers']] == [
        'rp0', 'rp1', 'rp2']
