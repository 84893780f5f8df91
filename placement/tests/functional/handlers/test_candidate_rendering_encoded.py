"""Encoded bodies (``candidate_rendering.encoded``, with summaries encoded
once and kept) are the JSON of the dict bodies
(``candidate_rendering.body``), byte for byte, at every microversion, on
random clouds and requests: candidates of one or several groups, sharing
and nested providers, groups summed on one provider."""

import random

import orjson
import pytest

from placement.handlers import candidate_rendering as rendering
from placement import microversion
from placement.objects.candidates import engine as ac
from placement.tests.functional.objects.candidates import test_engine
from placement.tests.functional.objects.candidates import (
    test_engine_lazy as lazy)

VERSIONS = [microversion.Version.parse(v)
            for v in ('1.10', '1.12', '1.17', '1.27', '1.29', '1.33',
                      '1.34', '1.39')]


def _both(topo, request, versions, requested):
    """[(encoded, JSON of body)] per version, from one search."""
    def present(result):
        return [(rendering.encoded(result, v, requested),
                 orjson.dumps(rendering.body(result, v, requested)))
                for v in versions]
    return ac.find(topo.ctx, request, ac.Options(), random, present=present)


@pytest.mark.parametrize('nested', [False, True])
@pytest.mark.parametrize('seed', range(2))
def test_encoded_bodies_are_the_json_of_dict_bodies(ctx, seed, nested):
    rng = random.Random(seed)
    topo, names = lazy._cloud(ctx, rng, nested)
    found = 0
    for _ in range(40):
        request = lazy._request(rng, topo, names)
        request.isolate = request.isolate and len(request.groups) > 1
        requested = {rc for g in request.groups for rc in g.resources}
        for encoded, dumped in _both(topo, request, VERSIONS, requested):
            assert encoded == dumped
            found += len(orjson.loads(encoded)['allocation_requests'])
    assert found


def test_groups_summed_on_one_provider(ctx):
    """Two groups placing on one provider are summed, as dicts are."""
    topo = test_engine.Topology(ctx)
    topo.add('cn', None, inventory={'VCPU': 8, 'MEMORY_MB': 1024})
    topo.add('numa', 'cn', inventory={'VCPU': 4})
    request = ac.Request(groups=[
        ac.RequestGroup(suffix='', resources={'VCPU': 1}),
        ac.RequestGroup(suffix='1', resources={'VCPU': 2}),
        ac.RequestGroup(suffix='2', resources={'MEMORY_MB': 8})])
    (encoded, dumped), = _both(topo, request, [microversion.MAX_VERSION],
                               {'VCPU', 'MEMORY_MB'})
    assert encoded == dumped
    body = orjson.loads(encoded)
    assert {'resources': {'VCPU': 3}} in [
        allocations for candidate in body['allocation_requests']
        for allocations in candidate['allocations'].values()]

