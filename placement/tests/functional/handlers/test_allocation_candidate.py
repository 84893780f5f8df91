"""GET /allocation_candidates in process: what a big answer leaves to
the cycle collector."""

import gc

import pytest
import webob

from placement.tests import fixtures
from placement.tests.functional.objects.candidates import test_engine
from placement.web import responses


def _sharing(topo):
    """30 compute nodes x 30 sharing providers: 900 candidates below 1.29
    (rendered as dicts)."""
    for i in range(30):
        topo.add('host%d' % i, inventory={'VCPU': 4}, aggs=['A'])
        topo.add('disk%d' % i, inventory={'DISK_GB': 4}, aggs=['A'],
                 traits=['MISC_SHARES_VIA_AGGREGATE'])
    return '/allocation_candidates?resources=VCPU:1,DISK_GB:1'


def _tree(topo):
    """30 compute x 30 device children of one tree: 900 candidates at
    1.39, from partials worked out tree by tree."""
    topo.add('cn')
    for i in range(30):
        topo.add('numa%d' % i, 'cn', inventory={'VCPU': 4})
        topo.add('dev%d' % i, 'cn', inventory={'SRIOV_NET_VF': 4})
    return ('/allocation_candidates?resources1=VCPU:1'
            '&resources2=SRIOV_NET_VF:1&group_policy=none')


class _Recording:
    """``gc`` as ``responses`` uses it, counting the young objects alive when
    the collector is paused and when it runs again."""

    def __init__(self):
        self.young = []

    def isenabled(self):
        return gc.isenabled()

    def disable(self):
        self.young.append(len(gc.get_objects(generation=0)))
        gc.disable()

    def enable(self):
        self.young.append(len(gc.get_objects(generation=0)))
        gc.enable()


# The bound is what a request leaves whatever its answer (the sharing
# case reads the database more); a leak of the answer's objects leaves
# thousands, of its partials hundreds.
@pytest.mark.parametrize('version, cloud, bound', [('1.25', _sharing, 900),
                                                   ('1.39', _tree, 100)])
def test_the_body_is_freed_before_the_collector_runs_again(
        ctx, monkeypatch, version, cloud, bound):
    query = cloud(test_engine.Topology(ctx))
    app = fixtures.new_app(fixtures.new_conf(), ctx.db)
    fixtures.call_as_admin(app, 'GET', query)  # the index is loaded
    recording = _Recording()
    monkeypatch.setattr(responses, 'gc', recording)
    if not gc.isenabled():
        pytest.skip('the collector is off in this process')
    req = webob.Request.blank(query)
    req.headers['x-auth-token'] = 'admin'
    req.headers['openstack-api-version'] = 'placement ' + version
    response = req.get_response(app)
    assert response.status_int == 200
    assert len(response.json['allocation_requests']) == 900
    paused, resumed = recording.young
    # Nothing built for the answer is left for the collector: before,
    # the body's dicts (several per candidate), then the partials (kept
    # by a reference cycle), were alive when it resumed, and its first
    # pass scanned them all.
    assert resumed - paused < bound

