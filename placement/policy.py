"""Policy enforcement with oslo.policy, its decisions remembered briefly.

oslo.policy evaluates a rule's check tree, and looks for changed policy
files, on every call: together most of a small request's non-database
time. The same caller (identity and scope) asking the same rule about the
same target always gets the same answer from the same rules, so answers
are kept until the next look at the policy files, at most
``RELOAD_INTERVAL`` seconds later (see api-ref/behaviour-choices.rst,
'Policy file changes').
"""

import operator
import time

from oslo_context import context as oslo_context
from oslo_policy import policy as oslo_policy

from placement import conf as placement_conf
from placement import policies
from placement.web import errors


#: Seconds between two looks at the policy files; answers are kept as
#: long.
RELOAD_INTERVAL = 1.0
#: Answers kept at most (callers x rules x targets), then forgotten.
MEMO_LIMIT = 10000


def _frozen(values):
    """A hashable form of a flat dict of policy values (lists as
    tuples); TypeError for anything else unhashable."""
    return tuple(sorted(
        (key, tuple(value) if isinstance(value, list) else value)
        for key, value in values.items()))


#: The context attributes oslo.context's ``to_policy_values`` hands to
#: oslo.policy, in its order (a unit test compares the two).
POLICY_ATTRIBUTES = (
    'user_id', 'user_domain_id', 'system_scope', 'domain_id', 'project_id',
    'project_domain_id', 'roles', 'is_admin_project', 'service_user_id',
    'service_user_domain_id', 'service_project_id',
    'service_project_domain_id', 'service_roles')

_OSLO_POLICY_VALUES = oslo_context.RequestContext.to_policy_values
_POLICY_VALUES = operator.attrgetter(*POLICY_ATTRIBUTES)


def _policy_values_key(context):
    """A hashable key of ``context.to_policy_values()``: where that is
    oslo.context's own method, the attributes it copies, read directly
    (iterating the mapping it returns costs most of a remembered
    decision, and there is one context per request); else
    ``_frozen`` of the mapping. The two forms cannot be equal: one holds
    (name, value) pairs, the other starts with the user id or None."""
    if (type(context).to_policy_values is not _OSLO_POLICY_VALUES
            or 'to_policy_values' in getattr(context, '__dict__', ())):
        return _frozen(context.to_policy_values())
    # A list, not a generator: resuming a generator per value cost a
    # quarter of this function.
    return tuple([tuple(value) if isinstance(value, list) else value
                  for value in _POLICY_VALUES(context)])


def _caller(context):
    """The hashable policy values of ``context``, worked out once per
    context. A request's context is built once by the auth layer and not
    altered afterwards; one whose values are unhashable raises TypeError
    every time."""
    key = getattr(context, '_policy_caller', None)
    if key is None:
        key = _policy_values_key(context)
        try:
            context._policy_caller = key
        except AttributeError:  # a context class with slots: no memory
            pass
    return key


class PolicyEnforcer:
    """Owns the oslo.policy Enforcer for one application."""

    def __init__(self, conf, clock=time.monotonic):
        self.enforcer = oslo_policy.Enforcer(conf)
        self.enforcer.register_defaults(policies.list_rules())
        self.enforcer.load_rules()
        self._clock = clock
        self._next_look = clock() + RELOAD_INTERVAL
        self._answers = {}

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
        now = self._clock()
        if now >= self._next_look:
            self._next_look = now + RELOAD_INTERVAL
            self.enforcer.load_rules()
            self._answers = {}
        try:
            key = (rule, _caller(context), _frozen(target))
            denial = self._answers[key]
        except TypeError:  # an unhashable value: decide without memory
            denial = self._decide(context, rule, target)
        except KeyError:
            denial = self._decide(context, rule, target)
            if len(self._answers) >= MEMO_LIMIT:
                self._answers = {}
            self._answers[key] = denial
        if denial is not None:
            raise errors.Forbidden(denial, vary=False)

    def _decide(self, context, rule, target):
        """The 403 text for ``context`` asking ``rule``, None if allowed."""
        try:
            self.enforcer.authorize(rule, target, context, do_raise=True)
        except oslo_policy.InvalidScope:
            return rule
        except oslo_policy.PolicyNotAuthorized:
            return 'Policy does not allow %s to be performed.' % rule
        return None


def get_enforcer():
    """The Enforcer the ``oslopolicy-*`` tools inspect.

    Registered as the ``oslo.policy.enforcer`` entry point: our defaults
    plus the policy file named by the configuration found in the usual
    places (``/etc/placement/placement.conf``, ...).
    """
    conf = placement_conf.build(
        [], config_files=placement_conf.cli_config_files())
    return PolicyEnforcer(conf).enforcer
