"""Run gabbi files against a running server instead of in-process.

    python tools/gabbi-remote.py http://127.0.0.1:8241 gabbits/x.yaml

Used to check our YAML files against another implementation of the API
(e.g. upstream Placement) as a black box. The server must have a fresh,
empty database for each file (restart it between files): the file's
fixtures from placement/tests/functional/gabbi_fixtures.py populate it
over HTTP, as an admin with noauth2, before the requests of the file run.
"""

import json
import os
import subprocess
import sys
import urllib.request
import uuid

import yaml

from placement.tests.functional import gabbi_fixtures


def remote_api(url):
    def api(self, method, path, body=None, version='latest', headers=None,
            expect=(200, 201, 204)):
        req = urllib.request.Request(url + path, method=method)
        req.add_header('x-auth-token', 'admin')
        req.add_header('x-roles', 'admin,service')
        req.add_header('openstack-api-version', 'placement %s' % version)
        if body is not None:
            req.data = json.dumps(body).encode('utf-8')
            req.add_header('content-type', 'application/json')
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        with urllib.request.urlopen(req) as resp:
            data = resp.read()
            if resp.status not in expect:
                raise AssertionError('%s %s -> %s' % (method, path,
                                                      resp.status))
        return json.loads(data) if data else None
    return api


def main(url, path):
    with open(path) as f:
        names = yaml.safe_load(f).get('fixtures') or []
    for name in names:
        cls = getattr(gabbi_fixtures, name)
        fix = cls.__new__(cls)
        fix._saved_env = {}
        fix.api = remote_api(url).__get__(fix)
        for env in gabbi_fixtures.UUID_NAMES:
            fix.set_env(env, str(uuid.uuid4()))
        fix.populate()
    return subprocess.call(
        [os.path.join(os.path.dirname(sys.executable), 'gabbi-run'),
         url, '--', path])


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
