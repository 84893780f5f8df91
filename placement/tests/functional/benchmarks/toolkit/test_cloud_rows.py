"""benchmarks/toolkit/cloud_rows.py writes, with bulk SQL, exactly the
rows the API writes for the same providers (so that what a benchmark
measures is a cloud the API could have made)."""

import sqlalchemy as sa

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import cloud_rows
from placement.db import tables
from placement.tests import fixtures

# Columns that differ between any two loads (ids aside, compared by uuid).
_VOLATILE = {'id', 'created_at', 'updated_at', 'resource_provider_id',
             'root_provider_id', 'parent_provider_id', 'aggregate_id'}


def _api_load(app, providers):
    def call(method, path, body=None):
        resp = fixtures.call_as_admin(app, method, path, body)
        assert resp.status_int < 300, resp.text
        return resp.json_body if resp.body else None
    for name, parent, inventories, traits, aggregates in providers:
        rp = cloud_api.ident(name)
        body = {'name': name, 'uuid': rp}
        if parent:
            body['parent_provider_uuid'] = cloud_api.ident(parent)
        call('POST', '/resource_providers', body)
        path = '/resource_providers/' + rp
        generation = 0
        if inventories:
            generation = call('PUT', path + '/inventories', {
                'resource_provider_generation': generation,
                'inventories': {
                    inv['resource_class']: {
                        k: v for k, v in inv.items()
                        if k != 'resource_class'}
                    for inv in inventories}})['resource_provider_generation']
        if traits:
            generation = call('PUT', path + '/traits', {
                'resource_provider_generation': generation,
                'traits': traits})['resource_provider_generation']
        if aggregates:
            call('PUT', path + '/aggregates', {
                'resource_provider_generation': generation,
                'aggregates': [cloud_api.ident(a) for a in aggregates]})


def _snapshot(db):
    """Every row of the provider tables, ids replaced by uuids."""
    rp, agg = tables.resource_providers, tables.placement_aggregates
    with db.transaction(write=False) as conn:
        uuid_of = dict(conn.execute(sa.select(rp.c.id, rp.c.uuid)).all())
        agg_of = dict(conn.execute(sa.select(agg.c.id, agg.c.uuid)).all())
        found = {}
        for table in (rp, tables.inventories,
                      tables.resource_provider_traits,
                      tables.resource_provider_aggregates, agg):
            rows = []
            for row in conn.execute(sa.select(table)).mappings():
                row = dict(row)
                refs = tuple(uuid_of.get(row.get(column)) for column in (
                    'resource_provider_id', 'root_provider_id',
                    'parent_provider_id'))
                rows.append(tuple(sorted(
                    (k, v) for k, v in row.items() if k not in _VOLATILE))
                    + refs + (agg_of.get(row.get('aggregate_id')),))
            found[table.name] = sorted(rows, key=repr)
    return found


def test_bulk_rows_are_the_rows_the_api_writes():
    providers = list(cloud_rows.flat_providers(4)) + list(
        cloud_rows.nested_providers(2))
    bulk_db, bulk_cleanup = fixtures.new_database()
    try:
        url = bulk_db.engine.url.render_as_string(hide_password=False)
        assert cloud_rows.bulk_load(url, providers) == len(providers)
        bulk = _snapshot(bulk_db)
    finally:
        bulk_cleanup()
    api_db, api_cleanup = fixtures.new_database()
    try:
        _api_load(fixtures.new_app(fixtures.new_conf(), api_db), providers)
        assert _snapshot(api_db) == bulk
    finally:
        api_cleanup()
