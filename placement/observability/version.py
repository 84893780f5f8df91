"""The version of the installed distribution, for ``--version`` and the
build-info metric."""

from importlib import metadata

#: Our distribution's name, and the one older checkouts installed as.
DISTRIBUTIONS = ('placement-server', 'placement')


def version_string():
    """The installed version, or ``'unknown'`` (a checkout run without
    being installed)."""
    for name in DISTRIBUTIONS:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return 'unknown'
