"""How many more instances of a candidates request fit, exactly.

The definition (api-ref/capacity-fit.rst says it for operators): an
*instance* is one allocation candidate of the request, as GET
/allocation_candidates would return it now, that an allocation write
would accept. Usage only removes candidates (it changes no trait,
aggregate or tree), and a write of several consumers succeeds exactly
when, for every provider and class, their amounts add up to at most
what is free (capacity minus usage; each amount already respects
``min_unit``, ``max_unit`` and ``step_size``, or it would not be a
candidate). So the number of instances a set of trees can hold at the
same time is the largest multiset of their candidates whose summed
amounts fit what is free: a packing problem, solved exactly here.

* ``by_root[T]``: the packing of the candidates anchored at tree T
  alone, every sharing provider it may use entirely at its disposal.
* ``total``: the packing of every candidate of the fleet at once (each
  candidate once, however many trees it is offered at), so a sharing
  provider's capacity is counted once across the trees using it.
* ``by_aggregate[A]``: the same over the trees whose root is in A.
* ``limited_by[C]``: how many trees would hold the fewest instances if
  only class C counted (ties count for each class): the trees of
  ``by_root`` over their candidates, and the full trees (no instance
  fits, though one would but for room and units) over the candidates
  they would have but for room and units.

Solving: candidates that share no (provider, class) are independent,
so candidates are split into connected groups ("knots"); a knot of one
candidate holds ``min(free // amount)``; larger knots (spread requests
in a nested tree, several groups, sharing providers) are packed
greedily, which is the answer when it meets an upper bound; else, if
each candidate is a part in its tree and a part on sharing providers
and the parts on each side are alike or share nothing, as a maximum
flow; else searched exhaustively with memoised states, cut short when
an upper bound is reached. A search beyond its budget answers the best
packing it found, a lower bound, and the Fit says it is not exact.
Knots are cached by their shape, so a fleet of alike trees is solved
once per shape.
"""

import collections
import dataclasses
import functools
import json
import logging
import sys
import typing

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception
from placement.objects import capacity as capacity_rule
from placement.objects.candidates import engine
from placement.objects.candidates import memo as candidate_memo
from placement.objects.candidates import provider_index
from placement.objects.candidates import search
from placement.objects import per_process
from placement.observability import metrics

LOG = logging.getLogger(__name__)

#: Most candidate visits the search of one knot may make before it
#: settles for the best packing found so far (about a second of one
#: core).
MAX_WORK = 2000000
#: Most candidates one knot may search through (the search recurses
#: once per candidate); beyond, a knot the greedy packing, its bound
#: and the flow do not settle is answered by the greedy packing.
MAX_DEPTH = 400


@dataclasses.dataclass
class Fit:
    """The answer: counts by root uuid, aggregate uuid, class name."""

    total: int = 0
    by_root: typing.Dict[str, int] = dataclasses.field(default_factory=dict)
    by_aggregate: typing.Dict[str, int] = dataclasses.field(
        default_factory=dict)
    limited_by: typing.Dict[str, int] = dataclasses.field(
        default_factory=dict)
    #: False when a packing was cut short (see ``_Knot``): the counts
    #: are then packings that fit, at least, not the most.
    exact: bool = True


class _Weight(typing.NamedTuple):
    """What one tree holds: ``n`` instances (0 for a full tree), the
    ``classes`` that alone allow the fewest, and whether ``n`` (and
    the classes) are exact."""

    n: int
    classes: tuple
    exact: bool = True


@db_api.reader
def fit(ctx, request, roots=True, steps=-1):
    """The Fit of ``request`` (an ``engine.Request``) on
    the fleet as stored now (``by_root`` only if ``roots``), building
    candidates in at most ``steps`` search steps (``[placement]
    max_candidate_search_steps``); raises what the candidates engine
    raises for unknown names and too large searches."""
    index = provider_index.of(ctx.db)
    with index.lock:
        index.refresh(ctx.conn)
        found = engine.resolve(ctx, index, request)
        if found is None:
            return Fit()
        lone = engine.lone_providers(index, request, found)
        if lone is not None:
            tally, weights = _lone(index, *lone, roots=roots)
            summed = _sums(tally)
        elif engine.tree_by_tree(index, request, found):
            weights = _kept_weights(ctx, index, request, found,
                                    search.Budget(steps))
            summed = _sums(_tally(index, weights))
        else:
            budget = search.Budget(steps)
            built = engine.whole_space(index, request, found,
                                       budget=budget)
            weights, per_anchor, shares = {}, {}, False
            if built is not None:
                space, anchors, shares = built
                fleet = _Fleet(index, space, found.names.sharing())
                weights, per_anchor = fleet.weigh(anchors, keep=shares)
            weights.update(_full_trees(index, request, found, weights,
                                       None, budget))
            summed = _sums(_tally(index, weights))
            if shares:
                summed = _packed(index, fleet, per_anchor, summed)
        return _named(ctx, index, weights if roots else None, summed)


class FlavorFit(typing.NamedTuple):
    """The fit of one named request: ``total`` and ``by_aggregate``
    (packings that fit, at least, when not ``exact``)."""

    name: str
    total: int
    by_aggregate: typing.Dict[str, int]
    exact: bool = True


_decoded = {}


def flavor_fits(ctx, flavors, max_age, steps=-1):
    """[FlavorFit] of the named requests ``flavors`` (``(name,
    Request)`` pairs), worked out at most once per ``max_age`` seconds by
    the processes sharing metrics files. A request naming a class or
    trait that does not exist (yet) is left out, with a warning."""
    cache = metrics.shared_cache('flavor-fit', ctx.db.url)

    def compute():
        found = []
        for name, request in flavors:
            try:
                counted = fit(ctx, request, roots=False, steps=steps)
            except (exception.ResourceClassNotFound,
                    exception.TraitNotFound,
                    exception.CandidateSearchTooLarge) as exc:
                LOG.warning('[capacity] flavors: %s not counted: %s',
                            name, exc)
                continue
            found.append([name, counted.total, counted.by_aggregate,
                          counted.exact])
        return json.dumps(found).encode()

    data = cache.get(compute, max_age)
    key = (ctx.db.url, metrics.shared_directory())
    last = _decoded.get(key)
    if last is None or last[0] != data:
        last = _decoded[key] = (data, [FlavorFit(*entry)
                                       for entry in json.loads(data)])
    return last[1]


#: Per process and database: each query's weights per tree, kept while
#: no sharing provider can take part (see ``candidate_memo``), for as
#: many queries as ``[capacity] flavors`` name and a few more. A kept
#: tree costs about 150 bytes (trees alike share their weight): some
#: 1.5 MB per query at 10,000 trees.
_MEMOS = per_process.PerDatabase(functools.partial(
    candidate_memo.Memo, max_queries=64, max_candidates=2000000))


def _lone(index, providers, amounts, roots=True):
    """``(tally, weights)`` (see ``_tally``; weights only with ``roots``,
    else None) of the ``providers`` that are each a tree of their own
    and could hold ``amounts`` but for room and units (the candidates,
    unbuilt): each holds what its tightest class allows, none when
    full. Worked out once per
    inventory map (equal records with equal usage share one, see
    ``provider_index``) and counted in C: 50 named flavors at 10,000
    providers are half a million providers to weigh."""
    inventories, usage = index.inventories, index.usage
    providers = list(providers)
    maps = list(map(id, map(inventories.__getitem__, providers)))
    # One provider per map stands for all: their usage is the same.
    weight_of = {ident: _lone_weight(inventories[provider],
                                     usage.get(provider), amounts)
                 for ident, provider in dict(zip(maps, providers)).items()}
    # Counted by map: an int hashes faster than a weight tuple.
    counted = collections.Counter(zip(
        maps, map(index.aggregates.__getitem__, providers)))
    tally = collections.Counter()
    for (ident, memberships), trees in counted.items():
        weight = weight_of[ident]
        if weight is not None:
            tally[weight, memberships] += trees
    weights = None
    if roots:
        weights = {provider: weight for provider, weight in zip(
            providers, map(weight_of.__getitem__, maps))
            if weight is not None}
    return tally, weights


def _lone_weight(own, used, amounts):
    """The _Weight of one provider with inventory map ``own`` and usage
    ``used`` for ``amounts`` (n 0 when one does not fit: limited by the
    classes without room or units for one), or None if it has no usable
    inventory of a class."""
    counts = {}
    for rc, amount in amounts:
        offer = own.get(rc, capacity_rule.NOTHING)
        if offer is capacity_rule.NOTHING:
            return None
        if amount not in offer.units:
            counts[rc] = 0
        else:
            counts[rc] = max(offer.capacity - (used.get(rc, 0) if used
                                               else 0), 0) // amount
    return _fewest([counts])


def _fewest(counts):
    """The _Weight of providers holding ``counts`` ({class: how many
    instances it allows}, one per provider): the instances they hold
    together, and the classes that alone allow the fewest."""
    alone = collections.Counter()
    n = 0
    for each in counts:
        n += min(each.values())
        alone.update(each)
    return _Weight(n, _least(alone))


def _least(alone):
    """The classes of {class: count} with the lowest count, sorted."""
    fewest = min(alone.values())
    return tuple(sorted(rc for rc, count in alone.items()
                        if count == fewest))


def _kept_weights(ctx, index, request, found, budget):
    """{anchor: _Weight} of a query whose candidates at each anchor
    depend on that tree alone, from the memo: only the trees changed
    since it was kept are weighed again."""
    memo = _MEMOS.of(ctx.db)
    key = engine.memo_key(request, found, 'fit', index)
    served = engine.served_roots(index, found)
    kept, changed = (None, None) if memo.too_large(key) else memo.get(
        key, index, served)
    if kept is None:
        kept = candidate_memo.Kept(index.epoch, index.serial, served)
        kept.replace((), _weighed_trees(index, request, found, None,
                                        served, budget))
    elif changed:
        kept.replace(changed, _weighed_trees(
            index, request, found, changed, served, budget))
    memo.keep(key, kept, index)
    return kept.by_anchor


def _weighed_trees(index, request, found, roots, served, budget):
    """{anchor: _Weight} of the anchors of the trees ``roots`` (None:
    all), full ones included; ``candidate_memo.Kept`` counts each as
    three."""
    within = None if roots is None else index.trees(roots)
    built = engine.whole_space(index, request, found, within=within,
                               served=served, budget=budget)
    weights = {}
    if built is not None:
        space, anchors, _ = built
        weights, _ = _Fleet(index, space).weigh(anchors)
    weights.update(_full_trees(index, request, found, weights, roots,
                               budget))
    return weights


class _Unbounded:
    """The provider index as if every inventory took any amount: the
    providers that can take a group's amounts are those with a usable
    inventory of each class. Its candidates are those a tree would
    have but for room and units."""

    def __init__(self, index):
        self._index = index

    def __getattr__(self, name):
        return getattr(self._index, name)

    def fitting(self, providers, amounts, verdicts=None):
        inventories, nothing = self._index.inventories, capacity_rule.NOTHING
        for provider in providers:
            own = inventories[provider]
            if all(own.get(rc, nothing) is not nothing for rc, _ in amounts):
                yield provider

    def room(self, provider, rc):
        return sys.maxsize


def _full_trees(index, request, found, weights, roots, budget):
    """{anchor: _Weight with n 0} of the full trees among ``roots``
    (None: all) not in ``weights``: those with candidates but for room
    and units, limited by the classes that alone allow the fewest
    instances of those candidates (see ``_Fleet.blocked``). A tree the
    query's traits, aggregates or shape rule out has none."""
    roots = set(index.members if roots is None else roots)
    roots.difference_update(weights)
    sharing = found.names.sharing()
    # A tree without an inventory of a class the query asks for, and
    # no sharing provider with one, has no such candidate: left out
    # before building (the sharing providers' own trees, mostly).
    inventories = index.inventories
    wanted = {rc for ids in found.groups for rc in ids.amounts}
    wanted.difference_update(*(inventories[p] for p in sharing))
    if wanted:
        roots = {root for root in roots if wanted.issubset(
            set().union(*(inventories[p] for p in index.members.get(
                root, ()))))}
    if not roots:
        return {}
    built = engine.whole_space(_Unbounded(index), request, found,
                               within=index.trees(roots) | sharing,
                               budget=budget)
    if built is None:
        return {}
    space, anchors, _ = built
    fleet = _Fleet(index, space, sharing, unbounded=True)
    full = {}
    for anchor in anchors:
        if anchor in roots:
            candidates = fleet.candidates(anchor)
            if candidates:
                full[anchor] = fleet.blocked(candidates)
    return full


def _tally(index, weights):
    """{(_Weight, aggregates of the tree): trees} of the trees'
    ``weights``: alike trees share one weight and one set of aggregates
    (both kept shared by the weighing and the index), so the pairs are
    counted in C and each distinct one is expanded once."""
    return collections.Counter(zip(
        weights.values(), map(index.aggregates.__getitem__, weights)))


def _sums(tally):
    """``(total, {aggregate id: n}, {class id: roots}, exact)`` of a
    tally, the trees' counts added up (full trees add to no
    aggregate)."""
    total = 0
    exact = True
    limited_by = collections.Counter()
    by_aggregate = collections.Counter()
    for ((n, classes, weight_exact), memberships), trees in tally.items():
        exact = exact and weight_exact
        total += n * trees
        for rc in classes:
            limited_by[rc] += trees
        if n:
            for aggregate in memberships:
                by_aggregate[aggregate] += n * trees
    return total, dict(by_aggregate), limited_by, exact


def _packed(index, fleet, per_anchor, summed):
    """The sums when candidates are offered at several anchors (sharing
    providers): total and aggregates packed afresh from ``per_anchor``,
    each candidate once."""
    members = collections.defaultdict(list)
    for anchor in per_anchor:
        for aggregate in index.aggregates[anchor]:
            members[aggregate].append(anchor)
    total, exact = fleet.pack(_distinct(per_anchor.values()))
    by_aggregate = {}
    for agg, anchors in members.items():
        by_aggregate[agg], agg_exact = fleet.pack(
            _distinct(per_anchor[a] for a in anchors))
        exact = exact and agg_exact
    return total, by_aggregate, summed[2], exact and summed[3]


def _named(ctx, index, weights, summed):
    """The Fit, names for ids (``by_root`` empty without ``weights``)."""
    total, by_aggregate, limited_by, exact = summed
    uuids = _aggregate_uuids(ctx, by_aggregate)
    names = index.class_names
    uuid = index.uuid
    return Fit(
        total=total,
        by_root={uuid[root]: weight.n
                 for root, weight in (weights or {}).items() if weight.n},
        by_aggregate=dict(sorted(
            (uuids[agg], n) for agg, n in by_aggregate.items()
            if agg in uuids)),
        limited_by=dict(sorted((names[rc], n)
                               for rc, n in limited_by.items())),
        exact=exact)


_AGG = tables.placement_aggregates
_UUIDS = sa.select(_AGG.c.id, _AGG.c.uuid).where(
    _AGG.c.id.in_(sa.bindparam('ids', expanding=True)))


def _aggregate_uuids(ctx, ids):
    if not ids:
        return {}
    return dict(ctx.conn.execute(_UUIDS, {'ids': sorted(ids)}).all())


class _Fleet:
    """The candidates of one request over the index, weighed.

    ``sharing``: the sharing providers (their pairs are the other side
    of a knot packed as a flow); ``unbounded``: the space was built
    over ``_Unbounded``, so candidates are kept whatever a write would
    say of their units (``blocked`` weighs them)."""

    def __init__(self, index, space, sharing=frozenset(), unbounded=False):
        self.index = index
        self.space = space
        self.sharing = sharing
        self.unbounded = unbounded
        self.single = len(space.groups) == 1
        self._plans = {}
        self._free = {}
        self._memo = {}
        self._alone = {}
        self._limited = {}

    # -- candidates ----------------------------------------------------------

    def candidates(self, anchor):
        """The candidates at ``anchor`` as tuples of ``((provider,
        class), amount)``, those a write would refuse left out."""
        found = []
        check = not (self.single or self.unbounded)
        for _, partials in search.anchor_candidates(self.space, anchor,
                                                    self._plans):
            amounts = search.consolidated(partials)
            if check and not self._writable(amounts):
                continue
            found.append(tuple(sorted(
                ((provider, rc), amount)
                for provider, rc, amount in amounts)))
        return found

    def _writable(self, amounts):
        # Several groups may place one class on one provider: their sum
        # must be one amount the inventory allows (units and room).
        inventories = self.index.inventories
        return all(amount in inventories[provider][rc].allowed
                   for provider, rc, amount in amounts)

    def free(self, pair):
        """What is free of ``pair`` (none when usage is above
        capacity)."""
        value = self._free.get(pair)
        if value is None:
            provider, rc = pair
            used = self.index.usage.get(provider)
            value = self._free[pair] = max(
                self.index.inventories[provider][rc].capacity
                - (used.get(rc, 0) if used else 0), 0)
        return value

    # -- weighing ------------------------------------------------------------

    def weigh(self, anchors, keep=False):
        """({anchor: _Weight} of the anchors with room for an instance,
        {anchor: its candidates} if ``keep``, else {})."""
        weights, per_anchor = {}, {}
        lone = self.single and not keep
        for anchor in anchors:
            weight = self._providers_alone(anchor) if lone else None
            if weight is None:
                candidates = self.candidates(anchor)
                if not candidates:
                    continue
                if keep:
                    per_anchor[anchor] = candidates
                weight = self.pack_limited(candidates)
            weights[anchor] = weight
        return weights, per_anchor

    def _providers_alone(self, anchor):
        """``pack_limited`` of a lone group's candidates at ``anchor``
        when each is one provider (the group's amounts, its template, on
        it): they share nothing, so each provider holds what its
        tightest class allows, and the tree the sum. Worked out once per
        set of inventory maps, which equal records with equal usage
        share (``provider_index``): a cloud of alike hosts is weighed
        in a few lookups per host. None for other partials."""
        partials = self.space.groups[0].partials[anchor]
        if not isinstance(partials, list) or not partials:
            return None  # a spread group's combinations
        template = partials[0].template
        if template is None:
            return None
        inventories = self.index.inventories
        key = [template]
        for partial in partials:
            if partial.template is not template:
                return None
            key.append(id(inventories[partial.providers[0]]))
        key = tuple(key)
        found = self._alone.get(key)
        if found is None:
            found = self._alone[key] = _fewest(
                {rc: self.free((partial.providers[0], rc)) // amount
                 for rc, amount in template} for partial in partials)
        return found

    def pack(self, candidates):
        """``(n, exact)``: the most instances of ``candidates`` that fit
        at once, or, not ``exact``, as many as a packing cut short
        found."""
        n, exact = 0, True
        for knot in _knots(candidates):
            count, knot_exact = self._pack_knot(knot)
            n += count
            exact = exact and knot_exact
        return n, exact

    def pack_limited(self, candidates):
        """The _Weight of ``candidates``: ``pack`` and the classes that
        alone allow the fewest instances; worked out once per shape of
        candidates and room (alike trees)."""
        key = _shape(candidates, self.free)
        found = self._limited.get(key)
        if found is None:
            n, exact = self.pack(candidates)
            classes, alone_exact = self._least_alone(candidates)
            found = self._limited[key] = _Weight(
                n, classes, exact and alone_exact)
        return found

    def blocked(self, candidates):
        """The _Weight of a full tree whose ``candidates`` (built over
        ``_Unbounded``) none fits: n 0, and the classes that alone allow
        the fewest of them (none, for a class whose room or units fit
        none of them alone)."""
        classes, exact = self._least_alone(candidates, units=True)
        return _Weight(0, classes, exact)

    def _least_alone(self, candidates, units=False):
        """(the classes that alone allow the fewest of ``candidates``,
        exact): each class's pairs packed on their own, every other
        class taken as unlimited; with ``units``, a candidate whose
        amount of the class some inventory's units refuse holds none."""
        inventories = self.index.inventories
        alone, exact = {}, True
        for rc in {pair[1] for pair, _ in candidates[0]}:
            only = []
            for candidate in candidates:
                part = tuple(item for item in candidate if item[0][1] == rc)
                if not units or all(
                        amount in inventories[provider][rc].units
                        for (provider, _), amount in part):
                    only.append(part)
            alone[rc], rc_exact = self.pack(only)
            exact = exact and rc_exact
        return _least(alone), exact

    def _pack_knot(self, knot):
        free = self.free
        if len(knot) == 1:
            return min(free(pair) // amount for pair, amount in knot[0]), True
        key = _shape(knot, free, self.sharing)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = _Knot(*key).solve()
        return found


def _shape(candidates, free, sharing=None):
    """``(shape, room, classes, shared)``: ``candidates`` with their
    (provider, class) pairs numbered in order of appearance, what is
    free of each pair, its class and (with ``sharing``, the sharing
    providers) whether its provider is one. Same shape, same packing:
    alike trees are solved once."""
    local = {}
    shape = tuple(tuple((local.setdefault(pair, len(local)), amount)
                        for pair, amount in candidate)
                  for candidate in candidates)
    return (shape, tuple(free(pair) for pair in local),
            tuple(pair[1] for pair in local),
            tuple(pair[0] in sharing for pair in local) if sharing else ())


def _distinct(groups):
    """The candidates of ``groups`` (lists), each once."""
    return list(dict.fromkeys(c for group in groups for c in group))


def _knots(candidates):
    """``candidates`` split into groups sharing no (provider, class)."""
    if len(candidates) <= 1:
        return [candidates] if candidates else []
    owner = {}
    parent = list(range(len(candidates)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, candidate in enumerate(candidates):
        for pair, _ in candidate:
            j = owner.setdefault(pair, i)
            if j != i:
                parent[find(i)] = find(j)
    knots = collections.defaultdict(list)
    for i, candidate in enumerate(candidates):
        knots[find(i)].append(candidate)
    return list(knots.values())


class _OutOfWork(Exception):
    """The search of one knot reached ``MAX_WORK``."""


class _Knot:
    """max sum(x) over whole x >= 0 with sum(x[c] * amounts of c) <= room
    per pair, for the candidates ``shape`` (tuples of (pair number,
    amount)); ``classes`` gives each pair number's class, ``shared``
    (if not empty) whether its provider is a sharing provider.

    ``solve`` gives ``(n, exact)``. A greedy packing (most of each
    candidate in turn, those that hold most alone first) is tried first
    and is the answer when it meets an upper bound (the usual case).
    Else, when every candidate is a part on its tree's providers and a
    part on sharing providers, and two parts of one side are alike or
    share no pair (hosts drawing on pools), the packing is a maximum
    flow from the tree parts through the candidates to the sharing
    parts, each part passing what its room allows of its amounts:
    exact, in polynomial time. Otherwise a depth-first search over how
    many of each candidate to take, each state (candidate, room left)
    solved once and cut short at its bound, finds the optimum; past
    ``MAX_WORK`` candidate visits (or beyond ``MAX_DEPTH`` candidates)
    it answers the best packing found (the greedy one at least), not
    exact.
    """

    def __init__(self, shape, room, classes, shared=()):
        self.shape = sorted(shape, key=lambda c: -_alone(c, room))
        self.room = room
        self.shared = shared
        self.memo = {}
        self.work = 0
        self.found = 0
        # The least each candidate places of each class (every candidate
        # of a request places the request's total; a class some
        # candidate does not place bounds nothing), and the pairs of
        # each class per suffix of the candidates.
        totals = None
        spread = set()
        self.least = {}
        for candidate in self.shape:
            placed = collections.Counter()
            for pair, amount in candidate:
                if classes[pair] in placed:
                    spread.add(classes[pair])
                placed[classes[pair]] += amount
                self.least[pair] = min(amount,
                                       self.least.get(pair, amount))
            totals = placed if totals is None else {
                rc: min(total, placed[rc]) for rc, total in totals.items()
                if rc in placed}
        self.totals = totals
        #: Classes every candidate places on one pair.
        self.whole = set(totals) - spread
        self.classes = classes
        self._class_pairs = {}

    def solve(self):
        greedy = self.found = self._greedy()
        try:
            if greedy >= self._bound(0, self.room, pairs=True):
                return greedy, True
            flow = self._flow()
            if flow is not None:
                return flow, True
            if len(self.shape) > MAX_DEPTH:
                return greedy, False
            return self._best(0, self.room, 0), True
        except _OutOfWork:
            return self.found, False

    def _greedy(self):
        room, count = list(self.room), 0
        for candidate in self.shape:
            x = _alone(candidate, room)
            if x:
                for pair, amount in candidate:
                    room[pair] -= x * amount
                count += x
        return count

    def _flow(self):
        """The packing as a maximum flow (see the class), or None when
        the candidates are not so split."""
        if not self.shared:
            return None
        sides = ({}, {})  # per side: {part: node}
        owner = ({}, {})  # per side: {pair: the part holding it}
        edges = collections.Counter()
        for candidate in self.shape:
            nodes = []
            for side in (0, 1):
                part = tuple(item for item in candidate
                             if self.shared[item[0]] == bool(side))
                for pair, _ in part:
                    if owner[side].setdefault(pair, part) != part:
                        return None  # two parts of a side overlap
                nodes.append(sides[side].setdefault(part, len(sides[side])))
            edges[tuple(nodes)] += 1
        room = self.room

        def limit(part):
            if not part:
                return sys.maxsize  # a candidate without a part there
            return min(room[pair] // amount for pair, amount in part)

        return _max_flow([limit(part) for part in sides[0]],
                         [limit(part) for part in sides[1]], list(edges))

    def _best(self, i, room, taken):
        """The most of candidates ``i..`` that fit in ``room``, with
        ``taken`` already taken before them (for ``found``, the best
        whole packing seen)."""
        if i == len(self.shape):
            return 0
        key = (i, room)
        found = self.memo.get(key)
        if found is not None:
            return found
        candidate = self.shape[i]
        bound = self._bound(i, room)
        best = 0
        for x in range(_alone(candidate, room), -1, -1):
            left = _less(room, candidate, x)
            if x + self._bound(i + 1, left) <= best:
                continue
            best = max(best, x + self._best(i + 1, left, taken + x))
            self.found = max(self.found, taken + best)
            if best >= bound:
                break
        self.memo[key] = best
        return best

    def _bound(self, i, room, pairs=False):
        """At most this many of candidates ``i..`` fit in ``room``: what
        each holds alone, added up; what the room of each class allows;
        with ``pairs``, for each pair what the candidates not using it
        hold alone plus what it allows of those using it."""
        shape = self.shape[i:]
        if not shape:
            return 0
        self.work += len(shape)
        if self.work > MAX_WORK:
            raise _OutOfWork()
        alone = [_alone(c, room) for c in shape]
        bound = sum(alone)
        for rc, rc_pairs in self._pairs_of_classes(i).items():
            if rc in self.whole:
                bound = min(bound, sum(room[p] // self.least[p]
                                       for p in rc_pairs))
            elif rc in self.totals:
                bound = min(bound, sum(room[p] for p in rc_pairs)
                            // self.totals[rc])
        if pairs:
            users = collections.defaultdict(list)
            for k, candidate in enumerate(shape):
                for pair, amount in candidate:
                    users[pair].append((k, amount))
            every = sum(alone)
            for pair, using in users.items():
                others = every - sum(alone[k] for k, _ in using)
                bound = min(bound, others + room[pair]
                            // min(amount for _, amount in using))
        return bound


    def _pairs_of_classes(self, i):
        """{class: its pairs} of candidates ``i..``, worked out once per
        ``i`` the search reaches (a knot of many candidates is rarely
        searched past its first)."""
        found = self._class_pairs.get(i)
        if found is None:
            seen = collections.defaultdict(set)
            classes = self.classes
            for candidate in self.shape[i:]:
                for pair, _ in candidate:
                    seen[classes[pair]].add(pair)
            found = self._class_pairs[i] = {
                rc: tuple(pairs) for rc, pairs in seen.items()}
        return found


def _alone(candidate, room):
    return min(room[pair] // amount for pair, amount in candidate)


def _less(room, candidate, x):
    if not x:
        return room
    room = list(room)
    for pair, amount in candidate:
        room[pair] -= x * amount
    return tuple(room)


def _max_flow(sources, sinks, edges):
    """The maximum flow from a source through nodes ``sources`` (their
    capacities), unlimited ``edges`` ``(source node, sink node)``, and
    nodes ``sinks`` (their capacities) to a sink: Dinic's algorithm,
    after a greedy first flow."""
    n_left = len(sources)
    # Nodes: 0 source, 1 sink, 2.. the left nodes, then the right ones.
    size = 2 + n_left + len(sinks)
    head = [[] for _ in range(size)]
    to, cap = [], []

    def arc(a, b, capacity):
        head[a].append(len(to))
        to.append(b)
        cap.append(capacity)
        head[b].append(len(to))
        to.append(a)
        cap.append(0)

    left_arcs = []
    for i, capacity in enumerate(sources):
        left_arcs.append(len(to))
        arc(0, 2 + i, capacity)
    right_arcs = []
    for j, capacity in enumerate(sinks):
        right_arcs.append(len(to))
        arc(2 + n_left + j, 1, capacity)
    middle = []
    for i, j in edges:
        middle.append((len(to), i, j))
        arc(2 + i, 2 + n_left + j, sys.maxsize)
    # A greedy first flow: each left node sends what the right ones it
    # reaches still take. Usually most of the answer.
    total = 0
    for a, i, j in middle:
        push = min(cap[left_arcs[i]], cap[right_arcs[j]])
        if push > 0:
            for e in (left_arcs[i], a, right_arcs[j]):
                cap[e] -= push
                cap[e ^ 1] += push
            total += push
    while True:
        level = [-1] * size
        level[0] = 0
        queue = collections.deque([0])
        while queue:
            a = queue.popleft()
            for e in head[a]:
                if cap[e] > 0 and level[to[e]] < 0:
                    level[to[e]] = level[a] + 1
                    queue.append(to[e])
        if level[1] < 0:
            return total
        pointer = [0] * size
        while True:
            pushed = _augment(head, to, cap, level, pointer)
            if not pushed:
                break
            total += pushed


def _augment(head, to, cap, level, pointer):
    """One augmenting path of the level graph from node 0 to node 1
    (Dinic's blocking-flow step, without recursion): the flow pushed."""
    path = []  # arcs taken
    node = 0
    while True:
        if node == 1:
            push = min(cap[e] for e in path)
            for e in path:
                cap[e] -= push
                cap[e ^ 1] += push
            return push
        arcs = head[node]
        while pointer[node] < len(arcs):
            e = arcs[pointer[node]]
            if cap[e] > 0 and level[to[e]] == level[node] + 1:
                break
            pointer[node] += 1
        else:
            # A dead end: no path through this node in this phase.
            if not path:
                return 0
            level[node] = -1
            e = path.pop()
            node = to[e ^ 1]
            pointer[node] += 1
            continue
        path.append(e)
        node = to[e]
