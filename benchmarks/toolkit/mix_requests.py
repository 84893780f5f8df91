"""One request of each kind of the cloud mix, on a small flat cloud built
through the API: what ``benchmarks.round_trips`` counts in process and
``benchmarks.solo_service`` times on running servers.

The cloud is built as ``benchmarks.cloud_traffic`` builds its flat one
(nodes with VCPU, MEMORY_MB and DISK_GB, each in one of a few aggregates
with a sharing provider, one instance per node); ``requests`` gives one
round of the mix on one node: the refresh GETs nova-compute sends, an
inventory PUT, candidates, an allocation PUT, GET, POST (a migration)
and DELETEs, and the usages of the project and of the node.
"""

import json
import urllib.parse
import uuid

FLAVOUR = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10}
SHARES = 'MISC_SHARES_VIA_AGGREGATE'
PROJECT = 'rt-project'


def call(app, method, path, body=None):
    """(status, decoded body) of a request to ``app``: the WSGI
    application in process, or a ``placement_http.Client`` of a running
    server (``benchmarks.solo_service``)."""
    if hasattr(app, 'request'):
        answer = app.request(method, path, body)
        if answer.status is None:
            raise RuntimeError('%s %s: %s' % (method, path, answer.failure))
        return answer.status, answer.body
    from benchmarks.toolkit import inprocess
    data = json.dumps(body).encode() if body is not None else b''
    status, answer = inprocess.call(app, method, path, data)
    return status, (json.loads(answer) if answer else None)


def _ok(result, what):
    status, body = result
    if status >= 300:
        raise RuntimeError('%s -> %s %s' % (what, status, body))
    return body


class Cloud:
    """A small flat cloud as ``benchmarks.cloud_traffic`` builds it."""

    def __init__(self, app, nodes, aggregates):
        self.app = app
        self.roots = [str(uuid.uuid4()) for _ in range(nodes)]
        self.aggregates = [str(uuid.uuid4()) for _ in range(aggregates)]
        self.instances = []
        for index, root in enumerate(self.roots):
            self._provider(root, 'rt-node-%d' % index, {
                'VCPU': {'total': 64, 'allocation_ratio': 4.0},
                'MEMORY_MB': {'total': 262144},
                'DISK_GB': {'total': 4000}}, ['HW_CPU_X86_AVX2'],
                [self.aggregates[index % aggregates]])
        for index, aggregate in enumerate(self.aggregates):
            self._provider(str(uuid.uuid4()), 'rt-share-%d' % index,
                           {'IPV4_ADDRESS': {'total': 256}}, [SHARES],
                           [aggregate])
        for root in self.roots:
            self.instances.append(self.put_allocation(str(uuid.uuid4()),
                                                      root))

    def _provider(self, rp, name, inventories, traits, aggregates):
        app, base = self.app, '/resource_providers/' + rp
        _ok(call(app, 'POST', '/resource_providers',
                 {'uuid': rp, 'name': name}), 'create')
        _ok(call(app, 'PUT', base + '/inventories', {
            'resource_provider_generation': 0,
            'inventories': inventories}), 'inventories')
        _ok(call(app, 'PUT', base + '/traits', {
            'resource_provider_generation': 1, 'traits': traits}), 'traits')
        _ok(call(app, 'PUT', base + '/aggregates', {
            'resource_provider_generation': 2,
            'aggregates': aggregates}), 'aggregates')

    def put_allocation(self, consumer, root):
        _ok(call(self.app, 'PUT', '/allocations/' + consumer, {
            'allocations': {root: {'resources': dict(FLAVOUR)}},
            'project_id': PROJECT, 'user_id': 'rt-user',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}),
            'claim')
        return consumer


def requests(cloud, index):
    """[(kind, method, path, body)] of one round: each kind of request
    of the mix once, on node ``index``."""
    root = cloud.roots[index % len(cloud.roots)]
    other = cloud.roots[(index + 1) % len(cloud.roots)]
    aggregate = cloud.aggregates[index % len(cloud.aggregates)]
    base = '/resource_providers/' + root
    inventories = _ok(call(cloud.app, 'GET', base + '/inventories'), 'inv')
    disk = dict(inventories['inventories']['DISK_GB'])
    disk['reserved'] = 1 - disk.get('reserved', 0)
    instance = cloud.instances[index % len(cloud.instances)]
    current = _ok(call(cloud.app, 'GET', '/allocations/' + instance), 'get')
    migration = str(uuid.uuid4())
    booted = str(uuid.uuid4())
    query = urllib.parse.urlencode({
        'resources': ','.join('%s:%d' % item
                              for item in sorted(FLAVOUR.items())),
        'limit': 1000})

    def claim(allocations, generation, kind='INSTANCE'):
        return {'allocations': allocations, 'project_id': PROJECT,
                'user_id': 'rt-user', 'consumer_generation': generation,
                'consumer_type': kind}
    return [
        ('GET in_tree', 'GET', '/resource_providers?in_tree=' + root, None),
        ('GET inventories', 'GET', base + '/inventories', None),
        ('GET traits', 'GET', base + '/traits', None),
        ('GET aggregates', 'GET', base + '/aggregates', None),
        ('GET sharing', 'GET', '/resource_providers?member_of=in:%s'
         '&required=%s' % (aggregate, SHARES), None),
        # Served by the provider index: the first listing after writes
        # brings it up to date, the next one only asks whether it is.
        ('GET sharing again', 'GET', '/resource_providers?member_of=in:%s'
         '&required=%s' % (aggregate, SHARES), None),
        ('PUT inventories', 'PUT', base + '/inventories', {
            'resource_provider_generation':
                inventories['resource_provider_generation'],
            'inventories': dict(inventories['inventories'], DISK_GB=disk)}),
        ('GET candidates', 'GET', '/allocation_candidates?' + query, None),
        ('PUT allocations', 'PUT', '/allocations/' + booted,
         claim({other: {'resources': dict(FLAVOUR)}}, None)),
        ('GET allocations', 'GET', '/allocations/' + instance, None),
        ('POST allocations', 'POST', '/allocations', {
            migration: claim({rp: {'resources': a['resources']}
                              for rp, a in current['allocations'].items()},
                             None, 'MIGRATION'),
            instance: claim({other: {'resources': dict(FLAVOUR)}},
                            current['consumer_generation'])}),
        ('DELETE allocations', 'DELETE', '/allocations/' + migration, None),
        ('DELETE allocations (instance)', 'DELETE',
         '/allocations/' + booted, None),
        ('GET usages', 'GET', '/usages?project_id=' + PROJECT, None),
        ('GET provider usages', 'GET', base + '/usages', None),
    ]
