"""The policy walk table covers every route, and its gabbits are current."""

import os

from placement.tests.functional import policy_walk

GABBITS = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                       'gabbits')


def test_every_route_has_a_rule_and_a_sample():
    routed = policy_walk.routed_operations()
    missing_rule = routed - set(policy_walk.rules_by_operation())
    missing_sample = routed - set(policy_walk.SAMPLES)
    assert not missing_rule, 'routes without a policy rule: %s' % sorted(
        missing_rule)
    assert not missing_sample, (
        'routes without a sample in policy_walk.SAMPLES: %s' % sorted(
            missing_sample))


def test_samples_and_rules_name_the_same_operations():
    # Every operation with a policy rule is walked once its route exists.
    assert set(policy_walk.SAMPLES) == set(policy_walk.rules_by_operation())


def test_every_check_string_has_known_access():
    check_strings = {c for _r, c in policy_walk.rules_by_operation().values()}
    assert check_strings <= set(policy_walk.ALLOWED)


def test_generated_gabbits_are_current():
    for mode in policy_walk.MODES:
        path = os.path.join(GABBITS, policy_walk.file_name(mode))
        with open(path, encoding='utf-8') as f:
            committed = f.read()
        assert committed == policy_walk.render(mode), (
            '%s is stale: run "make policy-gabbits"' % path)
