"""Rules (a)-(f): the history against every committed state.

The committed transactions (``stream``) are replayed in commit order.
Each is matched to the request that explains it:

* an allocation write names each consumer it writes with a user id of
  its own (``user_of``), which the transaction stores in the consumer
  row: the user ids in a transaction name the request;
* a DELETE /allocations is the one transaction that removes its
  consumer's row (the workload never writes a consumer again after
  deleting it);
* an inventory write is the transaction that moves its provider from
  the generation the request sent and stores the values it asked for.

Then, with capacity = int((total - reserved) * allocation_ratio):

(a) no transaction raised a provider's usage of a class above its
    capacity in the state it committed (lowering an inventory below its
    usage is allowed: only writes that raise usage are judged, against
    the inventory as it then was);
(b) every acknowledged write is explained by one committed transaction
    with exactly what it asked for, and no committed change is
    unexplained (which would have overwritten acknowledged state);
(c) no refused write explains a committed transaction;
(d) a write of unknown outcome explains no transaction, or one with all
    it asked for (never a part of a multi-consumer POST), and no write
    is applied twice;
(e) provider and consumer generations only grow, in the committed
    states and as clients read them (a read that starts after another
    ended never sees an older generation), and no two acknowledged
    writes sent the same generation;
(f) every 5xx was a 503 with Retry-After.

The replayed final state must also equal the database's tables: if the
stream missed a change the checker says so instead of passing.
"""

import collections
import dataclasses
import heapq

import sqlalchemy as sa

from placement.tests.faults import history as history_mod

USER_PREFIX = 'faults-op-'
RULES = ('a', 'b', 'c', 'd', 'e', 'f', 'final')


def user_of(entry_id):
    """The user id naming the write of history entry ``entry_id``."""
    return '%s%d' % (USER_PREFIX, entry_id)


def _entry_of_user(user):
    if isinstance(user, str) and user.startswith(USER_PREFIX):
        return int(user[len(USER_PREFIX):])
    return None


def capacity(inventory):
    return int((inventory['total'] - inventory['reserved'])
               * inventory['allocation_ratio'])


@dataclasses.dataclass
class Report:
    counts: dict
    anomalies: dict  # rule -> [text]

    @property
    def ok(self):
        return not any(self.anomalies.values())

    def text(self, limit=20):
        lines = ['%s: %s' % (name, value)
                 for name, value in self.counts.items()]
        total = sum(len(found) for found in self.anomalies.values())
        lines.append('anomalies: %d %s' % (total, {
            rule: len(found) for rule, found in self.anomalies.items()}))
        for rule, found in self.anomalies.items():
            for text in found[:limit]:
                lines.append('  (%s) %s' % (rule, text))
            if len(found) > limit:
                lines.append('  (%s) ... %d more' % (rule, len(found) - limit))
        return '\n'.join(lines)


class _Replay:
    """The database's rows as the transactions leave them."""

    def __init__(self):
        self.rows = collections.defaultdict(dict)  # table -> id -> row

    def apply(self, change):
        table = self.rows[change.table]
        key = change.row['id']
        if change.op == 'delete':
            return table.pop(key, change.row), None
        old = table.get(key)
        table[key] = dict(old or {}, **change.row)
        return old, table[key]

    def rp_uuid(self, rp_id):
        row = self.rows['resource_providers'].get(rp_id)
        return row and row['uuid']

    def inventory(self, rp_uuid, rc):
        for row in self.rows['inventories'].values():
            if (row['resource_class_id'] == rc
                    and self.rp_uuid(row['resource_provider_id']) == rp_uuid):
                return row
        return None

    def usage(self):
        used = collections.Counter()
        for row in self.rows['allocations'].values():
            used[row['resource_provider_id'], row['resource_class_id']] += (
                row['used'])
        return used

    def consumer_allocations(self, uuid):
        found = collections.Counter()
        for row in self.rows['allocations'].values():
            if row['consumer_id'] == uuid:
                found[self.rp_uuid(row['resource_provider_id'])] += row['used']
        return dict(found)


class Checker:
    """``check(transactions, final)`` against ``history``."""

    def __init__(self, history, resource_class_id=0):
        self.history = history
        self.rc = resource_class_id
        self.anomalies = {rule: [] for rule in RULES}
        self.entries = {e.id: e for e in history.writes()}
        self.explained = collections.defaultdict(list)  # entry id -> [txn]

    def _flag(self, rule, text, *entries):
        involved = ''.join('\n      ' + e.describe() for e in entries if e)
        self.anomalies[rule].append(text + involved)

    # -- matching ---------------------------------------------------------

    def _deletes(self):
        found = collections.defaultdict(list)
        for entry in self.entries.values():
            if entry.intent.get('deleted'):
                found[entry.intent['deleted']].append(entry)
        return found

    def _inventory_writes(self):
        found = collections.defaultdict(list)
        for entry in self.entries.values():
            if 'inventory' in entry.intent:
                found[entry.intent['provider'],
                      entry.intent['generation']].append(entry)
        return found

    @staticmethod
    def _best(candidates):
        """The candidate most likely applied: acknowledged, then unknown,
        then refused."""
        order = {history_mod.ACK: 0, history_mod.UNKNOWN: 1,
                 history_mod.REFUSED: 2}
        return min(candidates, key=lambda e: order[e.outcome])

    def _explain(self, replay, txn, consumer_users, deleted, bumps):
        """The entry that explains ``txn``, or None."""
        ids = {_entry_of_user(user) for user in consumer_users.values()}
        ids.discard(None)
        if ids:
            if len(ids) > 1:
                self._flag('d', 'transaction %d mixes the consumers of '
                           'several writes %s' % (txn.index, sorted(ids)),
                           *[self.entries.get(i) for i in sorted(ids)])
            return self.entries.get(min(ids))
        if deleted:
            candidates = [e for uuid in deleted
                          for e in self._delete_index.get(uuid, ())]
            return self._best(candidates) if candidates else None
        if bumps:
            # Judged on the inventory the transaction left: a write of
            # the values already there changes no inventory row (MariaDB
            # then logs none), only the generation.
            rp, old, _new = bumps[0]
            held = replay.inventory(rp, self.rc) or {}
            candidates = [
                e for e in self._inventory_index.get((rp, old), ())
                if all(held.get(k) == v
                       for k, v in e.intent['inventory'].items())]
            return self._best(candidates) if candidates else None
        return None

    # -- the rules --------------------------------------------------------

    def check(self, transactions, final=None):
        """Replay ``transactions``; ``final``: the database's rows now
        (``final_state_of`` them), compared with the replay's."""
        self._delete_index = self._deletes()
        self._inventory_index = self._inventory_writes()
        replay = _Replay()
        consumer_generation = {}  # uuid -> last generation committed
        last_inventory = {}  # rp -> entry of the last inventory change
        holders = {}  # consumer -> entry of the last write explained
        for txn in transactions:
            before = replay.usage()
            consumer_users, deleted, bumps = {}, [], []
            inventories = collections.defaultdict(dict)
            touched_consumers = set()
            for change in txn.changes:
                old, new = replay.apply(change)
                if change.table == 'consumers':
                    uuid = (new or old or {}).get('uuid')
                    if new is None:
                        deleted.append(uuid)
                        continue
                    gen = new['generation']
                    last = consumer_generation.get(uuid)
                    if last is not None and gen <= last:
                        self._flag('e', 'transaction %d moves consumer %s '
                                   'from generation %s to %s'
                                   % (txn.index, uuid, last, gen))
                    consumer_generation[uuid] = gen
                    user = replay.rows['users'].get(new['user_id'], {})
                    consumer_users[uuid] = user.get('external_id')
                elif (change.table == 'resource_providers' and old and new
                      and new['generation'] != old['generation']):
                    # Updates of other columns (a new provider's root)
                    # keep it.
                    if new['generation'] < old['generation']:
                        self._flag('e', 'transaction %d moves provider %s '
                                   'from generation %s to %s' % (
                                       txn.index, new['uuid'],
                                       old['generation'], new['generation']))
                    bumps.append((new['uuid'], old['generation'],
                                  new['generation']))
                elif change.table == 'inventories' and new:
                    inventories[replay.rp_uuid(
                        new['resource_provider_id'])] = {
                            k: new[k] for k in ('total', 'reserved',
                                                'allocation_ratio')}
                elif change.table == 'allocations':
                    touched_consumers.add((new or old)['consumer_id'])
            entry = self._explain(replay, txn, consumer_users, deleted,
                                  bumps)
            if entry is not None:
                self.explained[entry.id].append(txn.index)
                self._check_content(replay, txn, entry)
                for uuid in touched_consumers | set(deleted):
                    holders[uuid] = entry
                if 'inventory' in entry.intent:
                    for rp, _old, _new in bumps:
                        last_inventory[rp] = entry
            elif touched_consumers or deleted or inventories:
                self._unexplained(replay, txn, touched_consumers | set(
                    deleted), inventories, holders)
            self._check_capacity(replay, txn, before, entry, last_inventory)
        self._check_entries()
        self._check_history_generations()
        self._check_reads()
        self._check_5xx()
        if final is not None:
            self._check_final(replay, final)
        return Report(self._counts(transactions), self.anomalies)

    def _unexplained(self, replay, txn, consumers, inventories, holders):
        """A committed change no request explains: it overwrote what the
        last write of each consumer (or provider) left."""
        for uuid in sorted(consumers):
            last = holders.get(uuid)
            self._flag('b', 'transaction %d changed consumer %s to %s and '
                       'no request explains it%s' % (
                           txn.index, uuid, replay.consumer_allocations(uuid),
                           '; the last write of it was' if last else ''),
                       last)
        for rp in sorted(inventories):
            self._flag('b', 'transaction %d changed the inventory of %s '
                       'to %s and no request explains it'
                       % (txn.index, rp, inventories[rp]))

    def _check_capacity(self, replay, txn, before, entry, last_inventory):
        after = replay.usage()
        inventories = {(row['resource_provider_id'],
                        row['resource_class_id']): row
                       for row in replay.rows['inventories'].values()}
        for key, used in after.items():
            if used <= before.get(key, 0):
                continue
            inventory = inventories.get(key)
            limit = capacity(inventory) if inventory else 0
            if used > limit:
                rp = replay.rp_uuid(key[0])
                self._flag('a', 'transaction %d raised the usage of %s '
                           '(class %s) from %d to %d, capacity %d' % (
                               txn.index, rp, key[1], before.get(key, 0),
                               used, limit),
                           entry, last_inventory.get(rp))

    def _check_content(self, replay, txn, entry):
        """The explaining transaction holds all the entry asked for."""
        if entry.outcome == history_mod.REFUSED:
            self._flag('c', 'refused write committed as transaction %d'
                       % txn.index, entry)
            return
        wanted = entry.intent.get('consumers', {})
        wrong = []
        for uuid, intent in sorted(wanted.items()):
            held = replay.consumer_allocations(uuid)
            expected = intent.get('allocations')
            if not (held == expected if expected is not None
                    else sum(held.values()) == intent['amount']
                    and len(held) == 1):
                wrong.append('consumer %s holds %s, asked %s' % (
                    uuid, held, expected or intent['amount']))
        if wrong:
            rule = 'b' if entry.outcome == history_mod.ACK else 'd'
            self._flag(rule, 'transaction %d applied %d of the %d consumers '
                       'of the write: %s' % (
                           txn.index, len(wanted) - len(wrong), len(wanted),
                           '; '.join(wrong)), entry)

    def _check_entries(self):
        for entry in self.entries.values():
            applied = self.explained.get(entry.id, [])
            if len(applied) > 1:
                self._flag('d', 'write applied %d times: transactions %s'
                           % (len(applied), applied), entry)
            if entry.outcome == history_mod.ACK and not applied:
                self._flag('b', 'acknowledged write not committed', entry)

    def _check_history_generations(self):
        sent = collections.defaultdict(list)
        for entry in self.entries.values():
            if entry.outcome != history_mod.ACK:
                continue
            if 'inventory' in entry.intent:
                sent['provider', entry.intent['provider'],
                     entry.intent['generation']].append(entry)
            for uuid, wanted in entry.intent.get('consumers', {}).items():
                sent['consumer', uuid, wanted['generation']].append(entry)
        for key, entries in sent.items():
            if len(entries) > 1:
                self._flag('e', '%d acknowledged writes sent %s %s '
                           'generation %s' % ((len(entries),) + key),
                           *entries)

    def _check_reads(self):
        """A read that starts after another ended never sees an older
        generation of the same provider or consumer."""
        by_key = collections.defaultdict(list)
        for entry in self.history.entries:
            if entry.end is None:
                continue
            for key, generation in entry.observed:
                by_key[key].append((entry.start, entry.end, generation,
                                    entry))
        for key, seen in by_key.items():
            seen.sort(key=lambda item: item[0])
            ended = []  # heap of (end, -generation, entry)
            newest = None  # (generation, entry) among those ended
            for start, end, generation, entry in seen:
                while ended and ended[0][0] < start:
                    _end, neg, _id, earlier = heapq.heappop(ended)
                    if newest is None or -neg > newest[0]:
                        newest = (-neg, earlier)
                if newest is not None and generation < newest[0]:
                    self._flag('e', '%s %s read at generation %d after '
                               'generation %d was read' % (
                                   key[0], key[1], generation, newest[0]),
                               newest[1], entry)
                heapq.heappush(ended, (end, -generation, entry.id, entry))

    def _check_5xx(self):
        for entry in self.history.entries:
            if entry.status is not None and entry.status >= 500 and not (
                    entry.status == 503 and entry.retry_after):
                self._flag('f', '%d%s' % (entry.status, '' if
                           entry.retry_after else ' without Retry-After'),
                           entry)

    def _check_final(self, replay, final):
        mine = final_state_of(replay.rows)
        for name in sorted(set(mine) | set(final)):
            if mine.get(name) != final.get(name):
                self._flag('final', 'the database\'s %s differ from the '
                           'committed transactions\' (%s): the stream '
                           'missed a change' % (name, _difference(
                               mine.get(name, {}), final.get(name, {}))))

    def _counts(self, transactions):
        kinds = collections.defaultdict(collections.Counter)
        for entry in self.history.entries:
            if entry.end is not None:
                kinds[entry.kind][entry.outcome] += 1
        outcomes = collections.Counter(
            e.outcome for e in self.history.entries if e.write and e.end)
        return {
            'requests by kind': {k: dict(v) for k, v in sorted(
                kinds.items())},
            'writes': '%d (ack %d, refused %d, unknown %d)' % (
                sum(outcomes.values()), outcomes[history_mod.ACK],
                outcomes[history_mod.REFUSED], outcomes[history_mod.UNKNOWN]),
            'unknown writes found applied': sum(
                1 for e in self.entries.values()
                if e.outcome == history_mod.UNKNOWN
                and self.explained.get(e.id)),
            'committed transactions replayed': len(transactions),
        }


def _difference(mine, theirs, limit=3):
    keys = sorted(set(mine) ^ set(theirs) | {
        k for k in set(mine) & set(theirs) if mine[k] != theirs[k]}, key=str)
    return ', '.join('%s: %s vs %s' % (k, mine.get(k), theirs.get(k))
                     for k in keys[:limit])


def final_state_of(rows):
    """Comparable contents of the replayed ``rows`` (or the tables)."""
    uuids = {i: r['uuid'] for i, r in rows['resource_providers'].items()}
    return {
        'allocations': {
            (r['consumer_id'], uuids.get(r['resource_provider_id']),
             r['resource_class_id']): r['used']
            for r in rows['allocations'].values()},
        'inventories': {
            (uuids.get(r['resource_provider_id']), r['resource_class_id']):
                (r['total'], r['reserved'], float(r['allocation_ratio']))
            for r in rows['inventories'].values()},
        'provider generations': {
            r['uuid']: r['generation']
            for r in rows['resource_providers'].values()},
        'consumer generations': {
            r['uuid']: r['generation'] for r in rows['consumers'].values()},
    }


def read_final(url):
    """``final_state_of`` the database at ``url``'s tables."""
    engine = sa.create_engine(url)
    rows = {}
    try:
        with engine.connect() as conn:
            for table in ('resource_providers', 'allocations', 'inventories',
                          'consumers'):
                rows[table] = {row['id']: dict(row) for row in conn.execute(
                    sa.text('SELECT * FROM %s' % table)).mappings()}
    finally:
        engine.dispose()
    return final_state_of(rows)
