"""Policy enforcement with oslo.policy."""

from oslo_policy import policy as oslo_policy

from placement import conf as placement_conf
from placement import errors
from placement import policies


class PolicyEnforcer:
    """Owns the oslo.policy Enforcer for one application."""

    def __init__(self, conf):
        self.enforcer = oslo_policy.Enforcer(conf)
        self.enforcer.register_defaults(policies.list_rules())
        self.enforcer.load_rules()

    def allows(self, context, rule, target):
        """True if ``context`` may perform ``rule``; for answers that
        reveal more to some callers instead of refusing the others."""
        try:
            self.authorize(context, rule, target)
        except errors.Forbidden:
            return False
        return True

    def authorize(self, context, rule, target):
        """Raise a 403 unless ``context`` may perform ``rule``.

        A scope mismatch answers with just the rule name, a failed check
        string with "Policy does not allow {rule} to be performed." (the
        texts clients match).
        """
        try:
            self.enforcer.authorize(rule, target, context, do_raise=True)
        except oslo_policy.InvalidScope:
            raise errors.Forbidden(rule, vary=False)
        except oslo_policy.PolicyNotAuthorized:
            raise errors.Forbidden(
                'Policy does not allow %s to be performed.' % rule,
                vary=False)


def get_enforcer():
    """The Enforcer the ``oslopolicy-*`` tools inspect.

    Registered as the ``oslo.policy.enforcer`` entry point: our defaults
    plus the policy file named by the configuration found in the usual
    places (``/etc/placement/placement.conf``, ...).
    """
    conf = placement_conf.build(
        [], config_files=placement_conf.cli_config_files())
    return PolicyEnforcer(conf).enforcer
