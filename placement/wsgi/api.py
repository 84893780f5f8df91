"""WSGI entry point: ``placement.wsgi.api:application``.

gunicorn, uwsgi and mod_wsgi load ``application``; configuration comes
from the web-service config search and ``OS_<GROUP>__<OPTION>``
environment variables (spec 12 §1).
"""

from oslo_log import log as logging

from placement import conf as placement_conf
from placement import deploy


def init_application():
    conf = placement_conf.build()
    logging.setup(conf, 'placement')
    return deploy.loadapp(conf)


application = init_application()
