"""osprofiler's ``[profiler]`` options, when osprofiler is installed
(``placement-server[profiler]``; tracing itself is
``placement/middleware/profiler.py`` and ``placement/db/profiler.py``).

osprofiler is imported only here and only when used: importing
``osprofiler.opts`` registers its options on oslo.config's global
``CONF``, which a host process running our fixture must not see. Only
our own processes (``placement.conf.build``) register them.
"""

import importlib.util

from oslo_config import cfg

GROUP = 'profiler'


def available():
    """Whether osprofiler is installed."""
    return importlib.util.find_spec('osprofiler') is not None


def register_opts(conf):
    """osprofiler's options on ``conf``, if it is installed."""
    if available():
        from osprofiler import opts
        # A group of this ConfigOpts' own, registered first: osprofiler
        # registers its options with one OptGroup object, which oslo.config
        # would share, overrides and all, with every ConfigOpts (the
        # global CONF included) given it.
        conf.register_group(cfg.OptGroup(GROUP))
        opts.set_defaults(conf)


def list_opts():
    """For oslo-config-generator: osprofiler's options when installed."""
    if not available():
        return []
    from osprofiler import opts
    return opts.list_opts()


def enabled(conf):
    """``[profiler] enabled``; False where the options are not
    registered (osprofiler missing, or placement in a host's process)."""
    return GROUP in conf and conf.profiler.enabled
