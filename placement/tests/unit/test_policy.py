"""Policy decisions the HTTP walk cannot show yet, and policy files.

The gabbi policy walk covers routed operations; these call the enforcer
directly, so rules of routes still to come (reshaper, usages) and
operator overrides are checked too.
"""

import configparser
from importlib import metadata
import json
import os

import pytest

from placement import context
from placement import policies
from placement import policy
from placement.tests import fixtures
from placement.web import errors


def _enforcer(**overrides):
    return policy.PolicyEnforcer(fixtures.new_conf(**overrides))


def _caller(roles, project='p1', **kwargs):
    return context.RequestContext(user_id='u', project_id=project,
                                  roles=roles, **kwargs)


def _allowed(enforcer, caller, rule, target=None):
    if target is None:
        target = {'project_id': caller.project_id,
                  'user_id': caller.user_id}
    try:
        enforcer.authorize(caller, rule, target)
    except errors.Forbidden:
        return False
    return True


@pytest.mark.parametrize('legacy_allows', [False, True])
def test_reshaper_is_for_services_and_for_admins_only_when_legacy(
        legacy_allows):
    enforcer = _enforcer(oslo_policy__enforce_new_defaults=not legacy_allows)
    rule = 'placement:reshaper:reshape'
    assert _allowed(enforcer, _caller(['service']), rule)
    assert _allowed(enforcer, _caller(['admin']), rule) is legacy_allows


def test_readers_see_usages_of_their_own_project_only():
    enforcer = _enforcer()
    reader = _caller(['reader'])
    assert _allowed(enforcer, reader, 'placement:usages', {'project_id': 'p1'})
    assert not _allowed(enforcer, reader, 'placement:usages',
                        {'project_id': 'p2'})
    assert not _allowed(enforcer, reader, 'placement:usages',
                        {'project_id': None})
    assert not _allowed(enforcer, reader, 'placement:resource_providers:list')


def test_denials_name_the_rule():
    enforcer = _enforcer()
    with pytest.raises(errors.Forbidden) as denied:
        enforcer.authorize(_caller(['member']), 'placement:traits:list', {})
    assert denied.value.detail == (
        'Policy does not allow placement:traits:list to be performed.')
    system_admin = context.RequestContext(user_id='admin', roles=['admin'],
                                          system_scope='all')
    with pytest.raises(errors.Forbidden) as denied:
        enforcer.authorize(system_admin, 'placement:traits:list', {})
    assert denied.value.detail == 'placement:traits:list'


@pytest.mark.parametrize('suffix, dump', [
    ('.yaml', lambda rules: ''.join('"%s": "%s"\n' % r
                                    for r in rules.items())),
    ('.json', json.dumps),
])
def test_policy_file_overrides_rules(tmp_path, suffix, dump):
    path = tmp_path / ('policy' + suffix)
    path.write_text(dump({
        'placement:traits:list': 'role:reader',
        'placement:no_such_rule': '!',
    }))
    enforcer = _enforcer(oslo_policy__policy_file=str(path))
    assert _allowed(enforcer, _caller(['reader']), 'placement:traits:list')
    assert not _allowed(enforcer, _caller(['admin']), 'placement:traits:list')
    # Other rules keep their defaults.
    assert _allowed(enforcer, _caller(['admin']), 'placement:traits:show')


def test_policy_file_cannot_widen_scope(tmp_path):
    path = tmp_path / 'policy.yaml'
    path.write_text('"placement:traits:list": "@"\n')
    enforcer = _enforcer(oslo_policy__policy_file=str(path))
    anyone = _caller([])
    system_admin = context.RequestContext(user_id='admin', roles=['admin'],
                                          system_scope='all')
    assert _allowed(enforcer, anyone, 'placement:traits:list')
    assert not _allowed(enforcer, system_admin, 'placement:traits:list')


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_changed_policy_file_is_reread_within_the_interval(tmp_path):
    path = tmp_path / 'policy.yaml'
    path.write_text('"placement:traits:list": "role:admin"\n')
    clock = _Clock()
    enforcer = policy.PolicyEnforcer(
        fixtures.new_conf(oslo_policy__policy_file=str(path)), clock=clock)
    reader = _caller(['reader'])
    assert not _allowed(enforcer, reader, 'placement:traits:list')
    path.write_text('"placement:traits:list": "role:reader"\n')
    later = os.stat(path).st_mtime + 10
    os.utime(path, (later, later))
    # The answer given is kept until the next look at the files...
    clock.now += policy.RELOAD_INTERVAL / 2
    assert not _allowed(enforcer, reader, 'placement:traits:list')
    # ... which comes at most RELOAD_INTERVAL seconds later.
    clock.now += policy.RELOAD_INTERVAL
    assert _allowed(enforcer, reader, 'placement:traits:list')


def test_remembered_answers_are_per_caller_rule_and_target():
    enforcer = _enforcer()
    reader, admin = _caller(['reader']), _caller(['admin'])
    for _ in range(2):
        assert _allowed(enforcer, reader, 'placement:usages',
                        {'project_id': 'p1'})
        assert not _allowed(enforcer, reader, 'placement:usages',
                            {'project_id': 'p2'})
        assert not _allowed(enforcer, _caller(['reader'], project='p2'),
                            'placement:usages', {'project_id': 'p1'})
        assert _allowed(enforcer, admin, 'placement:traits:list')
        assert not _allowed(enforcer, reader, 'placement:traits:list')
        system_admin = context.RequestContext(
            user_id='admin', roles=['admin'], system_scope='all')
        with pytest.raises(errors.Forbidden) as denied:
            enforcer.authorize(system_admin, 'placement:traits:list', {})
        assert denied.value.detail == 'placement:traits:list'


def test_a_callers_policy_values_are_read_once(monkeypatch):
    # Reading them (a mapping oslo.context builds) was most of the cost
    # of a remembered answer; a request asks one or more rules.
    enforcer = _enforcer()
    rules = ('placement:usages', 'placement:traits:list')
    for rule in rules:  # remembered: oslo.policy reads none below
        _allowed(enforcer, _caller(['reader']), rule)
    reader = _caller(['reader'])
    reads = []
    key = policy._policy_values_key
    monkeypatch.setattr(policy, '_policy_values_key',
                        lambda caller: reads.append(1) or key(caller))
    for rule in rules * 2:
        _allowed(enforcer, reader, rule)
    assert len(reads) == 1
    assert _allowed(enforcer, _caller(['admin']), 'placement:traits:list')


def test_answers_are_forgotten_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(policy, 'MEMO_LIMIT', 3)
    enforcer = _enforcer()
    for project in range(10):
        assert _allowed(enforcer, _caller(['reader'], project=str(project)),
                        'placement:usages', {'project_id': str(project)})
    assert len(enforcer._answers) <= 3


# What the oslopolicy-* tools load through our entry points.

def test_enforcer_entry_point_knows_every_rule(monkeypatch, tmp_path):
    # No configuration file on this machine may change the answer.
    monkeypatch.setattr(policy.placement_conf, 'cli_config_files',
                        lambda: [])
    enforcer = policy.get_enforcer()
    names = {rule.name for rule in policies.list_rules()}
    assert names <= set(enforcer.registered_rules)
    assert 'placement:reshaper:reshape' in enforcer.rules


def test_setup_cfg_names_the_entry_points():
    # Every target of our oslo entry points imports and exists.
    parser = configparser.ConfigParser()
    parser.read(os.path.join(os.path.dirname(__file__), '..', '..', '..',
                             'setup.cfg'))
    points = parser['options.entry_points']
    assert 'placement.policy:get_enforcer' in points['oslo.policy.enforcer']
    assert 'placement.policies:list_rules' in points['oslo.policy.policies']
    for group in ('oslo.policy.enforcer', 'oslo.policy.policies',
                  'oslo.config.opts', 'oslo.config.opts.defaults'):
        for line in points[group].split('\n'):
            if line.strip():
                target = line.split('=', 1)[1].strip()
                assert metadata.EntryPoint(
                    name='x', value=target, group=group).load()


def test_policy_values_are_keyed_on_what_oslo_context_hands_over():
    """The remembered answers' key reads the context's attributes instead
    of the mapping ``to_policy_values`` builds: the same names (an
    oslo.context that adds one fails here), the same key."""
    caller = context.RequestContext(
        user_id='u', project_id='p', roles=['reader', 'member'],
        system_scope='all', domain_id='d', user_domain_id='ud',
        project_domain_id='pd', service_user_id='su',
        service_roles=['service'], is_admin_project=False)
    values = caller.to_policy_values()
    assert tuple(values) == policy.POLICY_ATTRIBUTES
    assert policy._policy_values_key(caller) == tuple(
        tuple(values[name]) if isinstance(values[name], list)
        else values[name] for name in policy.POLICY_ATTRIBUTES)


@pytest.mark.parametrize('name', policy.POLICY_ATTRIBUTES)
def test_callers_differing_in_any_policy_value_are_told_apart(name):
    one, other = _caller(['reader']), _caller(['reader'])
    setattr(other, name, ['x'] if name.endswith('roles') else 'changed')
    assert policy._caller(one) != policy._caller(other)


def test_a_context_with_its_own_policy_values_is_keyed_on_them():
    class Extended(context.RequestContext):
        def to_policy_values(self):
            values = super().to_policy_values()
            values['flavour'] = 'big'
            return values

    caller = Extended(user_id='u', project_id='p', roles=['reader'])
    assert policy._policy_values_key(caller) == policy._frozen(
        caller.to_policy_values())


def test_every_rule_is_described_for_the_policy_reference():
    # The generated policy reference and sample file show these: each
    # rule says what it allows, not only which request it guards.
    from placement.policies import api_rules
    assert set(api_rules.DESCRIPTIONS) == api_rules.NAMES
    for rule in policies.list_rules():
        assert rule.description and rule.description.endswith('.'), rule.name
        assert not rule.description.startswith(('GET ', 'PUT ', 'POST ',
                                                'DELETE ')), rule.name
