# Sphinx configuration of the API reference (make api-ref, tox -e
# api-ref). The same pages are part of the documentation site
# (doc/source/api-ref is a link to this directory), so the settings both
# builds need live in doc/source/common_conf.py.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'doc', 'source'))

from common_conf import *  # noqa: E402,F401,F403

project = 'Placement API Reference'
extensions = ['os_api_ref']
exclude_patterns = ['build', 'samples']
html_title = project
