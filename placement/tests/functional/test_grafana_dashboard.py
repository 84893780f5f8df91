"""The Grafana dashboard imports as is and shows only exported metrics."""

import json
import os
import re

from placement import context
from placement.objects import fleet_totals
from placement.observability import fleet_gauges
from placement.observability import metrics
from placement.tests import fixtures

DASHBOARD = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                         'tools', 'grafana', 'placement-dashboard.json')
_NAME = re.compile(r'\bplacement_[a-z0-9_]+')
_SUFFIXES = {'counter': ('_total',), 'gauge': ('',),
             'histogram': ('_bucket', '_sum', '_count')}


def exported_names():
    """Every sample name /metrics can carry, from the families exported
    by an application and the capacity collector."""
    db, cleanup = fixtures.new_database()
    try:
        fixtures.new_app(fixtures.new_conf(), db)
        snapshot = fleet_totals.read(context.AdminContext(db))
    finally:
        cleanup()
    families = list(metrics.active().registry.collect())
    families += fleet_gauges.CapacityCollector(snapshot).collect()
    families += fleet_gauges.FlavorFitCollector([]).collect()
    return {family.name + suffix for family in families
            for suffix in _SUFFIXES[family.type]}


def panels():
    with open(DASHBOARD) as source:
        dashboard = json.load(source)
    return dashboard, [panel for panel in dashboard['panels']
                       if panel['type'] != 'row']


def test_datasource_is_an_import_input():
    dashboard, shown = panels()
    (source,) = dashboard['__inputs']
    assert source['type'] == 'datasource'
    assert source['pluginId'] == 'prometheus'
    variable = '${%s}' % source['name']
    for panel in shown:
        assert panel['datasource']['uid'] == variable
        for target in panel['targets']:
            assert target['datasource']['uid'] == variable
    assert dashboard['id'] is None


def test_every_expression_uses_exported_metrics():
    exported = exported_names()
    _dashboard, shown = panels()
    used = set()
    for panel in shown:
        assert panel['targets'], panel['title']
        for target in panel['targets']:
            names = set(_NAME.findall(target['expr']))
            assert names, target['expr']
            assert names <= exported, (panel['title'], names - exported)
            used |= names
    # The panels the operator documentation promises.
    for name in ('placement_http_requests_total',
                 'placement_http_request_duration_seconds_bucket',
                 'placement_allocation_writes_total',
                 'placement_retries_total',
                 'placement_allocation_candidates_search_seconds_bucket',
                 'placement_fleet_capacity', 'placement_fleet_usage',
                 'placement_aggregate_capacity',
                 'placement_aggregate_usage', 'placement_flavor_fit',
                 'placement_provider_over_capacity'):
        assert name in used, name


def test_panels_do_not_overlap():
    _dashboard, shown = panels()
    cells = set()
    for panel in shown:
        grid = panel['gridPos']
        assert grid['x'] + grid['w'] <= 24
        for x in range(grid['x'], grid['x'] + grid['w']):
            for y in range(grid['y'], grid['y'] + grid['h']):
                assert (x, y) not in cells, panel['title']
                cells.add((x, y))
