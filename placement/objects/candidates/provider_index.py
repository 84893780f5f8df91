"""An in-memory copy, per process, of the provider data candidates need.

``GET /allocation_candidates`` reads, for every provider that might take
part, its place in its tree, its inventories and usage, its traits and
its aggregates. Reading all of that from the database on every request
costs more than the search itself, and grows with the cloud. The index
keeps it in memory, one per process and database, and brings itself up
to date at the start of every request from the change log
(``placement.db.changes``): one query says which providers changed since
the last refresh, and a few set-based queries reload only those. The
database's triggers log every change to provider data in the writing
transaction, whoever writes, so a request sees every write committed
before it started, exactly as if it read the tables.

The whole index is reloaded on first use, when the log has been pruned
beyond its cursor or a name was renamed or deleted, and at least every
``MAX_AGE`` seconds: a safety net for the bounded cases the log's reader
gives up on (see ``placement.db.changes``, gaps).

Callers hold ``index.lock`` from ``refresh`` until they have read what
they need: a refresh mutates the maps in place.
"""

import collections
import logging
import time
import types
import typing

import sqlalchemy as sa

from placement.db import changes
from placement.db import prepared
from placement.db import tables
from placement.objects import aggregate as aggregate_obj
from placement.objects import capacity as capacity_rule
from placement.objects import invalid_rows
from placement.objects import per_process
from placement.observability import metrics

LOG = logging.getLogger(__name__)

#: Seconds after which the index is reloaded whatever the log says.
MAX_AGE = 300
#: Largest id list sent in one IN clause.
CHUNK = 500

_RP = tables.resource_providers
_INV = tables.inventories
_ALLOC = tables.allocations
_RP_TRAITS = tables.resource_provider_traits
_RP_AGGS = tables.resource_provider_aggregates

_EMPTY = frozenset()
#: The inventories of every provider without any (read-only, shared).
_NO_INVENTORY = types.MappingProxyType({})
_GONE = object()
#: (provider uuid, class, kind) of every invalid row this process has
#: reported, so that each is logged once, not at every reload.
_REPORTED = set()


class Summary(typing.NamedTuple):
    """What allocation candidates tell of one provider: ``resources``
    as ``(class name, capacity, used)`` for each inventory; ``traits``,
    sorted names; the uuids of its parent (or None) and root."""

    uuid: str
    resources: typing.Tuple[typing.Tuple[str, int, int], ...]
    traits: typing.Tuple[str, ...]
    parent_uuid: typing.Optional[str]
    root_uuid: str


class ProviderIndex(per_process.LogFollower):
    """Providers by id, with the reverse maps the search filters on.

    Per provider: ``uuid`` (and ``by_uuid`` back), ``parent`` (id or
    None), ``root``, ``inventories`` ({class: capacity.Offer}), ``usage``
    ({class: used}, only classes with allocations), ``traits`` and
    ``aggregates`` (frozensets of ids). Reverse maps: ``with_class``,
    ``with_trait``, ``in_aggregate`` ({id: set of providers}),
    ``members`` (``Trees``: {root: set of providers of its tree}) and
    ``nested`` (how many providers have a parent: only whether any has
    is asked, and a set of them cost 30 bytes per provider).
    ``lines`` caches each provider's ancestors-or-self for the search
    (``search.Ancestry``), kept until a provider moves;
    ``summaries`` those ``summary`` built, kept until a provider changes.
    Class, trait and aggregate ids of the names and uuids requests use
    are kept too (``class_ids``, ``trait_ids``, ``aggregate_ids``).
    """

    max_age = MAX_AGE
    #: Refreshes whose changed roots ``changed_roots_since`` remembers.
    JOURNAL = 256

    def __init__(self):
        super().__init__()
        #: Bumped by every whole load: what was derived before is void.
        self.epoch = 0
        #: Bumped by every partial load, which notes in ``_journal``
        #: the roots of the trees it changed (before and after).
        self.serial = 0
        self._journal = collections.deque(maxlen=self.JOURNAL)
        self._clear()

    def _clear(self):
        self.class_names = {}
        self.trait_names = {}
        self._class_ids = {}
        self._trait_ids = {}
        self._aggregate_ids = {}
        self.summaries = {}
        self.uuid = {}
        self.by_uuid = {}
        self.parent = {}
        self.root = {}
        self.inventories = {}
        self.usage = {}
        self.traits = {}
        self.aggregates = {}
        self.with_class = collections.defaultdict(set)
        self.with_trait = collections.defaultdict(set)
        self.in_aggregate = collections.defaultdict(set)
        self.members = Trees()
        self.nested = 0
        self.lines = {}
        self._lone = None

    # -- keeping up to date --------------------------------------------------

    def _refresh(self, conn, clock, reads=None):
        started = time.perf_counter()
        log, full = super()._refresh(conn, clock, reads)
        if log.prune_to is not None:
            _prune(conn, log.prune_to)
        metrics.index_refreshed(
            time.perf_counter() - started,
            len(self.uuid) if full else len(log.provider_ids or ()), full)

    def load_all(self, conn):
        self.epoch += 1
        self._journal.clear()
        self._clear()
        self._load(conn, None)
        self.members.compact()

    def load_changed(self, conn, provider_ids):
        parents = {p: self.parent.get(p, _GONE) for p in provider_ids}
        roots = {self.root[p] for p in provider_ids if p in self.root}
        for provider in provider_ids:
            self._forget(provider)
        self._load(conn, provider_ids)
        roots.update(self.root[p] for p in provider_ids if p in self.root)
        self.serial += 1
        self._journal.append((self.serial, frozenset(roots)))
        if any(self.parent.get(p, _GONE) != parent
               for p, parent in parents.items()):
            # A provider moved, came or went: lines of ancestors of its
            # descendants may have changed too.
            self.lines = {}
            self._lone = None

    def _forget(self, provider):
        if provider not in self.uuid:
            return
        self.summaries.pop(provider, None)
        for rc in self.inventories.pop(provider):
            _discard(self.with_class, rc, provider)
        self.usage.pop(provider, None)
        for trait in self.traits.pop(provider):
            _discard(self.with_trait, trait, provider)
        for aggregate in self.aggregates.pop(provider):
            _discard(self.in_aggregate, aggregate, provider)
        self.members.leave(self.root.pop(provider), provider)
        if self.parent[provider] is not None:
            self.nested -= 1
        del self.by_uuid[self.uuid.pop(provider)], self.parent[provider]

    def _load(self, conn, ids):
        """Add the providers ``ids`` (None: all) as stored now."""
        if ids is None:
            self._load_names(conn)
        # Every row brings its own int objects (32 bytes each past 256):
        # the maps and sets keep one per provider, the one its own row
        # brought, rather than one per row naming it.
        parts = _parts(conn, ids)
        same = {}
        for rows in parts(_PROVIDERS):
            for provider, uuid, parent, root in rows:
                same[provider] = provider
                if root == provider:
                    root = provider
                elif root in same:
                    root = same[root]
                if parent in same:
                    parent = same[parent]
                self.uuid[provider] = uuid
                self.by_uuid[uuid] = provider
                self.parent[provider] = parent
                self.root[provider] = root
                self.members.join(root, provider)
                if parent is not None:
                    self.nested += 1
                self.inventories[provider] = _NO_INVENTORY
                self.traits[provider] = _EMPTY
                self.aggregates[provider] = _EMPTY
        known = self.uuid
        for rows in parts(_USAGE):
            for provider, rc, used in rows:
                if provider in known:
                    self.usage.setdefault(same.get(provider, provider),
                                          {})[rc] = int(used)
        # Streamed: a list of every inventory row of a large cloud would
        # leave the worker that much bigger after the load.
        self._add_offers((row for rows in parts(_INVENTORIES)
            for row in rows if row[0] in known), same)
        self._load_sets(parts(_TRAITS), self.traits, self.with_trait, same)
        self._load_sets(parts(_AGGREGATES), self.aggregates,
                        self.in_aggregate, same)
        if ids is not None and not self._names_known():
            # A class or trait created since the names were read.
            self._load_names(conn)

    def _add_offers(self, records, same):
        """Inventory ``records`` as Offers, given the usage loaded with
        them.

        Equal records with equal usage share one Offer, and providers
        with equal inventories one map (never changed once built: a
        reload builds new ones), so that a cloud of identical hosts costs
        a few dict entries per host rather than a dict, three tuples and
        three ranges.
        """
        offer, capacity = capacity_rule.offer, capacity_rule.capacity
        usage, inventories = self.usage, self.inventories
        with_class = self.with_class
        offers = {}
        wrong = {}
        built = set()
        for record in records:
            provider, rc = same.get(record[0], record[0]), record[1]
            used = usage.get(provider)
            used = used.get(rc, 0) if used else 0
            key = (record[2:], used)
            found = offers.get(key)
            if found is None:
                (total, reserved, ratio, min_unit, max_unit,
                 step_size) = record[2:]
                problem = capacity_rule.problem(*record[2:])
                if problem is None:
                    found = offer(capacity(total, reserved, ratio), used,
                                  min_unit, max_unit, step_size)
                else:
                    # A row no write makes: it offers nothing, and hurts
                    # no other provider or class.
                    found = capacity_rule.NOTHING
                    wrong[key] = problem
                offers[key] = found
            if found is capacity_rule.NOTHING and key in wrong:
                self._invalid(provider, rc, wrong[key])
            own = inventories[provider]
            if own is _NO_INVENTORY:
                own = inventories[provider] = {}
            own[rc] = found
            with_class[rc].add(provider)
            built.add(provider)
        shared = {}
        for provider in built:
            own = inventories[provider]
            inventories[provider] = shared.setdefault(
                tuple(own.items()), own)
        # The providers of this load (``same``): allocations of a class
        # without inventory.
        for provider in same:
            used = usage.get(provider)
            if used:
                own = inventories[provider]
                for rc in used:
                    if rc not in own:
                        self._invalid(provider, rc,
                                      invalid_rows.WITHOUT_INVENTORY)

    def _invalid(self, provider, rc, problem):
        """Log and count, once per process, a row the index leaves out
        (see api-ref/behaviour-choices.rst, 'Rows the service did not
        write')."""
        uuid = self.uuid.get(provider, provider)
        name = self.class_names.get(rc, rc)
        if (uuid, name, problem.kind) in _REPORTED:
            return
        _REPORTED.add((uuid, name, problem.kind))
        LOG.warning('Resource provider %s: its %s %s is left out of '
                    'allocation candidates: %s', uuid, name,
                    'allocations' if problem is invalid_rows.WITHOUT_INVENTORY
                    else 'inventory', problem.text)
        metrics.invalid_row(problem.kind)

    def _load_sets(self, parts, forward, reverse, same):
        found = collections.defaultdict(set)
        for rows in parts:
            for provider, value in rows:
                if provider in forward:
                    provider = same.get(provider, provider)
                    found[provider].add(value)
                    reverse[value].add(provider)
        # Equal sets are shared (most hosts carry the same few traits).
        shared = {}
        for provider, values in found.items():
            values = frozenset(values)
            forward[provider] = shared.setdefault(values, values)

    def _names_known(self):
        """True if every class and trait in use has a name."""
        return (self.with_class.keys() <= self.class_names.keys()
                and self.with_trait.keys() <= self.trait_names.keys())

    def _load_names(self, conn):
        self.class_names = dict(conn.execute(_CLASS_NAMES).all())
        self.trait_names = dict(conn.execute(_TRAIT_NAMES).all())
        self._class_ids = {n: i for i, n in self.class_names.items()}
        self._trait_ids = {n: i for i, n in self.trait_names.items()}

    # -- reading -------------------------------------------------------------

    def changed_roots_since(self, epoch, serial):
        """Roots of the trees changed since (``epoch``, ``serial``), or
        None when that is not known (a whole load since, or older than
        the journal remembers)."""
        if epoch != self.epoch:
            return None
        if serial == self.serial:
            return frozenset()
        journal = self._journal
        if not journal or journal[0][0] > serial + 1:
            return None
        roots = set()
        for noted, changed in journal:
            if noted > serial:
                roots |= changed
        return roots

    def class_ids(self, conn, names):
        """{name: id} of those class ``names`` that exist."""
        return self._ids(conn, '_class_ids', names)

    def trait_ids(self, conn, names):
        """{name: id} of those trait ``names`` that exist."""
        return self._ids(conn, '_trait_ids', names)

    def aggregate_ids(self, conn, uuids):
        """{uuid: id} of those aggregate ``uuids`` that exist.

        An aggregate row is never deleted or changed, so a found one is
        kept; only unknown uuids, which may be created at any moment, are
        looked up again.
        """
        known = self._aggregate_ids
        unknown = [uuid for uuid in uuids if uuid not in known]
        if unknown:
            known.update(aggregate_obj.ids_by_uuid(conn, unknown))
        return {uuid: known[uuid] for uuid in uuids if uuid in known}

    def _ids(self, conn, attribute, names):
        # Creating a name logs nothing, so an unknown one may be new;
        # renaming or deleting one makes every index reload (the change
        # log's triggers), so a known one is current.
        if any(name not in getattr(self, attribute) for name in names):
            self._load_names(conn)
        ids = getattr(self, attribute)
        return {name: ids[name] for name in names if name in ids}

    def summary(self, provider):
        """The Summary of ``provider``, built once per version of the
        provider and shared."""
        summary = self.summaries.get(provider)
        if summary is None:
            parent = self.parent[provider]
            usage = self.usage.get(provider, {})
            names = self.class_names
            summary = Summary(
                self.uuid[provider],
                tuple([(names[rc], offer.capacity, usage.get(rc, 0))
                       for rc, offer in self.inventories[provider].items()]),
                tuple(sorted([self.trait_names[t]
                              for t in self.traits[provider]])),
                None if parent is None else self.uuid[parent],
                self.uuid[self.root[provider]])
            self.summaries[provider] = summary
        return summary

    def fitting(self, providers, amounts, verdicts=None):
        """Those of ``providers`` (in order) that can take every ``(class,
        amount)`` of ``amounts`` on its own (the capacity test of
        api-ref/allocation-candidates.rst). ``verdicts`` ({} to start)
        keeps the tests for later calls with the same ``amounts``."""
        inventories = self.inventories
        # Providers with equal inventories and usage share one map (see
        # _add_offers): each map is tested once, keyed by its identity
        # (and kept, so that the identity cannot be reused meanwhile).
        if verdicts is None:
            verdicts = {}
        for provider in providers:
            own = inventories[provider]
            verdict = verdicts.get(id(own))
            if verdict is None:
                for rc, amount in amounts:
                    offer = own.get(rc)
                    # capacity.allows, inlined: this runs per map.
                    if offer is None or amount not in offer.allowed:
                        fits = False
                        break
                else:
                    fits = True
                verdict = verdicts[id(own)] = (fits, own)
            if verdict[0]:
                yield provider

    def room(self, provider, rc):
        """The most one candidate may place of ``rc`` on ``provider``."""
        return self.inventories[provider][rc].most

    def lone_roots(self):
        """Roots of trees of one provider (kept until a provider moves,
        comes or goes)."""
        if self._lone is None:
            self._lone = self.members.of_one()
        return self._lone

    def union(self, reverse, keys):
        """Providers found under any of ``keys`` in the map ``reverse``."""
        keys = list(keys)
        if len(keys) == 1:
            return reverse.get(keys[0], _EMPTY)
        return set().union(*(reverse.get(key, _EMPTY) for key in keys))

    def trees(self, roots):
        """Every provider of the trees ``roots``."""
        members = self.members
        return set().union(*(members.providers(root) for root in roots))


def _prune(conn, bound):
    """Prune the change log up to id ``bound`` in a transaction of its
    own; best effort (another process may be pruning the same rows),
    never failing the request."""
    engine = conn.engine
    if isinstance(engine.pool, sa.pool.StaticPool):
        return  # one shared connection (in-memory SQLite), busy with us
    try:
        with engine.connect() as own:
            own = own.execution_options(placement_writer=True)
            with own.begin():
                changes.prune(own, bound)
    except sa.exc.DBAPIError as exc:
        LOG.info('Change log not pruned: %s', exc)


class Trees(dict):
    """{root: the providers of its tree}, read through ``get`` (or
    ``items``) as sets.

    Most trees of a large cloud are one provider: such a tree is kept as
    that provider's id rather than a set of it (a set costs 200 bytes).
    A whole load leaves larger trees as tuples (``compact``): a nova
    compute node's tree of seven providers costs 96 bytes so, against 728
    as a set. Indexing (``trees[root].add(provider)``) gives a stored,
    mutable set.
    """

    def join(self, root, provider):
        tree = dict.get(self, root)
        if tree is None:
            self[root] = provider
        elif isinstance(tree, set):
            tree.add(provider)
        else:
            self._open(root, tree).add(provider)

    def leave(self, root, provider):
        tree = dict.get(self, root)
        if isinstance(tree, int):
            if tree == provider:
                del self[root]
        elif tree is not None:
            tree = self._open(root, tree)
            tree.discard(provider)
            if len(tree) == 1:
                (self[root],) = tree
            elif not tree:
                del self[root]

    def compact(self):
        """Keep every tree of several providers as a tuple."""
        for root, tree in dict.items(self):
            if isinstance(tree, set):
                self[root] = tuple(tree)

    def _open(self, root, tree):
        """The tree ``tree`` of ``root`` (an id or a tuple) stored as a
        set, which it returns."""
        tree = self[root] = {tree} if isinstance(tree, int) else set(tree)
        return tree

    def get(self, root, default=None):
        tree = dict.get(self, root, default)
        if isinstance(tree, int):
            return frozenset((tree,))
        return frozenset(tree) if isinstance(tree, tuple) else tree

    def providers(self, root):
        """The providers of the tree ``root`` (none if there is no such
        tree) as an iterable, for reading once."""
        tree = dict.get(self, root, ())
        return (tree,) if isinstance(tree, int) else tree

    def __missing__(self, root):
        tree = self[root] = set()
        return tree

    def __getitem__(self, root):
        tree = dict.__getitem__(self, root)
        if not isinstance(tree, set):
            tree = self._open(root, tree)
        return tree

    def items(self):
        return ((root, self.get(root)) for root in self)

    def values(self):
        return (self.get(root) for root in self)

    def of_one(self):
        """Roots of trees of one provider."""
        return frozenset(root for root, tree in dict.items(self)
                         if isinstance(tree, int) or len(tree) == 1)


def _discard(reverse, key, provider):
    members = reverse.get(key)
    if members is not None:
        members.discard(provider)
        if not members:
            del reverse[key]


class _Source:
    """A SELECT of rows about providers, built once in the two forms a
    load reads it alone: for every provider, and for some (``IN``). A
    load of a few providers reads every source at once (``_FEW``)."""

    def __init__(self, stmt, column, kind, fields):
        self.every = stmt
        self.some = stmt.where(column.in_(sa.bindparam('ids',
                                                       expanding=True)))
        #: Its rows' tag in ``_FEW``, and for each of its columns the
        #: ``_FEW`` column that carries it.
        self.kind = kind
        self.fields = fields
        self.column = column


#: Up to this many providers are reloaded by one prepared statement.
FEW = 4

_CLASS_NAMES = sa.select(tables.resource_classes.c.id,
                         tables.resource_classes.c.name)
_TRAIT_NAMES = sa.select(tables.traits.c.id, tables.traits.c.name)
_PROVIDERS = _Source(sa.select(_RP.c.id, _RP.c.uuid, _RP.c.parent_provider_id,
                               _RP.c.root_provider_id), _RP.c.id,
                     0, ('provider', 'text', 'a', 'b'))
# In row order: a summary lists a provider's classes in the order read,
# which must not depend on whether the provider was loaded alone.
_INVENTORIES = _Source(sa.select(
    _INV.c.resource_provider_id, _INV.c.resource_class_id, _INV.c.total,
    _INV.c.reserved, _INV.c.allocation_ratio, _INV.c.min_unit,
    _INV.c.max_unit, _INV.c.step_size).order_by(_INV.c.id),
    _INV.c.resource_provider_id,
    1, ('provider', 'a', 'b', 'c', 'ratio', 'd', 'e', 'f'))
_USAGE = _Source(sa.select(
    _ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
    sa.func.sum(_ALLOC.c.used)
).group_by(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id),
    _ALLOC.c.resource_provider_id, 2, ('provider', 'a', 'b'))
_TRAITS = _Source(sa.select(_RP_TRAITS.c.resource_provider_id,
                            _RP_TRAITS.c.trait_id),
                  _RP_TRAITS.c.resource_provider_id, 3, ('provider', 'a'))
_AGGREGATES = _Source(sa.select(_RP_AGGS.c.resource_provider_id,
                                _RP_AGGS.c.aggregate_id),
                      _RP_AGGS.c.resource_provider_id, 4, ('provider', 'a'))
_SOURCES = (_PROVIDERS, _INVENTORIES, _USAGE, _TRAITS, _AGGREGATES)


def _few_statement():
    """The rows of every source for at most ``FEW`` providers (the
    bound ``id0``... ``id3``, padded with the last), in one prepared
    statement: a write changes one or two providers, and each statement
    costs a worker more than what it reads (measured on PostgreSQL:
    five prepared statements, about a third of a sharing listing's CPU
    after a write). A ``UNION ALL`` of the sources, each row tagged
    with its source (``kind``) and its values in the columns the
    source's ``fields`` name, the others NULL; inventories in row
    order (``seq``)."""
    bigint = sa.BigInteger()
    types = {'provider': bigint, 'a': bigint, 'b': bigint, 'c': bigint,
             'd': bigint, 'e': bigint, 'f': bigint,
             'ratio': _INV.c.allocation_ratio.type,
             'text': _RP.c.uuid.type}
    selects = []
    # Inventories first: the one source with a ratio sets its column's
    # type (PostgreSQL types a UNION's NULLs from the branches before;
    # MySQL cannot CAST to a float).
    for source in sorted(_SOURCES, key=lambda s: s is not _INVENTORIES):
        given = dict(zip(source.fields, source.every.selected_columns))
        columns = [sa.literal_column(str(source.kind), sa.Integer)
                   .label('kind'),
                   (_INV.c.id if source is _INVENTORIES
                    else sa.literal_column('0', sa.Integer)).label('seq')]
        for name, kind in types.items():
            value = given.get(name)
            if value is None:
                value = (sa.null() if name == 'ratio'
                         else sa.cast(sa.null(), kind))
            elif kind is bigint:
                value = sa.cast(value, bigint)
            columns.append(value.label(name))
        stmt = source.every.with_only_columns(*columns).order_by(None)
        # Typed: PostgreSQL is told the parameters' types when the
        # statement is prepared on it.
        selects.append(stmt.where(source.column.in_(
            [sa.bindparam('id%d' % i, type_=source.column.type)
             for i in range(FEW)])))
    union = sa.union_all(*selects).subquery('few')
    return prepared.Prepared(
        sa.select(union).order_by(union.c.kind, union.c.seq))


_FEW = _few_statement()
#: Where each source's values sit in a ``_FEW`` row.
_FEW_COLUMNS = {
    source.kind: [2 + list(_FEW.stmt.selected_columns.keys())[2:].index(name)
                  for name in source.fields]
    for source in _SOURCES}


def _parts(conn, ids):
    """``parts(source)``: the rows of ``source`` for the providers
    ``ids`` (None: all), in parts. At most ``FEW`` providers are read
    from every source at once."""
    if ids is None or len(ids) > FEW:
        return lambda source: _rows(conn, source, ids)
    ids = sorted(ids)
    padded = ids + ids[-1:] * (FEW - len(ids))
    found = {source.kind: [] for source in _SOURCES}
    for row in _FEW.rows(conn, **{'id%d' % i: provider
                                  for i, provider in enumerate(padded)}):
        found[row[0]].append(row)
    split = {}
    for source in _SOURCES:
        pick = _FEW_COLUMNS[source.kind]
        split[source] = [tuple([row[i] for i in pick])
                         for row in found[source.kind]]
    return lambda source: (split[source],)


def _rows(conn, source, ids):
    """Rows of ``source`` for the providers ``ids`` (in parts), or all."""
    if ids is None:
        # In parts, never all rows of a large cloud at once.
        yield from conn.execute(source.every).partitions(CHUNK * 20)
        return
    ids = sorted(ids)
    for start in range(0, len(ids), CHUNK):
        yield conn.execute(source.some,
                           {'ids': ids[start:start + CHUNK]}).all()


# -- one index per process and database ---------------------------------------

_INDEXES = per_process.PerDatabase(ProviderIndex)


def of(db):
    """The index of database ``db`` in this process."""
    return _INDEXES.of(db)
