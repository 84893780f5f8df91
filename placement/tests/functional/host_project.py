"""Another project's functional tests, with placement in their process.

What nova's and osc-placement's functional tests do with this package:
``PlacementFixture`` answering a keystoneauth1 Adapter at
``fixture.endpoint`` (providers, inventories, allocations, allocation
candidates), then ``placement.direct.PlacementDirect``; from several
threads at once, green ones under ``--eventlet`` (nova's functional
tests run monkey-patched). Around that, the host application's own
state is recorded before and after and must come out unchanged: its
CORS answers on its own ConfigOpts (with the host's own
``cors.set_defaults``), its oslo.policy decisions, the thread's current
oslo.context (the host's request is still being served when it calls
placement), its global ``cfg.CONF``, oslo.policy's and oslo.middleware's
option defaults, the root logger and oslo.log's formatting
configuration.

Exit status 0 when all holds; otherwise the differences are printed.
Needs only what such a project's test environment has (``fixtures``,
``keystoneauth1``, ``eventlet`` with ``--eventlet``)::

    python -m placement.tests.functional.host_project [--eventlet]

``tools/check-host-project.sh`` runs it on the installed wheel in a
virtualenv built with OpenStack's constraints; ``test_host_project.py``
from a checkout.
"""

import sys

if __name__ == '__main__' and '--eventlet' in sys.argv[1:]:
    # First, as a host's test package does, before any library import.
    import eventlet
    eventlet.monkey_patch()

import logging  # noqa: E402
import threading  # noqa: E402
import uuid  # noqa: E402

from keystoneauth1 import adapter  # noqa: E402
from keystoneauth1 import session  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_context import context as oslo_context  # noqa: E402
from oslo_log import formatters as log_formatters  # noqa: E402
from oslo_log import log as oslo_logging  # noqa: E402
from oslo_middleware import cors  # noqa: E402
from oslo_policy import _checks as policy_checks  # noqa: E402
from oslo_policy import opts as policy_opts  # noqa: E402
from oslo_policy import policy  # noqa: E402
import webob  # noqa: E402

from placement import conf as placement_conf  # noqa: E402
from placement import direct  # noqa: E402
from placement.tests.functional.fixtures import placement  # noqa: E402

HOST_ORIGIN = 'http://dashboard.host.example'
#: The host's own CORS defaults, set as nova sets its own at import.
HOST_CORS_DEFAULTS = {
    'allow_headers': ['X-Auth-Token', 'X-Host-API-Version'],
    'expose_headers': ['X-Host-API-Version'],
    'allow_methods': ['GET', 'POST'],
}
HOST_RULES = (
    policy.RuleDefault('host:servers:create',
                       'role:member and project_id:%(project_id)s'),
    policy.RuleDefault('host:servers:force_down', 'role:admin'),
)
#: The host's callers: two users of one project (nova's "second user"),
#: a reader, an administrator.
HOST_USERS = {
    'first': dict(user_id='u1', project_id='p1', roles=['member', 'reader']),
    'second': dict(user_id='u2', project_id='p1',
                   roles=['member', 'reader']),
    'reader': dict(user_id='u3', project_id='p1', roles=['reader']),
    'admin': dict(user_id='u4', project_id='p2',
                  roles=['admin', 'member', 'reader']),
}
MICROVERSION = '1.39'


class Host:
    """The host application: its configuration, CORS-wrapped API and
    policy enforcer."""

    def __init__(self):
        cors.set_defaults(**HOST_CORS_DEFAULTS)
        cfg.CONF.register_opts([cfg.StrOpt('flavour', default='plain')],
                               group='host')
        self.conf = self._new_conf()
        oslo_logging.register_options(cfg.CONF)
        self.enforcer = policy.Enforcer(self.conf)
        self.enforcer.register_defaults(HOST_RULES)

    @staticmethod
    def _new_conf():
        conf = cfg.ConfigOpts()
        conf.register_opts(cors.CORS_OPTS, 'cors')
        conf([], project='host', default_config_files=[],
             default_config_dirs=[])
        conf.set_override('allowed_origin', [HOST_ORIGIN], 'cors')
        return conf

    def cors_app(self):
        """The host's API behind its CORS middleware, on a new
        configuration (as each of the host's tests builds it)."""
        return cors.CORS(self._api, self._new_conf())

    @staticmethod
    @webob.dec.wsgify
    def _api(request):
        return webob.Response(json={'host': True})

    def context(self, who):
        """A host request's context: made current, as oslo.context
        does by default."""
        return oslo_context.RequestContext(**HOST_USERS[who])

    def state(self):
        """Everything placement must leave as it found it."""
        preflight = webob.Request.blank('/servers', method='OPTIONS', headers={
            'Origin': HOST_ORIGIN,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'X-Host-API-Version'})
        answer = preflight.get_response(self.cors_app())
        decisions = {}
        for who, user in HOST_USERS.items():
            creds = oslo_context.RequestContext(overwrite=False, **user)
            target = {'project_id': 'p1', 'user_id': user['user_id']}
            for rule in HOST_RULES:
                decisions[who, rule.name] = self.enforcer.enforce(
                    rule.name, target, creds)
        root = logging.getLogger()
        return {
            'host CORS preflight': (answer.status_int, sorted(
                (name, value) for name, value in answer.headerlist
                if name.lower().startswith('access-control-'))),
            'host CORS request': webob.Request.blank(
                '/servers', headers={'Origin': HOST_ORIGIN}).get_response(
                    self.cors_app()).headers.get(
                        'Access-Control-Expose-Headers'),
            'oslo.middleware CORS defaults': {
                opt.name: opt.default for opt in cors.CORS_OPTS},
            'host policy decisions': decisions,
            'oslo.policy option defaults': {
                opt.name: opt.default
                for _group, opts in policy_opts.list_opts() for opt in opts},
            'oslo.policy check kinds': dict(policy_checks.registered_checks),
            'global cfg.CONF': sorted(
                (key, sorted(cfg.CONF[key]) if isinstance(
                    cfg.CONF[key], cfg.ConfigOpts.GroupAttr) else None)
                for key in cfg.CONF),
            'root logger': (root.level, [type(h) for h in root.handlers]),
            'configuration of oslo.log formatters': id(
                log_formatters._CONF),
        }


class Checks:
    """Records failed expectations instead of stopping at the first."""

    def __init__(self):
        self.failures = []
        self.count = 0

    def equal(self, what, expected, actual):
        self.count += 1
        if expected != actual:
            self.failures.append('%s: expected %r, got %r' % (
                what, expected, actual))

    def current_context_is(self, what, expected):
        self.equal('current oslo.context after %s' % what, id(expected),
                   id(oslo_context.get_current()))


def _call(checks, client, host_context, method, path, expect, **kwargs):
    """One placement request from inside a host request: the host's
    context must still be the current one afterwards."""
    resp = client.request(path, method, headers={'x-auth-token': 'admin'},
                          **kwargs)
    checks.equal('%s %s' % (method, path), expect, resp.status_code)
    checks.current_context_is('%s %s' % (method, path), host_context)
    return resp.json() if resp.content else None


def _use_placement(checks, client, host_context):
    """A compute host's view of placement: two providers, an allocation,
    then candidates that must leave out the full one."""
    nodes = [str(uuid.uuid4()) for _ in range(2)]
    for number, node in enumerate(nodes):
        _call(checks, client, host_context, 'POST', '/resource_providers',
              200, json={'uuid': node, 'name': 'node%d-%s' % (number, node)})
        _call(checks, client, host_context, 'PUT',
              '/resource_providers/%s/inventories' % node, 200, json={
                  'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 8},
                                  'MEMORY_MB': {'total': 4096}}})
    consumer = str(uuid.uuid4())
    _call(checks, client, host_context, 'PUT', '/allocations/%s' % consumer,
          204, json={
              'allocations': {nodes[0]: {'resources': {
                  'VCPU': 6, 'MEMORY_MB': 1024}}},
              'consumer_generation': None, 'consumer_type': 'INSTANCE',
              'project_id': 'p1', 'user_id': 'u1'})
    found = _call(checks, client, host_context, 'GET',
                  '/allocation_candidates?resources=VCPU:4,MEMORY_MB:512',
                  200)
    checks.equal('candidates for VCPU:4', [nodes[1]], [
        list(request['allocations'])[0]
        for request in found['allocation_requests']])
    usages = _call(checks, client, host_context, 'GET',
                   '/allocations/%s' % consumer, 200)
    checks.equal('allocation read back', {'VCPU': 6, 'MEMORY_MB': 1024},
                  usages['allocations'][nodes[0]]['resources'])


def _from_threads(checks, host, client, threads=4):
    """Host requests on several threads (green ones when patched), each
    calling placement: each keeps its own current context."""
    def work(number):
        mine = host.context('second' if number % 2 else 'first')
        for _ in range(3):
            _call(checks, client, mine, 'GET', '/resource_providers', 200)
    workers = [threading.Thread(target=work, args=(n,))
               for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)


def _adapter(endpoint):
    return adapter.Adapter(
        session.Session(), service_type='placement',
        endpoint_override=endpoint, default_microversion=MICROVERSION,
        raise_exc=False)


def run():
    """The host's functional tests; the list of failures."""
    host = Host()
    checks = Checks()
    before = host.state()

    host_context = host.context('first')
    with placement.PlacementFixture() as fixture:
        client = _adapter(fixture.endpoint)
        _use_placement(checks, client, host_context)
        _from_threads(checks, host, client)
        during = host.state()
    for name, value in before.items():
        checks.equal('%s with the fixture in place' % name, value,
                     during[name])

    host_context = host.context('second')
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project='placement', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('auth_strategy', 'noauth2', group='api')
    conf.set_override('connection', 'sqlite://', group='placement_database')
    conf.set_override('sync_on_startup', True, group='placement_database')
    with direct.PlacementDirect(conf) as client:
        client.default_microversion = MICROVERSION
        _use_placement(checks, client, host_context)

    checks.current_context_is('both', host_context)
    after = host.state()
    for name, value in before.items():
        checks.equal('%s after the fixture' % name, value, after[name])
    return checks


def main():
    checks = run()
    if checks.failures:
        print('\n'.join(checks.failures))
        return 1
    print('host project: %d checks passed%s' % (
        checks.count, ' (eventlet)' if '--eventlet' in sys.argv else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
