"""Combining request groups into allocation candidates (spec 10 §4-§7).

Pure Python over plain values, no database: ``candidate_data`` fetches
what is needed, this module searches. Candidates are generated lazily,
one anchor (tree root) at a time, by a depth-first walk that assigns one
partial candidate per group and abandons a branch as soon as it breaks a
rule (consolidated capacity, ``group_policy=isolate``, ``same_subtree``,
the pre-1.29 one-provider-per-tree rule). The caller stops pulling when
it has enough, so the cartesian product of the groups is never built.
"""

import collections
import dataclasses
import itertools
import typing


@dataclasses.dataclass(frozen=True)
class Partial:
    """One way to satisfy one group at one anchor.

    ``providers`` are the providers the group maps to (distinct);
    ``amounts`` are ``(provider, class, amount)`` triples it consumes
    (empty for a resourceless group).
    """

    providers: typing.Tuple[int, ...]
    amounts: typing.Tuple[typing.Tuple[int, int, int], ...] = ()


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
    """A request group's partial candidates, per anchor root."""

    suffix: str
    partials: typing.Dict[int, typing.Any]  # anchor -> sequence of Partial

    @property
    def suffixed(self):
        return self.suffix != ''


class Ancestry:
    """Ancestors-or-self of providers, each line computed once."""

    def __init__(self, parent_of):
        self.parent_of = parent_of
        self.lines = {}

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
        if len(providers) == 2:
            first, second = providers
            return first in self.of(second) or second in self.of(first)
        common = frozenset.intersection(*[self.of(p) for p in providers])
        return not common.isdisjoint(providers)


@dataclasses.dataclass
class SearchSpace:
    """Everything the search needs, as plain maps of provider ids.

    ``room[(provider, class)]`` is how much one candidate may place
    there: ``min(capacity - used, max_unit)``. ``ancestry`` is needed
    only for ``same_subtree`` constraints (sets of suffixes).
    ``one_provider_per_tree`` is the pre-1.29 rule of spec 10 §8.2.
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

    def anchors(self):
        """Roots every group has a partial candidate at, in id order."""
        common = None
        for group in self.groups:
            roots = set(group.partials)
            common = roots if common is None else common & roots
        return sorted(common or ())


@dataclasses.dataclass(frozen=True)
class Found:
    """A complete candidate: consolidated amounts and group mappings."""

    amounts: typing.Dict[typing.Tuple[int, int], int]
    mappings: typing.Dict[str, typing.Tuple[int, ...]]

    def key(self):
        return (frozenset(self.amounts.items()),
                frozenset((suffix, frozenset(providers))
                          for suffix, providers in self.mappings.items()))


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


def _anchor_candidates(space, anchor):
    """Every valid combination at ``anchor``, lazily, as Found."""
    if len(space.groups) == 1 and not space.one_provider_per_tree:
        # The capacity query proved each partial fits, and no rule
        # relates a group to itself: every partial is a candidate.
        group = space.groups[0]
        return (Found({(p, rc): amount for p, rc, amount in partial.amounts},
                      {group.suffix: partial.providers})
                for partial in group.partials[anchor])
    slots = sorted(space.groups, key=lambda g: _hint(g.partials[anchor]))
    position = {group.suffix: index for index, group in enumerate(slots)}
    # Each same_subtree constraint is checked once its last group is set.
    checks = collections.defaultdict(list)
    for suffixes in space.same_subtree:
        slots_of = [position[s] for s in suffixes]
        checks[max(slots_of)].append(slots_of)
    chosen = [None] * len(slots)
    walk = _Walk(space)

    def subtree_ok(index):
        for slots_of in checks.get(index, ()):
            providers = {p for i in slots_of for p in chosen[i].providers}
            if not space.ancestry.in_one_subtree(providers):
                return False
        return True

    def descend(index):
        if index == len(slots):
            amounts = collections.Counter()
            for partial in chosen:
                for provider, rc, amount in partial.amounts:
                    amounts[provider, rc] += amount
            yield Found(dict(amounts),
                        {group.suffix: chosen[i].providers
                         for i, group in enumerate(slots)})
            return
        group = slots[index]
        for partial in group.partials[anchor]:
            if not walk.take(group, partial):
                continue
            chosen[index] = partial
            if subtree_ok(index):
                yield from descend(index + 1)
            walk.give_back(group, partial)

    if space.isolate and not _enough_isolated_providers(space, anchor):
        return iter(())
    return descend(0)


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


def generate(space, anchors, round_robin=False):
    """Distinct candidates over ``anchors`` (in the given order).

    Depth-first takes every candidate of one anchor before the next;
    round-robin takes one from each anchor in turn, so a capped result
    spreads over many trees.
    """
    seen = set()
    # Lazily: an anchor's walk is only set up when the caller gets there.
    streams = (_anchor_candidates(space, anchor) for anchor in anchors)
    if round_robin:
        ordered = _round_robin(streams)
    else:
        ordered = itertools.chain.from_iterable(streams)
    for found in ordered:
        key = found.key()
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
