"""Combining request groups into allocation candidates (the rules are in
api-ref/allocation-candidates.rst, 'How candidates are formed').

Pure Python over plain values, no database: ``engine``
finds each group's partial candidates in the ``provider_index``, this
module combines them. Candidates are generated lazily,
one anchor (tree root) at a time, by a depth-first walk that assigns one
partial candidate per group and abandons a branch as soon as it breaks a
rule (consolidated capacity, ``group_policy=isolate``, ``same_subtree``,
the pre-1.29 one-provider-per-tree rule). The caller stops pulling when
it has enough, so the cartesian product of the groups is never built.
"""

import collections
import dataclasses
import functools
import itertools
import typing

from placement import exception


class Partial(typing.NamedTuple):
    """One way to satisfy one group at one anchor.

    ``providers`` are the providers the group maps to (distinct);
    ``amounts`` are ``(provider, class, amount)`` triples it consumes
    (empty for a resourceless group). A single-provider partial may
    carry its group's ``(class, amount)`` pairs as ``template``, one
    tuple shared by the group's partials (it saves rendering work).
    """

    providers: typing.Tuple[int, ...]
    amounts: typing.Tuple[typing.Tuple[int, int, int], ...] = ()
    template: typing.Optional[typing.Tuple[typing.Tuple[int, int], ...]] = (
        None)


#: ``Partial`` from a ``(providers, amounts, template)`` tuple, without
#: the Python-level ``__new__`` (for the builders' hot loops).
make_partial = functools.partial(tuple.__new__, Partial)


class LazyPartials:
    """A re-iterable sequence produced on demand from an iterator.

    The depth-first walk iterates a group's partials once per branch;
    this produces each partial at most once and only as far as the walk
    actually gets. ``hint`` estimates the length, for ordering groups.
    """

    def __init__(self, iterable, hint):
        self._source = iter(iterable)
        self._items = []
        self.hint = hint

    def __iter__(self):
        index = 0
        while True:
            if index < len(self._items):
                yield self._items[index]
            else:
                item = next(self._source, None)
                if item is None:
                    return
                self._items.append(item)
                yield item
            index += 1


def _hint(partials):
    return partials.hint if isinstance(partials, LazyPartials) else len(
        partials)


@dataclasses.dataclass
class GroupPlan:
    """A request group's partial candidates, per anchor root; ``single``
    if each partial maps to one provider."""

    suffix: str
    partials: typing.Dict[int, typing.Any]  # anchor -> sequence of Partial
    single: bool = True

    @property
    def suffixed(self):
        return self.suffix != ''


class Ancestry:
    """Ancestors-or-self of providers, each line computed once into
    ``lines`` (which may be kept while the tree shapes do not change)."""

    def __init__(self, parent_of, lines=None):
        self.parent_of = parent_of
        self.lines = {} if lines is None else lines

    def of(self, provider):
        line = self.lines.get(provider)
        if line is None:
            parent = self.parent_of.get(provider)
            line = frozenset((provider,)) | (
                self.of(parent) if parent is not None else frozenset())
            self.lines[provider] = line
        return line

    def in_one_subtree(self, providers):
        """True if one of ``providers`` is an ancestor-or-self of all."""
        if len(providers) < 2:
            return True
        common = frozenset.intersection(*[self.of(p) for p in providers])
        return not common.isdisjoint(providers)

    def joins(self, chosen, slots):
        """``in_one_subtree`` for the providers of the partials chosen at
        ``slots``."""
        return self.in_one_subtree(
            {p for i in slots for p in chosen[i].providers})

    def joining(self, partials, providers):
        """Those single-provider ``partials`` whose provider lies in one
        subtree with ``providers``: it is an ancestor-or-self of them
        all, or lies below the one of them above all the others."""
        common = frozenset.intersection(*[self.of(p) for p in providers])
        tops = common.intersection(providers)
        lines, of = self.lines, self.of
        if not tops:
            return [q for q in partials if q.providers[0] in common]
        (top,) = tops
        return [q for q in partials if q.providers[0] in common
                or top in (lines.get(q.providers[0]) or of(q.providers[0]))]


class Budget:
    """How many more steps one request's search may take: each tree a
    group's partials are found at (``spend`` as the space is built),
    each partial the walks try, each combination ``_combinations``
    forms. ``left`` counts down, and the step that reaches 0 raises
    ``CandidateSearchTooLarge``; a negative ``left`` never reaches 0:
    unbounded. The walk keeps the count in a local variable and writes
    it back before it yields or returns."""

    __slots__ = ('limit', 'left')

    def __init__(self, limit=-1):
        self.limit = limit
        self.left = limit if limit > 0 else -1

    def spend(self, steps):
        self.left -= steps
        if self.limit > 0 and self.left <= 0:
            self.exhausted()

    def exhausted(self):
        raise exception.CandidateSearchTooLarge(limit=self.limit)


@dataclasses.dataclass
class SearchSpace:
    """Everything the search needs, as plain maps of provider ids.

    ``room[(provider, class)]`` is how much one candidate may place
    there: ``min(capacity - used, max_unit)``. ``ancestry`` is needed
    only for ``same_subtree`` constraints (sets of suffixes).
    ``one_provider_per_tree`` is the rule before 1.29 in a cloud with
    nesting: no candidate takes resources from two providers of one tree.
    ``shared_classes`` are the classes more than one group asks for: the
    only ones whose consolidated amounts can exceed a provider's room.
    """

    groups: typing.List[GroupPlan]
    room: typing.Dict[typing.Tuple[int, int], int]
    root_of: typing.Dict[int, int]
    ancestry: typing.Optional[Ancestry] = None
    isolate: bool = False
    same_subtree: typing.List[typing.FrozenSet[str]] = dataclasses.field(
        default_factory=list)
    one_provider_per_tree: bool = False
    shared_classes: typing.FrozenSet[int] = frozenset()
    budget: Budget = dataclasses.field(default_factory=Budget)

    def anchors(self):
        """Roots every group has a partial candidate at, in id order."""
        common = None
        for group in self.groups:
            roots = set(group.partials)
            common = roots if common is None else common & roots
        return sorted(common or ())


# A complete candidate is found as a plain tuple ``(suffixes, partials)``:
# the partial chosen for each group, in the order of ``suffixes`` (tens of
# thousands are made per request, and a tuple costs least).


def _key(found):
    """What makes a found candidate distinct: the amounts it allocates
    and the providers each group maps to."""
    suffixes, partials = found
    return (frozenset(consolidated(partials)),
            frozenset((suffix, frozenset(partial.providers))
                      for suffix, partial in zip(suffixes, partials)))


class _Walk:
    """The mutable state of the depth-first walk at one anchor.

    Each partial fits on its own (the capacity query proved it), so only
    classes several groups ask for need their consolidated load tracked.
    """

    def __init__(self, space):
        self.space = space
        self.load = {}          # (provider, shared class) -> amount placed
        self.isolated = set()   # providers of suffixed groups (isolate)
        self.contributors = {}  # provider -> partials placing something
        self.trees = {}         # root -> contributing providers

    def take(self, group, partial):
        """Apply ``partial``; False (and nothing applied) if it breaks a
        rule given what earlier groups took."""
        space = self.space
        isolating = space.isolate and group.suffixed
        if isolating and partial.providers[0] in self.isolated:
            return False
        shared, load = space.shared_classes, self.load
        if shared:
            for provider, rc, amount in partial.amounts:
                if rc in shared and (load.get((provider, rc), 0) + amount
                                     > space.room[provider, rc]):
                    return False
        if space.one_provider_per_tree and not self._one_per_tree(partial):
            return False
        if isolating:
            self.isolated.add(partial.providers[0])
        self._count(partial, 1)
        return True

    def give_back(self, group, partial):
        """Undo ``take``."""
        if self.space.isolate and group.suffixed:
            self.isolated.discard(partial.providers[0])
        self._count(partial, -1)

    def _one_per_tree(self, partial):
        """Pre-1.29: no tree may contribute two providers."""
        new = {p for p, _, _ in partial.amounts
               if not self.contributors.get(p)}
        new_roots = [self.space.root_of[p] for p in new]
        return (len(set(new_roots)) == len(new_roots)
                and not any(self.trees.get(root) for root in new_roots))

    def _count(self, partial, sign):
        space = self.space
        shared, per_tree = space.shared_classes, space.one_provider_per_tree
        if not (shared or per_tree):
            return
        for provider, rc, amount in partial.amounts:
            if rc in shared:
                key = (provider, rc)
                self.load[key] = self.load.get(key, 0) + sign * amount
            if per_tree:
                before = self.contributors.get(provider, 0)
                self.contributors[provider] = before + sign
                if not before or before + sign == 0:
                    root = space.root_of[provider]
                    self.trees[root] = self.trees.get(root, 0) + sign


def anchor_candidates(space, anchor, plans):
    """Every valid combination at ``anchor``, lazily, as found tuples."""
    if len(space.groups) == 1 and not space.one_provider_per_tree:
        # The capacity test proved each partial fits, and no rule
        # relates a group to itself: every partial is a candidate.
        suffixes = (space.groups[0].suffix,)
        return [(suffixes, (partial,))
                for partial in space.groups[0].partials[anchor]]
    if space.isolate and not _enough_isolated_providers(space, anchor):
        return iter(())
    partials = [group.partials[anchor] for group in space.groups]
    # Fewest choices first: a smaller tree of branches to walk.
    hints = [_hint(choices) for choices in partials]
    order = tuple(sorted(range(len(hints)), key=hints.__getitem__))
    plan = plans.get(order)
    if plan is None:
        plan = plans[order] = _Plan(space, order)
    return _combine(space, [partials[i] for i in order], plan)


class _Plan:
    """The groups in the order the walk places them (``slots``), and how
    each ``same_subtree`` constraint is met once its last slot is set:
    by filtering that slot's partials with the providers chosen before
    (``filtered``: the other slots) when every group of it maps to one
    provider, else by testing (``tested``: all its slots)."""

    def __init__(self, space, order):
        self.slots = [space.groups[i] for i in order]
        self.suffixes = tuple(group.suffix for group in self.slots)
        position = {suffix: i for i, suffix in enumerate(self.suffixes)}
        self.filtered = [[] for _ in order]
        self.tested = [[] for _ in order]
        for suffixes in space.same_subtree:
            slots_of = sorted({position[s] for s in suffixes})
            closing, others = slots_of[-1], slots_of[:-1]
            if not others:
                continue
            if all(self.slots[i].single for i in slots_of):
                self.filtered[closing].append(others)
            else:
                self.tested[closing].append(slots_of)


def _combine(space, choices, plan):
    """The depth-first walk: one partial per slot (of the slot's
    ``choices`` at this anchor), each checked against the ones before it
    as it is placed."""
    slots, tested = plan.slots, plan.tested
    ancestry = space.ancestry
    # Without isolate, shared classes or the pre-1.29 rule, placing a
    # partial changes nothing later groups are checked against.
    walk = (_Walk(space) if space.isolate or space.shared_classes
            or space.one_provider_per_tree else None)
    budget = space.budget
    if walk is None and len(slots) == 2 and not tested[1]:
        # The usual request (compute and one device group) as a plain
        # double loop, where every step makes a candidate.
        suffixes, seconds = plan.suffixes, choices[1]
        filtered = plan.filtered[1]
        for first in choices[0]:
            for second in (_options(plan, ancestry, choices, [first], 1)
                           if filtered else seconds):
                budget.left -= 1
                if not budget.left:
                    budget.exhausted()
                yield suffixes, (first, second)
        return
    last = len(slots) - 1
    chosen = [None] * len(slots)
    pending = [iter(choices[0])]
    left = budget.left
    while pending:
        index = len(pending) - 1
        if chosen[index] is not None:
            if walk is not None:
                walk.give_back(slots[index], chosen[index])
            chosen[index] = None
        partial = next(pending[index], None)
        if partial is None:
            pending.pop()
            continue
        left -= 1
        if not left:
            budget.exhausted()
        if walk is not None and not walk.take(slots[index], partial):
            continue
        chosen[index] = partial
        if tested[index] and not all(ancestry.joins(chosen, slots_of)
                                     for slots_of in tested[index]):
            continue
        if index == last:
            budget.left = left
            yield plan.suffixes, tuple(chosen)
            left = budget.left
            continue
        pending.append(iter(_options(plan, ancestry, choices, chosen,
                                     index + 1)))
    budget.left = left


def _options(plan, ancestry, choices, chosen, index):
    """The partials of slot ``index`` that can follow ``chosen``: those
    meeting the ``same_subtree`` constraints it closes by filtering."""
    options = choices[index]
    for others in plan.filtered[index]:
        options = ancestry.joining(
            options, [chosen[i].providers[0] for i in others])
    return options


def consolidated(partials):
    """The partials' amounts, summed per provider and class."""
    if len(partials) == 1:
        return partials[0].amounts
    amounts = collections.Counter()
    for partial in partials:
        for provider, rc, amount in partial.amounts:
            amounts[provider, rc] += amount
    return tuple((provider, rc, amount)
                 for (provider, rc), amount in amounts.items())


def _enough_isolated_providers(space, anchor):
    """Cheap necessary condition for ``isolate``: the suffixed groups
    together can reach at least as many providers as there are groups
    (spares a hopeless walk through every permutation)."""
    suffixed = [g for g in space.groups if g.suffixed]
    if len(suffixed) < 2 or any(isinstance(g.partials[anchor], LazyPartials)
                                for g in suffixed):
        return True
    reachable = set()
    for group in suffixed:
        reachable.update(p.providers[0] for p in group.partials[anchor])
    return len(reachable) >= len(suffixed)


def generate(space, anchors, round_robin=False, dedupe=True):
    """Distinct candidates over ``anchors`` (in the given order).

    Depth-first takes every candidate of one anchor before the next;
    round-robin takes one from each anchor in turn, so a capped result
    spreads over many trees. One anchor never repeats a candidate, so
    ``dedupe`` is needed only when partials are offered at several
    anchors (sharing providers).
    """
    if (len(space.groups) == 1 and not round_robin
            and not space.one_provider_per_tree):
        # Every partial of a lone group is a candidate (see
        # anchor_candidates), taken here without a stream per anchor.
        group = space.groups[0]
        suffixes = (group.suffix,)
        ordered = ((suffixes, (partial,)) for anchor in anchors
                   for partial in group.partials[anchor])
    else:
        # Lazily: an anchor's walk is set up when the caller gets there.
        plans = {}
        streams = (anchor_candidates(space, anchor, plans)
                   for anchor in anchors)
        ordered = (_round_robin(streams) if round_robin
                   else itertools.chain.from_iterable(streams))
    if not dedupe:
        yield from ordered
        return
    seen = set()
    for found in ordered:
        key = _key(found)
        if key not in seen:
            seen.add(key)
            yield found


def _round_robin(streams):
    streams = collections.deque(iter(s) for s in streams)
    while streams:
        stream = streams.popleft()
        item = next(stream, None)
        if item is not None:
            yield item
            streams.append(stream)
