"""Shaping the engine's domain values into candidate bodies."""

import orjson

from placement.handlers import candidate_rendering as rendering
from placement import microversion
from placement.objects.candidates import engine as ac
from placement.objects.candidates import provider_index
from placement.objects.candidates import search as search

V = microversion.Version
CN, NUMA, PF, SS = 1, 2, 3, 4
VCPU, MEMORY_MB, VF, DISK = 10, 11, 12, 13
UUIDS = {CN: 'cn', NUMA: 'numa', PF: 'pf', SS: 'ss'}
NAMES = {VCPU: 'VCPU', MEMORY_MB: 'MEMORY_MB', VF: 'SRIOV_NET_VF',
         DISK: 'DISK_GB'}


def _summary(uuid, resources, traits=(), parent=None, root=None):
    return provider_index.Summary(uuid, resources, traits, parent,
                                  root or uuid)


SUMMARIES = {
    'cn': _summary('cn', (('VCPU', 8, 1),), ('HW_CPU_X86_AVX2',)),
    'numa': _summary('numa', (('VCPU', 4, 0), ('MEMORY_MB', 2048, 512)),
                     parent='cn', root='cn'),
}


def _result(candidates, summaries=SUMMARIES):
    """A Result whose summaries are ``summaries`` of the providers asked
    for and of their roots."""
    def described(providers):
        uuids = {UUIDS[p] for p in providers}
        uuids |= {summaries[u].root_uuid for u in uuids if u in summaries}
        return [s for u, s in summaries.items() if u in uuids]
    return ac.Result(candidates, UUIDS, NAMES, described)


def test_groups_on_one_provider_are_summed():
    template = ((VCPU, 1),)
    compute = search.Partial((NUMA,), ((NUMA, VCPU, 1),))
    numa = search.Partial((NUMA,), (), template)
    net = search.Partial((PF,), ((PF, VF, 2),))
    result = _result([(('', '_NET', '_X'), (compute, net, numa))])
    assert rendering.latest(result)[0] == [{
        'allocations': {'numa': {'resources': {'VCPU': 2}},
                        'pf': {'resources': {'SRIOV_NET_VF': 2}}},
        'mappings': {'': ['numa'], '_NET': ['pf'], '_X': ['numa']}}]


def test_a_partial_spread_over_providers_and_a_resourceless_group():
    spread = search.Partial((CN, SS), ((CN, VCPU, 1), (SS, DISK, 10)))
    resourceless = search.Partial((NUMA,))
    result = _result([(('', '_R'), (spread, resourceless))])
    assert rendering.latest(result)[0] == [{
        'allocations': {'cn': {'resources': {'VCPU': 1}},
                        'ss': {'resources': {'DISK_GB': 10}}},
        'mappings': {'': ['cn', 'ss'], '_R': ['numa']}}]


def _lone(provider):
    return search.Partial((provider,), ((provider, VCPU, 1),), ((VCPU, 1),))


def test_older_versions_show_less_and_change_nothing_shared():
    result = _result([(('',), (_lone(CN),)), (('',), (_lone(NUMA),))])
    latest = rendering.body(result, microversion.MAX_VERSION, {'VCPU'})
    dicts = rendering.body(result, V(1, 12), {'VCPU'})
    lists = rendering.body(result, V(1, 10), {'VCPU'})
    assert dicts['allocation_requests'][0] == {
        'allocations': {'cn': {'resources': {'VCPU': 1}}}}
    assert lists['allocation_requests'][1] == {'allocations': [
        {'resource_provider': {'uuid': 'numa'},
         'resources': {'VCPU': 1}}]}
    again = rendering.body(result, microversion.MAX_VERSION, {'VCPU'})
    assert again == latest
    assert latest['allocation_requests'][0]['mappings'] == {'': ['cn']}
    assert latest['provider_summaries']['numa'] == {
        'resources': {'VCPU': {'capacity': 4, 'used': 0},
                      'MEMORY_MB': {'capacity': 2048, 'used': 512}},
        'traits': [], 'parent_provider_uuid': 'cn',
        'root_provider_uuid': 'cn'}


def test_older_summaries():
    result = _result([(('',), (_lone(NUMA),))])
    summaries = {
        version: rendering.body(result, V(1, version),
                                {'VCPU'})['provider_summaries']['cn']
        for version in (16, 17, 26, 27, 28, 29)}
    assert summaries[16] == {'resources': {
        'VCPU': {'capacity': 8, 'used': 1}}}
    assert summaries[17] == dict(summaries[16], traits=['HW_CPU_X86_AVX2'])
    numa = rendering.body(result, V(1, 26), {'VCPU'})
    assert list(numa['provider_summaries']['numa']['resources']) == ['VCPU']
    numa = rendering.body(result, V(1, 27), {'VCPU'})
    assert list(numa['provider_summaries']['numa']['resources']) == [
        'VCPU', 'MEMORY_MB']
    assert summaries[28] == summaries[27]
    assert summaries[29]['root_provider_uuid'] == 'cn'


def test_summaries_of_the_providers_placing_something():
    resourceless = search.Partial((CN,))
    result = _result([(('', '_R'), (_lone(NUMA), resourceless))])
    _, summaries = rendering.latest(result)
    assert list(summaries) == ['cn', 'numa']
    result = _result([(('_R',), (resourceless,))])
    assert rendering.latest(result) == ([{
        'allocations': {}, 'mappings': {'_R': ['cn']}}], {})


def test_summaries_are_rendered_once_per_summary():
    candidates = [(('',), (_lone(NUMA),))]
    _, first = rendering.latest(_result(candidates))
    assert rendering.latest(_result(candidates))[1]['cn'] is first['cn']
    changed = dict(SUMMARIES, cn=_summary('cn', (('VCPU', 8, 2),)))
    _, second = rendering.latest(_result(candidates, changed))
    assert second['cn'] is not first['cn']
    assert second['cn']['resources'] == {'VCPU': {'capacity': 8, 'used': 2}}
    assert second['numa'] is first['numa']


def test_encoded_summaries_are_kept_per_summary():
    candidates = [(('',), (_lone(NUMA),))]
    version = microversion.MAX_VERSION
    first = rendering.encoded(_result(candidates), version, {'VCPU'})
    kept = dict(rendering._ENCODED)
    assert rendering.encoded(_result(candidates), version, {'VCPU'}) == first
    assert rendering._ENCODED['cn'] is kept['cn']
    changed = dict(SUMMARIES, cn=_summary('cn', (('VCPU', 8, 2),)))
    second = rendering.encoded(_result(candidates, changed), version,
                               {'VCPU'})
    assert rendering._ENCODED['cn'] is not kept['cn']
    assert rendering._ENCODED['numa'] is kept['numa']
    assert second == orjson.dumps(
        rendering.body(_result(candidates, changed), version, {'VCPU'}))
    assert b'"used":2' in second
