"""benchmarks/capacity_fit.py runs end to end on small clouds."""

from benchmarks import capacity_fit
from placement.tests import fixtures
from placement.web import capacity_flavors


def test_flavors_are_valid_named_requests():
    conf = fixtures.new_conf(capacity__flavors=[
        '%s = %s' % pair for pair in capacity_fit.flavors(50)])
    assert len(capacity_flavors.named(conf)) == 50


def test_fit_and_metrics_on_small_clouds(capsys):
    capacity_fit.main(['fit', '--sizes', '70', '--repeat', '2'])
    capacity_fit.main(['metrics', '--flavors', '3', '--providers', '40',
                       '--repeat', '1', '--writes', '2'])
    out = capsys.readouterr().out
    # 70 flat hosts, half with 16 GB of 128 GB used: 32 or 28 of the
    # flavor's 4 GB each.
    assert 'flat-70 fit, first' in out and 'total 2100 over 70 trees' in out
    # 10 trees of 7: NUMA nodes of 16 VCPU, 2 each, PFs of 8 VFs.
    assert 'nested-70 fit, after one write' in out
    assert 'flat-40, 3 flavors: /metrics, cached' in out


def test_sharing_scenario(capsys):
    capacity_fit.main(['fit', '--sizes', '204', '--scenario', 'sharing',
                       '--repeat', '1'])
    out = capsys.readouterr().out
    # 4 pools of a thousand 40 GB disks; 200 nodes of 32 instances, half
    # of them 28: the pools run out first (the aggregates link them).
    assert 'sharing-204 fit, first' in out
    assert 'total 4000 over 200 trees' in out
    assert '(at least)' not in out
