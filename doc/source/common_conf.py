"""Sphinx settings shared by the documentation site (doc/source), the
API reference (api-ref) and the release notes (releasenotes/source).

The theme is Sphinx's stock alabaster, not openstackdocstheme:
openstackdocstheme builds offline, but every page it renders carries
docs.openstack.org's header and menus and loads Google Analytics and
openstack.org's search widget from the network, which is neither true
of this project nor wanted by a reader offline. os-api-ref's operation
panels then show expanded (its collapse script needs the bootstrap that
theme brings); _static/api-ref.css hides the dead "Show all" button.
"""

import configparser
import os

HERE = os.path.dirname(os.path.abspath(__file__))

copyright = 'placement-server contributors'
author = 'placement-server contributors'
root_doc = 'index'
language = 'en'
html_theme = 'alabaster'
html_theme_options = {
    'description': 'OpenStack Placement API',
    'fixed_sidebar': True,
    'page_width': '1100px',
}
html_sidebars = {'**': ['about.html', 'navigation.html', 'searchbox.html']}
html_static_path = [os.path.join(HERE, '_static')]
html_css_files = ['api-ref.css']


def _version():
    setup_cfg = configparser.ConfigParser()
    setup_cfg.read(os.path.join(HERE, '..', '..', 'setup.cfg'))
    return setup_cfg.get('metadata', 'version')


version = release = _version()
