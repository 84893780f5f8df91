"""A cloud built over the API, alike on every server and in every run.

Providers and aggregates take uuids derived from their names (``ident``),
so a benchmark finds on every server, and in a later run, the same
uuids for the same names; ``Client`` sends each request on a fresh
connection (threads may share it) and rides out a busy server's
transient failures on writes; ``load`` creates providers from parallel
threads.
"""

import concurrent.futures
import time
import uuid

from placement.tests import placement_http

NS = uuid.UUID('6b1e3c2a-4f59-4d0e-9a55-0b3d1c1e7a10')


def ident(name):
    return str(uuid.uuid5(NS, name))


class Client:
    """Requests over a fresh connection each (safe to share by threads)."""

    def __init__(self, url, token, timeout):
        self.url, self.token, self.timeout = url, token, timeout

    def get(self, path, timeout=None):
        """Return (Response with the body as bytes, seconds from sending
        the request to reading the body's last byte)."""
        client = placement_http.Client(self.url, self.token,
                                       timeout or self.timeout)
        try:
            start = time.perf_counter()
            resp = client.fetch('GET', path)
            seconds = time.perf_counter() - start
        finally:
            client.close()
        return resp, seconds

    def call(self, method, path, body=None, timeout=None):
        """Return (status, decoded JSON or None); status None and the
        failure text when no answer came (e.g. a timeout)."""
        client = placement_http.Client(self.url, self.token,
                                       timeout or self.timeout)
        try:
            resp = client.request(method, path, body)
        finally:
            client.close()
        return resp.status, (resp.body if resp.status else resp.failure)

    def write(self, method, path, body=None, ok=(200, 201, 204), tries=20):
        """Write, retrying the transient failures of a busy server."""
        for attempt in range(tries):
            status, data = self.call(method, path, body)
            if status in ok:
                return data
            if status in (500, 503, 409) and attempt + 1 < tries:
                time.sleep(0.05 * (attempt + 1))
                if status == 409 and isinstance(body, dict) and \
                        'resource_provider_generation' in body:
                    rp = path.split('/')[2]
                    body = dict(body, resource_provider_generation=self.call(
                        'GET', '/resource_providers/' + rp)[1]['generation'])
                continue
            raise RuntimeError('%s %s -> %s %s' % (method, path, status, data))


def create_provider(client, name, inventories, parent=None, traits=(),
                    aggregates=()):
    rp = ident(name)
    body = {'name': name, 'uuid': rp}
    if parent:
        body['parent_provider_uuid'] = ident(parent)
    client.write('POST', '/resource_providers', body)
    path = '/resource_providers/' + rp
    gen = 0
    if inventories:
        gen = client.write('PUT', path + '/inventories', {
            'resource_provider_generation': gen,
            'inventories': inventories})['resource_provider_generation']
    if traits:
        gen = client.write('PUT', path + '/traits', {
            'resource_provider_generation': gen,
            'traits': list(traits)})['resource_provider_generation']
    if aggregates:
        client.write('PUT', path + '/aggregates', {
            'resource_provider_generation': gen,
            'aggregates': list(aggregates)})


def load(client, jobs, threads, label):
    """Run provider-creating jobs; each job is a list run in order."""
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(lambda steps: [create_provider(client, *s[0],
                                                              **s[1])
                                              for s in steps], job)
                   for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            future.result()
    print('%s: loaded %d providers in %.1f s' % (
        label, sum(len(j) for j in jobs), time.monotonic() - start),
        flush=True)
