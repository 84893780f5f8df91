# Sphinx configuration of the documentation site (make docs, tox -e
# docs): guides, the configuration and policy references generated from
# the code, the API reference (api-ref/, linked in as doc/source/api-ref)
# and the release notes, in one site with one navigation.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common_conf import *  # noqa: E402,F401,F403

project = 'Placement'
html_title = 'Placement documentation'
extensions = [
    'os_api_ref',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
    'reno.sphinxext',
]
# Written into _static/ at every build (listed in .gitignore).
config_generator_config_file = '../../etc/placement/config-generator.conf'
sample_config_basename = '_static/placement'
policy_generator_config_file = '../../etc/placement/policy-generator.conf'
sample_policy_basename = '_static/placement'
exclude_patterns = ['api-ref/build', 'api-ref/samples']
