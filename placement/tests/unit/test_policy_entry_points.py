"""What the oslopolicy-* tools load through our entry points."""

import configparser
from importlib import metadata
import os

from placement import policies
from placement import policy


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
