# Sphinx configuration of the release notes alone (make releasenotes,
# tox -e releasenotes); the documentation site includes the same notes.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'doc', 'source'))

from common_conf import *  # noqa: E402,F401,F403

project = 'Placement Release Notes'
html_title = project
extensions = ['reno.sphinxext']
