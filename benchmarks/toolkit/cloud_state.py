"""A cloud read back through the API after a load, and the invariants
its state must hold (``cloud_traffic --check``).

A mix of tasks that keeps no ledger of its writes (unlike
``allocation_ledger``) can still be checked for what every state must
hold, with nothing else running:

* each provider's usages equal the sum of the allocations it lists,
  and stay within its capacity, ``(total - reserved) *
  allocation_ratio``;
* ``GET /usages`` (microversion 1.9) summed over ``projects`` equals
  the providers' usages summed, when every consumer belongs to one of
  them;
* the candidates of ``resources`` without a limit name exactly the
  trees with room for it (each class whole on one provider of the tree:
  the request must not name a class a sharing provider holds), and
  their provider summaries show the capacity and usage the provider
  endpoints show: the candidates' view of the cloud (ours: a per-worker
  index) is the database's. The same for a query asked for the first
  time (each amount one more), whose answer a server cannot have kept
  from an earlier request: problems with the first query alone point
  at kept answers, with both at what they are made from.
"""

import collections
import concurrent.futures
import threading
import urllib.parse

from placement.tests import placement_http

#: Problems listed in full; past that, only counted.
LISTED = 20
#: How the problems of the query asked for the first time begin.
FRESH = 'a new query: '


class Checked:
    """What ``check`` read and the problems it found."""

    def __init__(self):
        self.providers = 0
        self.consumers = 0
        self.candidates = 0
        self.trees = 0
        self.problems = []

    @property
    def ok(self):
        return not self.problems

    def text(self):
        head = ('%d providers, %d consumers, %d candidates on %d trees'
                % (self.providers, self.consumers, self.candidates,
                   self.trees))
        if self.ok:
            return 'consistent (%s)' % head
        fresh = [p for p in self.problems if p.startswith(FRESH)]
        rest = [p for p in self.problems if not p.startswith(FRESH)]
        lines = ['%d PROBLEMS, %d of them with %s(%s):' % (
            len(self.problems), len(fresh), FRESH, head)]
        for listed in (rest, fresh):
            lines += ['  ' + p for p in listed[:LISTED // 2]]
            if len(listed) > LISTED // 2:
                lines.append('  ... and %d more' % (
                    len(listed) - LISTED // 2))
        return '\n'.join(lines)


def capacity(inventory):
    return int((inventory['total'] - inventory['reserved'])
               * inventory['allocation_ratio'])


def _read_providers(url, token, timeout, uuids, threads):
    """{uuid: (inventories, usages, allocations)} read in ``threads``."""
    local = threading.local()
    clients = []

    def read(uuid):
        client = getattr(local, 'client', None)
        if client is None:
            client = local.client = placement_http.Client(url, token,
                                                          timeout)
            clients.append(client)
        path = '/resource_providers/%s/' % uuid
        return uuid, (client.checked('GET', path + 'inventories'),
                      client.checked('GET', path + 'usages'),
                      client.checked('GET', path + 'allocations'))

    try:
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            return dict(pool.map(read, uuids))
    finally:
        for client in clients:
            client.close()


def _fits(inventory, used, amount):
    return (inventory['min_unit'] <= amount <= inventory['max_unit']
            and amount % inventory['step_size'] == 0
            and used + amount <= capacity(inventory))


def check(url, resources, projects, token='admin', timeout=300,
          threads=8):
    """Checked: read every provider of the server at ``url`` and check
    the invariants above for a request of ``resources`` ({class:
    amount})."""
    found = Checked()
    problems = found.problems
    client = placement_http.Client(url, token, timeout)
    try:
        listed = client.checked('GET', '/resource_providers')
        roots = {rp['uuid']: rp['root_provider_uuid']
                 for rp in listed['resource_providers']}
        state = _read_providers(url, token, timeout, sorted(roots),
                                threads)
        total = collections.Counter()
        consumers = set()
        for uuid, (inventories, usages, allocations) in sorted(
                state.items()):
            held = collections.Counter()
            for consumer, item in allocations['allocations'].items():
                consumers.add(consumer)
                held.update(item['resources'])
            usage = usages['usages']
            total.update(usage)
            for rc in sorted(set(usage) | set(held)):
                if usage.get(rc, 0) != held[rc]:
                    problems.append('provider %s uses %d %s, its '
                                    'allocations hold %d' % (
                                        uuid, usage.get(rc, 0), rc,
                                        held[rc]))
                inventory = inventories['inventories'].get(rc)
                if held[rc] and (inventory is None
                                 or held[rc] > capacity(inventory)):
                    problems.append('provider %s holds %d %s beyond its '
                                    'capacity %s' % (
                                        uuid, held[rc], rc, inventory
                                        and capacity(inventory)))
        found.providers, found.consumers = len(state), len(consumers)
        _check_projects(url, token, timeout, projects, total, problems)
        _check_candidates(client, resources, roots, state, found)
        fresh = {rc: amount + 1 for rc, amount in resources.items()}
        _check_candidates(client, fresh, roots, state, found, FRESH)
    finally:
        client.close()
    return found


def _check_projects(url, token, timeout, projects, total, problems):
    client = placement_http.Client(url, token, timeout, microversion='1.9')
    try:
        reported = collections.Counter()
        for project in projects:
            body = client.checked('GET', '/usages?' + urllib.parse.urlencode(
                {'project_id': project}))
            reported.update(body['usages'])
    finally:
        client.close()
    if +reported != +total:
        problems.append('GET /usages of the projects sums to %s, the '
                        'providers\' usages to %s' % (
                            dict(+reported), dict(+total)))


def _check_candidates(client, resources, roots, state, found,
                      prefix=''):
    problems = []
    query = urllib.parse.urlencode({'resources': ','.join(
        '%s:%d' % item for item in sorted(resources.items()))})
    body = client.checked('GET', '/allocation_candidates?' + query)
    requests = body['allocation_requests']
    if not prefix:
        found.candidates = len(requests)
    named = {roots.get(rp) for request in requests
             for rp in request['allocations']}
    if not prefix:
        found.trees = len(named)
    trees = collections.defaultdict(list)
    for uuid, root in roots.items():
        trees[root].append(uuid)
    expected = set()
    for root, members in trees.items():
        if all(any(_fits(state[rp][0]['inventories'][rc],
                         state[rp][1]['usages'].get(rc, 0), amount)
                   for rp in members
                   if rc in state[rp][0]['inventories'])
               for rc, amount in resources.items()):
            expected.add(root)
    for root in sorted(named - expected, key=str):
        problems.append('candidates name tree %s, which has no room'
                        % root)
    for root in sorted(expected - named):
        problems.append('candidates miss tree %s, which has room' % root)
    for rp, summary in sorted(body['provider_summaries'].items()):
        if rp not in state:
            problems.append('candidates summarise unknown provider %s'
                            % rp)
            continue
        inventories = state[rp][0]['inventories']
        usages = state[rp][1]['usages']
        for rc, figures in sorted(summary['resources'].items()):
            if rc not in inventories:
                problems.append('summary of %s shows %s, which it has no '
                                'inventory of' % (rp, rc))
                continue
            shown = (figures['capacity'], figures['used'])
            read = (capacity(inventories[rc]), usages.get(rc, 0))
            if shown != read:
                problems.append('summary of %s shows %s capacity/used %s,'
                                ' its endpoints %s' % (rp, rc, shown, read))
    found.problems.extend(prefix + problem for problem in problems)
