"""Two configurations in one process (two in-process fixtures, a test
and its server) must not see each other's values."""

from oslo_config import cfg

from placement import conf as placement_conf


def _registered():
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], default_config_files=[])
    return conf


def test_overrides_stay_in_their_configuration():
    one, two = _registered(), _registered()
    one.set_override('connection', 'sqlite:///one.db',
                     group='placement_database')
    one.set_override('auth_strategy', 'noauth2', group='api')
    assert two.placement_database.connection is None
    assert two.api.auth_strategy == 'keystone'


def test_metrics_overrides_stay_in_their_configuration():
    one, two = _registered(), _registered()
    one.set_override('enabled', False, group='metrics')
    assert one.metrics.enabled is False
    assert two.metrics.enabled is True
