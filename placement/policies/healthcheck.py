"""Who sees the details of the health check.

Not an API operation: ``/healthcheck`` answers everyone, and this rule
only decides whether the answer explains itself, so it is not part of the
policy walk of ``api_rules``.
"""

from oslo_policy import policy

DETAILS = 'placement:healthcheck:details'

RULES = [
    policy.DocumentedRuleDefault(
        name=DETAILS, check_str='rule:admin_api',
        description='See the details of the health check (database '
                    'reachable, dialect, probe latency, last error). '
                    'Other callers, tokenless ones included, get only '
                    '"OK" or the 503.',
        operations=[{'method': 'GET', 'path': '/healthcheck'}],
        scope_types=['project']),
]
