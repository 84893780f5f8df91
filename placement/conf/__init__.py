"""Configuration: option definitions and how a ConfigOpts is built.

Every option is read, highest precedence first, from the command line,
``OS_<GROUP>__<OPTION>`` environment variables, configuration files, and
the built-in default (oslo.config's own environment source provides the
environment layer).
"""

import copy
import os

from keystonemiddleware import opts as keystone_opts
from oslo_config import cfg
from oslo_log import _options as log_options
from oslo_log import log as logging
from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from oslo_policy import opts as policy_opts

from placement.conf import api
from placement.conf import audit
from placement.conf import capacity
from placement.conf import database
from placement.conf import metrics
from placement.conf import middleware
from placement.conf import paths
from placement.conf import placement as placement_group
from placement.conf import workarounds
from placement.conf import profiler

_GROUP_MODULES = (api, audit, capacity, database, metrics, middleware,
                  paths, placement_group, workarounds)

CORS_DEFAULTS = {
    'allow_headers': [
        'X-Auth-Token', 'X-Openstack-Request-Id', 'X-Identity-Status',
        'X-Roles', 'X-Service-Catalog', 'X-User-Id', 'X-Tenant-Id',
        'OpenStack-API-Version'],
    'expose_headers': [
        'X-Auth-Token', 'X-Openstack-Request-Id', 'X-Subject-Token',
        'X-Service-Token', 'OpenStack-API-Version'],
    'allow_methods': ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'],
}


def set_lib_defaults():
    """Our defaults for library options, for oslo-config-generator (the
    ``oslo.config.opts.defaults`` entry point) to show.

    It changes oslo.middleware's option objects, shared by every
    ConfigOpts of the process: the service sets the same defaults on its
    own ConfigOpts only (``register_opts``).
    """
    cors.set_defaults(**CORS_DEFAULTS)


def _register_cors_opts(conf):
    """oslo.middleware's ``[cors]`` options with our defaults, on
    ``conf`` alone.

    ``cors.set_defaults`` would change the defaults of every ConfigOpts
    in the process (the option objects are oslo.middleware's), and so the
    CORS headers of a host application whose tests run placement in
    process. A ``[cors]`` group someone else registered on ``conf`` keeps
    its defaults.
    """
    ours = 'cors' not in conf
    conf.register_opts(cors.CORS_OPTS, 'cors')
    if ours:
        for name, value in CORS_DEFAULTS.items():
            conf.set_default(name, value, group='cors')


def _register_log_opts(conf):
    """oslo.log's options, on ``conf`` alone.

    ``oslo_log.log.register_options`` also gives the root logger a handler
    and makes ``conf`` the one every ContextFormatter of the process
    created without a configuration formats with: right for our own
    processes (``build``), wrong inside a host application's tests.
    """
    conf.register_cli_opts(log_options.common_cli_opts)
    conf.register_cli_opts(log_options.logging_cli_opts)
    conf.register_opts(log_options.generic_log_opts)
    conf.register_opts(log_options.log_opts)


def register_opts(conf):
    """Register every option the service reads on ``conf``."""
    for module in _GROUP_MODULES:
        if hasattr(module, 'GROUP'):
            # A group object of this ConfigOpts' own: oslo.config copies
            # a registered OptGroup shallowly, so two ConfigOpts given
            # the module's GROUP would share option values and overrides.
            conf.register_group(copy.deepcopy(module.GROUP))
        module.register_opts(conf)
    _register_log_opts(conf)
    policy_opts.set_defaults(conf)
    _register_cors_opts(conf)
    conf.register_opts(http_proxy_to_wsgi.OPTS, 'oslo_middleware')
    # Registered up front (keystonemiddleware would do it on first use) so
    # [keystone_authtoken] options can be set and overridden like any other.
    for group, opts in keystone_opts.list_auth_token_opts():
        conf.register_opts(opts, group=group)


def cli_config_files():
    """oslo.config's default search, used by the command-line tools."""
    return cfg.find_config_files(project='placement')


def web_service_config_files():
    """The configuration files the web service reads
    (doc/source/install/index.rst, Configuration).

    ``OS_PLACEMENT_CONFIG_DIR`` names the single directory whose
    ``placement.conf`` is read; otherwise oslo.config's default search for
    project ``placement`` applies.
    """
    config_dir = os.environ.get('OS_PLACEMENT_CONFIG_DIR', '').strip()
    if config_dir:
        return [os.path.join(config_dir, 'placement.conf')], []
    return (cfg.find_config_files(project='placement'),
            cfg.find_config_dirs(project='placement'))


def build(argv=None, config_files=None, cli_opts=(), prog=None,
          version=None):
    """Return a new, parsed ConfigOpts with every option registered.

    ``config_files`` None means the web service's file search (which
    honours ``OS_PLACEMENT_CONFIG_DIR``); otherwise exactly those files
    are read (``--config-file`` in ``argv`` still takes precedence);
    ``cli_opts`` are extra command-line options of a tool, ``version``
    what its ``--version`` prints (no such option without).
    """
    conf = cfg.ConfigOpts()
    # Our own process: oslo.log's process-wide set-up too, and
    # osprofiler's options (importing them registers them globally).
    logging.register_options(conf)
    register_opts(conf)
    profiler.register_opts(conf)
    conf.register_cli_opts(cli_opts)
    dirs = []
    if config_files is None:
        config_files, dirs = web_service_config_files()
    files = [f for f in config_files if os.path.exists(f)]
    dirs = [d for d in dirs if os.path.isdir(d)]
    conf(argv or [], project='placement', prog=prog,
         version=version, default_config_files=files,
         default_config_dirs=dirs)
    return conf
