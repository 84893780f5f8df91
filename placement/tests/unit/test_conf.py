"""Each ConfigOpts keeps its own overrides."""

from placement.tests import fixtures


def test_overrides_do_not_leak_into_the_next_configuration():
    first = fixtures.new_conf(placement__max_allocation_candidates=5,
                              metrics__enabled=False)
    second = fixtures.new_conf()
    assert first.placement.max_allocation_candidates == 5
    assert first.metrics.enabled is False
    assert second.placement.max_allocation_candidates == -1
    assert second.metrics.enabled is True
