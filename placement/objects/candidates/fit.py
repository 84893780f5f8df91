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
* ``limited_by[C]``: how many trees of ``by_root`` would hold the fewest
  instances if only class C counted (ties count for each class).

Solving: candidates that share no (provider, class) are independent,
so candidates are split into connected groups ("knots"); a knot of one
candidate holds ``min(free // amount)``; larger knots (spread requests
in a nested tree, several groups, sharing providers) are searched
exhaustively with memoised states, cut short when an upper bound is
reached. Knots are cached by their shape, so a fleet of alike trees is
solved once per shape.
"""

import collections
import dataclasses
import functools
import json
import logging
import typing

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception
from placement.objects.candidates import engine
from placement.objects.candidates import memo as candidate_memo
from placement.objects.candidates import provider_index
from placement.objects.candidates import search
from placement.objects import per_process
from placement.observability import metrics

LOG = logging.getLogger(__name__)

#: Most candidate visits the search of one knot may make before the
#: request is refused (about a second of one core).
MAX_WORK = 2000000
#: Most candidates one knot may search through (the search recurses
#: once per candidate); beyond, only a greedy packing that meets its
#: bound is accepted.
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


@db_api.reader
def fit(ctx, request, roots=True, steps=-1):
    """The Fit of ``request`` (an ``engine.Request``) on
    the fleet as stored now (``by_root`` only if ``roots``), building
    candidates in at most ``steps`` search steps (``[placement]
    max_candidate_search_steps``); raises what the candidates engine
    raises for unknown names and too large searches, and
    FitTooComplex."""
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
            built = engine.whole_space(index, request, found,
                                       budget=search.Budget(steps))
            if built is None:
                return Fit()
            space, anchors, shares = built
            fleet = _Fleet(index, space)
            weights, per_anchor = fleet.weigh(anchors, keep=shares)
            summed = _sums(_tally(index, weights))
            if shares:
                summed = _packed(index, fleet, weights, per_anchor,
                                 summed[2])
        return _named(ctx, index, weights if roots else None, summed)


class FlavorFit(typing.NamedTuple):
    """The fit of one named request: ``total`` and ``by_aggregate``."""

    name: str
    total: int
    by_aggregate: typing.Dict[str, int]


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
                    exception.TraitNotFound, exception.FitTooComplex,
                    exception.CandidateSearchTooLarge) as exc:
                LOG.warning('[capacity] flavors: %s not counted: %s',
                            name, exc)
                continue
            found.append([name, counted.total, counted.by_aggregate])
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
    with room for one instance of ``amounts`` (the candidates, unbuilt):
    each holds what its tightest class allows. Worked out once per
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
    """(n, limiting classes) of one provider with inventory map ``own``
    and usage ``used`` for ``amounts``, or None if one does not fit."""
    counts = {}
    for rc, amount in amounts:
        offer = own.get(rc)
        if offer is None or amount not in offer.allowed:
            return None
        counts[rc] = (offer.capacity - (used.get(rc, 0) if used else 0)
                      ) // amount
    return _fewest([counts])


def _fewest(counts):
    """``(n, classes)`` of providers holding ``counts`` ({class: how many
    instances it allows}, one per provider): the instances they hold
    together, and the classes that alone allow the fewest."""
    alone = collections.Counter()
    n = 0
    for each in counts:
        n += min(each.values())
        alone.update(each)
    fewest = min(alone.values())
    return n, tuple(sorted(rc for rc, count in alone.items()
                           if count == fewest))


def _kept_weights(ctx, index, request, found, budget):
    """{anchor: (n, limiting classes)} of a query whose candidates at
    each anchor depend on that tree alone, from the memo: only the
    trees changed since it was kept are weighed again."""
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
            index, request, found, index.trees(changed), served, budget))
    memo.keep(key, kept, index)
    return kept.by_anchor


def _weighed_trees(index, request, found, within, served, budget):
    """{anchor: (n, classes)} of the anchors within the trees ``within``
    (None: all); ``candidate_memo.Kept`` counts each as two."""
    built = engine.whole_space(index, request, found, within=within,
                               served=served, budget=budget)
    if built is None:
        return {}
    space, anchors, _ = built
    weights, _ = _Fleet(index, space).weigh(anchors)
    return weights


def _tally(index, weights):
    """{((n, classes), aggregates of the tree): trees} of the trees'
    ``weights``: alike trees share one weight and one set of aggregates
    (both kept shared by the weighing and the index), so the pairs are
    counted in C and each distinct one is expanded once."""
    return collections.Counter(zip(
        weights.values(), map(index.aggregates.__getitem__, weights)))


def _sums(tally):
    """``(total, {aggregate id: n}, {class id: roots})`` of a tally,
    the trees' counts added up."""
    total = 0
    limited_by = collections.Counter()
    by_aggregate = collections.Counter()
    for ((n, classes), memberships), trees in tally.items():
        total += n * trees
        for rc in classes:
            limited_by[rc] += trees
        for aggregate in memberships:
            by_aggregate[aggregate] += n * trees
    return total, dict(by_aggregate), limited_by


def _packed(index, fleet, weights, per_anchor, limited_by):
    """The sums when candidates are offered at several anchors (sharing
    providers): total and aggregates packed afresh from ``per_anchor``,
    each candidate once."""
    members = collections.defaultdict(list)
    for anchor in weights:
        for aggregate in index.aggregates[anchor]:
            members[aggregate].append(anchor)
    total = fleet.pack(_distinct(per_anchor.values()))
    by_aggregate = {
        agg: fleet.pack(_distinct(per_anchor[a] for a in anchors))
        for agg, anchors in members.items()}
    return total, by_aggregate, limited_by


def _named(ctx, index, weights, summed):
    """The Fit, names for ids (``by_root`` empty without ``weights``)."""
    total, by_aggregate, limited_by = summed
    uuids = _aggregate_uuids(ctx, by_aggregate)
    names = index.class_names
    uuid = index.uuid
    return Fit(
        total=total,
        by_root={uuid[root]: n for root, (n, _) in (weights or {}).items()},
        by_aggregate=dict(sorted(
            (uuids[agg], n) for agg, n in by_aggregate.items()
            if agg in uuids)),
        limited_by=dict(sorted((names[rc], n)
                               for rc, n in limited_by.items())))


_AGG = tables.placement_aggregates
_UUIDS = sa.select(_AGG.c.id, _AGG.c.uuid).where(
    _AGG.c.id.in_(sa.bindparam('ids', expanding=True)))


def _aggregate_uuids(ctx, ids):
    if not ids:
        return {}
    return dict(ctx.conn.execute(_UUIDS, {'ids': sorted(ids)}).all())


class _Fleet:
    """The candidates of one request over the index, weighed."""

    def __init__(self, index, space):
        self.index = index
        self.space = space
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
        for _, partials in search.anchor_candidates(self.space, anchor,
                                                    self._plans):
            amounts = search.consolidated(partials)
            if not self.single and not self._writable(amounts):
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
        value = self._free.get(pair)
        if value is None:
            provider, rc = pair
            used = self.index.usage.get(provider)
            value = self._free[pair] = (
                self.index.inventories[provider][rc].capacity
                - (used.get(rc, 0) if used else 0))
        return value

    # -- weighing ------------------------------------------------------------

    def weigh(self, anchors, keep=False):
        """({anchor: (n, limiting classes)} of the anchors with room for
        an instance, {anchor: its candidates} if ``keep``, else {})."""
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

    def pack(self, candidates, only=None):
        """The most instances of ``candidates`` that fit at once (only
        the pairs of class ``only`` counted, if given)."""
        if only is not None:
            candidates = [tuple(item for item in c if item[0][1] == only)
                          for c in candidates]
        return sum(self._pack_knot(knot) for knot in _knots(candidates))

    def pack_limited(self, candidates):
        """``pack(candidates)`` and the classes that alone allow the
        fewest instances; worked out once per shape of candidates and
        room (alike trees)."""
        key = _shape(candidates, self.free)
        found = self._limited.get(key)
        if found is None:
            found = self._limited[key] = self._pack_limited(candidates)
        return found

    def _pack_limited(self, candidates):
        n = self.pack(candidates)
        classes = {pair[1] for pair, _ in candidates[0]}
        alone = {rc: self.pack(candidates, only=rc) for rc in classes}
        fewest = min(alone.values())
        return n, tuple(sorted(rc for rc, count in alone.items()
                               if count == fewest))

    def _pack_knot(self, knot):
        free = self.free
        if len(knot) == 1:
            return min(free(pair) // amount for pair, amount in knot[0])
        key = _shape(knot, free)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = _Knot(*key).solve()
        return found


def _shape(candidates, free):
    """``(shape, room, classes)``: ``candidates`` with their (provider,
    class) pairs numbered in order of appearance, what is free of each
    pair and its class. Same shape, same packing: alike trees are
    solved once."""
    local = {}
    shape = tuple(tuple((local.setdefault(pair, len(local)), amount)
                        for pair, amount in candidate)
                  for candidate in candidates)
    return (shape, tuple(free(pair) for pair in local),
            tuple(pair[1] for pair in local))


def _distinct(groups):
    """The candidates of ``groups`` (lists), each once."""
    return list(dict.fromkeys(c for group in groups for c in group))


def _knots(candidates):
    """``candidates`` split into groups sharing no (provider, class)."""
    if len(candidates) == 1:
        return [candidates]
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


class _Knot:
    """max sum(x) over whole x >= 0 with sum(x[c] * amounts of c) <= room
    per pair, for the candidates ``shape`` (tuples of (pair number,
    amount)); ``classes`` gives each pair number's class.

    A greedy packing (most of each candidate in turn, those that hold
    most alone first) is tried first and is the answer when it meets an
    upper bound (the usual case, and the one of many trees drawing on
    one sharing provider). Otherwise a depth-first search over how many
    of each candidate to take, each state (candidate, room left) solved
    once and cut short at its bound, finds the optimum; past
    ``MAX_WORK`` it gives up (FitTooComplex).
    """

    def __init__(self, shape, room, classes):
        self.shape = sorted(shape, key=lambda c: -_alone(c, room))
        self.room = room
        self.memo = {}
        self.work = 0
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
        self.class_pairs = []
        seen = collections.defaultdict(set)
        for candidate in reversed(self.shape):
            for pair, _ in candidate:
                seen[classes[pair]].add(pair)
            self.class_pairs.append({rc: tuple(pairs)
                                     for rc, pairs in seen.items()})
        self.class_pairs.reverse()

    def solve(self):
        if self._greedy() >= self._bound(0, self.room, pairs=True):
            return self._greedy_value
        if len(self.shape) > MAX_DEPTH:
            raise exception.FitTooComplex()
        return self._best(0, self.room)

    def _greedy(self):
        room, count = self.room, 0
        for candidate in self.shape:
            x = _alone(candidate, room)
            room = _less(room, candidate, x)
            count += x
        self._greedy_value = count
        return count

    def _best(self, i, room):
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
            best = max(best, x + self._best(i + 1, left))
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
            raise exception.FitTooComplex()
        alone = [_alone(c, room) for c in shape]
        bound = sum(alone)
        for rc, rc_pairs in self.class_pairs[i].items():
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
            for pair, using in users.items():
                others = sum(alone) - sum(alone[k] for k, _ in using)
                bound = min(bound, others + room[pair]
                            // min(amount for _, amount in using))
        return bound


def _alone(candidate, room):
    return min(room[pair] // amount for pair, amount in candidate)


def _less(room, candidate, x):
    if not x:
        return room
    room = list(room)
    for pair, amount in candidate:
        room[pair] -= x * amount
    return tuple(room)
