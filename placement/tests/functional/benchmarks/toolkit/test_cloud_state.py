"""The cloud-state check reads a real server back: it passes a cloud
written through the API and names what a write around it broke."""

import uuid

import pytest
import sqlalchemy as sa

from benchmarks.toolkit import cloud_state
from placement.tests import gunicorn_server
from placement.tests import placement_http

PROJECTS = [str(uuid.uuid4()), str(uuid.uuid4())]
FLAVOUR = {'VCPU': 2, 'MEMORY_MB': 512}


def _provider(client, name, inventories, parent=None):
    rp = str(uuid.uuid4())
    body = {'uuid': rp, 'name': name}
    if parent:
        body['parent_provider_uuid'] = parent
    client.checked('POST', '/resource_providers', body)
    client.checked('PUT', '/resource_providers/%s/inventories' % rp, {
        'resource_provider_generation': 0, 'inventories': inventories})
    return rp


def _claim(client, project, allocations):
    client.checked('PUT', '/allocations/%s' % uuid.uuid4(), {
        'allocations': {rp: {'resources': resources}
                        for rp, resources in allocations.items()},
        'project_id': project, 'user_id': project,
        'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        expect=(204,))


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    """A server with a flat node with room, a full one, and a tree whose
    VCPU and memory sit on two children."""
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'cloud_state', workers=1) as server:
        client = placement_http.Client(server.url)
        roomy = _provider(client, 'roomy', {
            'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}})
        full = _provider(client, 'full', {
            'VCPU': {'total': 2}, 'MEMORY_MB': {'total': 4096}})
        root = _provider(client, 'root', {})
        cpus = _provider(client, 'cpus', {'VCPU': {'total': 4}}, root)
        memory = _provider(client, 'memory', {'MEMORY_MB': {'total': 1024}},
                           root)
        _claim(client, PROJECTS[0], {roomy: {'VCPU': 2}})
        _claim(client, PROJECTS[1], {full: {'VCPU': 1, 'MEMORY_MB': 10}})
        _claim(client, PROJECTS[1], {cpus: {'VCPU': 1},
                                     memory: {'MEMORY_MB': 256}})
        client.close()
        yield server, {'roomy': roomy, 'full': full, 'root': root}


def test_a_cloud_written_through_the_api_is_consistent(cloud):
    server, _names = cloud
    found = cloud_state.check(server.url, FLAVOUR, PROJECTS)
    assert found.ok, found.text()
    assert (found.providers, found.consumers) == (5, 3)
    # The flat node with room, and the tree from its two children.
    assert (found.candidates, found.trees) == (2, 2)
    assert found.text().startswith('consistent (5 providers')


def test_a_project_left_out_is_named(cloud):
    server, _names = cloud
    found = cloud_state.check(server.url, FLAVOUR, PROJECTS[:1])
    assert len(found.problems) == 1, found.text()
    assert found.problems[0].startswith('GET /usages of the projects')


def test_an_allocation_beyond_capacity_is_named(cloud):
    server, names = cloud
    engine = sa.create_engine(server.db_url)
    claim = ('SELECT id, used FROM allocations WHERE resource_provider_id'
             ' = (SELECT id FROM resource_providers WHERE uuid = :rp)')
    kept = []
    try:
        with engine.begin() as connection:
            kept = connection.execute(sa.text(claim),
                                      {'rp': names['roomy']}).all()
            # Around the API, which would refuse it: the roomy node's
            # claim takes more VCPU than it has.
            connection.execute(sa.text(
                'UPDATE allocations SET used = 40 WHERE resource_provider_id'
                ' = (SELECT id FROM resource_providers WHERE uuid = :rp)'),
                {'rp': names['roomy']})
        found = cloud_state.check(server.url, FLAVOUR, PROJECTS)
    finally:
        # The module's other tests share the cloud.
        with engine.begin() as connection:
            for row_id, used in kept:
                connection.execute(
                    sa.text('UPDATE allocations SET used = :used '
                            'WHERE id = :id'), {'used': used, 'id': row_id})
        engine.dispose()
    text = found.text()
    assert 'provider %s holds 40 VCPU beyond its capacity 8' % (
        names['roomy']) in text, text
    # The candidates, rightly, no longer offer it; the check agrees.
    assert (found.candidates, found.trees) == (1, 1), text
    assert len(found.problems) == 1, text
