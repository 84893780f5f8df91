"""Policy rule defaults.

Base rules carry the deprecated (legacy) check strings; with
``[oslo_policy] enforce_new_defaults = False`` oslo.policy ORs them in.
API rules refer to base rules and are all project-scoped.
"""

import itertools

from oslo_policy import policy

from placement.policies import api_rules
from placement.policies import healthcheck

_DEPRECATED_REASON = ('Placement moved to secure role-based defaults: '
                      'admin, service and project reader roles.')
_SINCE = 'Wallaby'


def _deprecated_admin(name):
    return policy.DeprecatedRule(name=name, check_str='role:admin',
                                 deprecated_reason=_DEPRECATED_REASON,
                                 deprecated_since=_SINCE)


ADMIN_API = 'admin_api'
SERVICE_API = 'service_api'
ADMIN_OR_SERVICE_API = 'admin_or_service_api'
PROJECT_READER_API = 'project_reader_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE_API = (
    'admin_or_project_reader_or_service_api')

BASE_RULES = [
    policy.RuleDefault(
        ADMIN_API, 'role:admin',
        description='Default rule for most placement APIs.',
        scope_types=['project']),
    policy.RuleDefault(
        SERVICE_API, 'role:service',
        description='Default rule for service-to-service placement APIs.',
        scope_types=['project'],
        deprecated_rule=_deprecated_admin(SERVICE_API)),
    policy.RuleDefault(
        ADMIN_OR_SERVICE_API, 'role:admin or role:service',
        description='Default rule for most placement APIs.',
        scope_types=['project'],
        deprecated_rule=_deprecated_admin(ADMIN_OR_SERVICE_API)),
    policy.RuleDefault(
        PROJECT_READER_API, 'role:reader and project_id:%(project_id)s',
        description='Default rule for project level reader APIs.',
        deprecated_rule=_deprecated_admin(PROJECT_READER_API)),
    policy.RuleDefault(
        ADMIN_OR_PROJECT_READER_OR_SERVICE_API,
        'role:admin or rule:project_reader_api or role:service',
        description='Default rule for project level reader APIs.',
        scope_types=['project'],
        deprecated_rule=_deprecated_admin(
            ADMIN_OR_PROJECT_READER_OR_SERVICE_API)),
]


def list_rules():
    return list(itertools.chain(BASE_RULES, api_rules.RULES,
                                healthcheck.RULES))
