"""The allocation-candidates engine (spec 10) behind one interface.

``find(ctx, request, options)`` takes plain request groups and returns
candidates and provider summaries as plain values; it knows nothing of
HTTP or microversions beyond the flags ``Request`` carries.

It works in three steps: look the names up (in the order the reference
reports unknown ones), fetch per group the providers that qualify with
one set-based query each (``candidate_data``), and let
``candidate_search`` combine them lazily up to the cap. Summaries are
then built for the trees of the returned candidates only.
"""

import collections
import dataclasses
import itertools
import random
import typing

from placement.db import api as db_api
from placement.objects import aggregate as aggregate_obj
from placement.objects import candidate_data as data
from placement.objects import candidate_search as search
from placement.objects import resource_class as rc_obj
from placement.objects import trait as trait_obj


# -- the interface ------------------------------------------------------------

@dataclasses.dataclass
class RequestGroup:
    """One request group: ``suffix`` '' is the unsuffixed group.

    ``required`` is a list of trait-name sets (a provider needs one trait
    of each); ``member_of`` a list of aggregate-uuid sets likewise.
    ``in_tree`` is a provider uuid naming a whole tree.
    """

    suffix: str = ''
    resources: typing.Dict[str, int] = dataclasses.field(
        default_factory=dict)
    required: typing.List[typing.FrozenSet[str]] = dataclasses.field(
        default_factory=list)
    forbidden: typing.FrozenSet[str] = frozenset()
    member_of: typing.List[typing.FrozenSet[str]] = dataclasses.field(
        default_factory=list)
    forbidden_aggregates: typing.FrozenSet[str] = frozenset()
    in_tree: typing.Optional[str] = None

    def trait_names(self):
        """Every trait named, required first, in the order given."""
        names = [name for term in self.required for name in sorted(term)]
        names += sorted(self.forbidden)
        return list(dict.fromkeys(names))


@dataclasses.dataclass
class Request:
    """A whole query. ``nested_aware`` is false below microversion 1.29
    (spec 10 §8.2); ``same_subtree`` holds one set of suffixes per
    occurrence; ``root_required``/``root_forbidden`` are trait names."""

    groups: typing.List[RequestGroup]
    isolate: bool = False
    root_required: typing.Tuple[str, ...] = ()
    root_forbidden: typing.Tuple[str, ...] = ()
    same_subtree: typing.List[typing.FrozenSet[str]] = dataclasses.field(
        default_factory=list)
    limit: typing.Optional[int] = None
    nested_aware: bool = True


@dataclasses.dataclass
class Options:
    """Deployment settings (``[placement]`` options of spec 12)."""

    max_candidates: int = -1
    randomize: bool = False
    breadth_first: bool = False


@dataclasses.dataclass
class Candidate:
    """``allocations``: {provider uuid: {class: amount}};
    ``mappings``: {suffix: [provider uuid, ...]}."""

    allocations: typing.Dict[str, typing.Dict[str, int]]
    mappings: typing.Dict[str, typing.List[str]]


@dataclasses.dataclass
class ProviderSummary:
    """``resources``: {class: (capacity, used)} for every inventory."""

    uuid: str
    parent_provider_uuid: typing.Optional[str]
    root_provider_uuid: str
    resources: typing.Dict[str, typing.Tuple[int, int]]
    traits: typing.List[str]


@dataclasses.dataclass
class Result:
    candidates: typing.List[Candidate]
    summaries: typing.List[ProviderSummary]


EMPTY = Result([], [])


@db_api.reader
def find(ctx, request, options=Options(), rng=random):
    """Candidates for ``request``; raises ResourceClassNotFound or
    TraitNotFound for unknown names."""
    root_traits = trait_obj.ids_by_name(
        ctx, request.root_required + request.root_forbidden)
    resolved = []
    for group in request.groups:
        ids = _resolve(ctx, group)
        if ids is None:
            return EMPTY
        resolved.append(ids)
    builder = _SpaceBuilder(ctx, request)
    for ids in resolved:
        if not builder.add(ids):
            return EMPTY
    space = builder.space
    requested = collections.Counter(rc for ids in resolved
                                    for rc in ids.amounts)
    space.shared_classes = frozenset(rc for rc, groups in requested.items()
                                     if groups > 1)
    anchors = _anchors(ctx, space, request, root_traits)
    if request.same_subtree:
        space.ancestry = search.Ancestry(data.tree_members(ctx, anchors))
    if options.randomize:
        anchors = list(anchors)
        rng.shuffle(anchors)
    round_robin = options.randomize or options.breadth_first
    found = list(itertools.islice(
        search.generate(space, anchors, round_robin=round_robin),
        _cap(request.limit, options.max_candidates)))
    if options.randomize:
        rng.shuffle(found)
    class_names = {rc: name for ids in resolved
                   for name, rc in ids.classes.items()}
    return _result(ctx, found, space, class_names)


# -- name lookups -------------------------------------------------------------

@dataclasses.dataclass
class _GroupIds:
    """A group with its names resolved to ids."""

    group: RequestGroup
    classes: typing.Dict[str, int]
    amounts: typing.Dict[int, int]
    required: typing.List[typing.Set[int]]
    forbidden: typing.Set[int]
    member_of: typing.List[typing.Set[int]]
    forbidden_aggregates: typing.Set[int]


def _resolve(ctx, group):
    """Ids for ``group``'s names, in the reference's order: classes, then
    aggregates (a positive term of unknown aggregates empties the whole
    result: None), then traits."""
    classes = rc_obj.ids_by_name(ctx, list(group.resources))
    uuids = set().union(*group.member_of) | set(group.forbidden_aggregates)
    aggregates = aggregate_obj.ids_by_uuid(ctx, uuids) if uuids else {}
    member_of = [{aggregates[u] for u in term if u in aggregates}
                 for term in group.member_of]
    if not all(member_of):
        return None
    traits = trait_obj.ids_by_name(ctx, group.trait_names())
    return _GroupIds(
        group=group, classes=classes,
        amounts={classes[name]: amount
                 for name, amount in group.resources.items()},
        required=[{traits[name] for name in term} for term in group.required],
        forbidden={traits[name] for name in group.forbidden},
        member_of=member_of,
        forbidden_aggregates={aggregates[u] for u in
                              group.forbidden_aggregates if u in aggregates})


# -- per-group partial candidates ---------------------------------------------

class _SpaceBuilder:
    """Turns each resolved group into a GroupPlan of the search space."""

    def __init__(self, ctx, request):
        self.ctx = ctx
        self._nested = data.any_nested(ctx)
        self._sharing = None
        self._associated = {}
        self.space = search.SearchSpace(
            groups=[], room={}, root_of={}, isolate=request.isolate,
            same_subtree=list(request.same_subtree),
            one_provider_per_tree=not request.nested_aware and self._nested)

    def add(self, ids):
        """Add ``ids``'s plan; False if the group matches nothing."""
        group = ids.group
        root = None
        if group.in_tree is not None and ids.amounts:
            root = data.root_of_uuid(self.ctx, group.in_tree)
            if root is None:
                return False
        if not ids.amounts:
            partials = self._resourceless(ids)
        elif group.suffix or self._flat():
            # Spec 10 §3.3: where every tree is a single provider and
            # nothing is shared, the unsuffixed group is one provider too.
            partials = self._single_provider(ids, root)
        else:
            partials = self._spreadable(ids, root)
        if not partials:
            return False
        self.space.groups.append(search.GroupPlan(group.suffix, partials))
        return True

    def _capacity(self, ids, where):
        rows = data.capacity(self.ctx, ids.amounts, where)
        for provider, root, rc, room in rows:
            self.space.room[provider, rc] = room
            self.space.root_of[provider] = root
        return rows

    def _flat(self):
        """No provider has a parent and none is shared."""
        return not self._nested and not self._sharing_ids()

    def _sharing_ids(self):
        if self._sharing is None:
            self._sharing = data.sharing_providers(self.ctx)
        return self._sharing

    def _anchors_of(self, provider, root):
        """The anchors a provider's partials are copied to."""
        if provider not in self._sharing_ids():
            return {root}
        if provider not in self._associated:
            self._associated.update(
                data.associated_roots(self.ctx, self._sharing))
            for sharing in self._sharing:
                self._associated.setdefault(sharing, set())
        return {root} | self._associated[provider]

    def _single_provider(self, ids, tree_root):
        # Aggregates first: usually the more selective filter, and the
        # one SQLite then drives the query from.
        where = (data.in_aggregates(ids.member_of, ids.forbidden_aggregates)
                 + data.has_traits(ids.required, ids.forbidden))
        if tree_root is not None:
            where += data.in_tree(tree_root)
        fitting = collections.defaultdict(set)
        roots = {}
        for provider, root, rc, _ in self._capacity(ids, where):
            fitting[provider].add(rc)
            roots[provider] = root
        partials = collections.defaultdict(list)
        for provider in sorted(fitting):
            if len(fitting[provider]) != len(ids.amounts):
                continue
            partial = search.Partial(
                (provider,), tuple((provider, rc, amount)
                                   for rc, amount in ids.amounts.items()))
            for anchor in self._anchors_of(provider, roots[provider]):
                partials[anchor].append(partial)
        return partials

    def _resourceless(self, ids):
        """Spec 10 §3.2: traits and aggregates only; needs a positive
        term to match anything; ``in_tree`` is ignored."""
        if not ids.required and not ids.member_of:
            return {}
        # Aggregates first: usually the more selective filter, and the
        # one SQLite then drives the query from.
        where = (data.in_aggregates(ids.member_of, ids.forbidden_aggregates)
                 + data.has_traits(ids.required, ids.forbidden))
        partials = collections.defaultdict(list)
        for provider, root in sorted(data.providers(self.ctx, where)):
            self.space.root_of[provider] = root
            for anchor in self._anchors_of(provider, root):
                partials[anchor].append(search.Partial((provider,)))
        return partials

    def _spreadable(self, ids, tree_root):
        """Spec 10 §3.3: each class from any provider of the anchor's tree
        or an associated sharing provider."""
        where = (data.has_traits((), ids.forbidden)
                 + data.in_aggregates(ids.member_of, (), or_root=True)
                 + self._required_in_tree(ids.required))
        if tree_root is not None:
            where += data.in_tree(tree_root)
        rows = self._capacity(ids, where)
        aggregates = self._aggregates(ids, rows)
        pairs = collections.defaultdict(lambda: collections.defaultdict(set))
        for provider, root, rc, _ in rows:
            anchors = {root}
            if tree_root is None and (
                    not ids.member_of
                    or _meets(aggregates[provider], ids.member_of)):
                anchors = self._anchors_of(provider, root)
            for anchor in anchors:
                if _pair_allowed(ids, aggregates, provider, anchor):
                    pairs[anchor][rc].add(provider)
        traits = collections.defaultdict(set)
        if ids.required:
            traits = data.traits_of(
                self.ctx, {p for p, _, _, _ in rows}, set().union(
                    *ids.required))
        return {anchor: self._combinations(ids, per_class, traits)
                for anchor, per_class in pairs.items()
                if len(per_class) == len(ids.amounts)}

    def _required_in_tree(self, terms):
        """SQL prefilter for required traits of the unsuffixed group: the
        provider's tree must hold each term, unless a sharing provider
        carries it (then any associated tree may qualify)."""
        if not terms:
            return []
        sharing = self._sharing_ids()
        carried = set().union(*data.traits_of(
            self.ctx, sharing, set().union(*terms)).values())
        return data.tree_has_traits(
            [term for term in terms if not term & carried], sharing)

    def _aggregates(self, ids, rows):
        """Aggregates (among those named) of the providers and roots."""
        named = set().union(*ids.member_of) | ids.forbidden_aggregates
        if not named:
            return collections.defaultdict(set)
        involved = {p for p, _, _, _ in rows} | {r for _, r, _, _ in rows}
        for provider, _, _, _ in rows:
            involved |= self._anchors_of(provider, self.space.root_of[
                provider])
        return data.aggregates_of(self.ctx, involved, named)

    @staticmethod
    def _combinations(ids, per_class, traits):
        classes = sorted(per_class)
        choices = [sorted(per_class[rc]) for rc in classes]
        hint = 1
        for providers in choices:
            hint *= len(providers)

        def generate():
            for chosen in itertools.product(*choices):
                if ids.required:
                    have = set().union(*(traits[p] for p in chosen))
                    if not all(term & have for term in ids.required):
                        continue
                yield search.Partial(
                    tuple(dict.fromkeys(chosen)),
                    tuple((provider, rc, ids.amounts[rc])
                          for provider, rc in zip(chosen, classes)))
        return search.LazyPartials(generate(), hint)


def _meets(memberships, terms):
    return all(term & memberships for term in terms)


def _pair_allowed(ids, aggregates, provider, anchor):
    """The unsuffixed group's aggregate rules for one (provider, anchor)
    pair: all positive terms met by the provider or by the anchor (not
    a mix); neither in a forbidden aggregate."""
    if ids.member_of and not (_meets(aggregates[provider], ids.member_of)
                              or _meets(aggregates[anchor], ids.member_of)):
        return False
    return not (ids.forbidden_aggregates
                & (aggregates[provider] | aggregates[anchor]))


# -- anchors, cap and the result ----------------------------------------------

def _anchors(ctx, space, request, root_traits):
    """Anchors common to all groups that satisfy ``root_required``."""
    anchors = space.anchors()
    if not root_traits:
        return anchors
    required = {root_traits[name] for name in request.root_required}
    forbidden = {root_traits[name] for name in request.root_forbidden}
    have = data.traits_of(ctx, anchors, required | forbidden)
    return [anchor for anchor in anchors
            if required <= have[anchor] and not forbidden & have[anchor]]


def _cap(limit, max_candidates):
    """How many candidates to generate: ``max_allocation_candidates``
    (-1 unlimited, 0 behaves like 1) and ``limit``, whichever is lower."""
    caps = [max(max_candidates, 1)] if max_candidates != -1 else []
    if limit is not None:
        caps.append(limit)
    return min(caps) if caps else None


def _result(ctx, found, space, class_names):
    if not found:
        return EMPTY
    contributing = {p for f in found for p, _ in f.amounts}
    if space.one_provider_per_tree:
        described, by_root = contributing, False
    else:
        described = {space.root_of[p] for p in contributing}
        by_root = True
    names = data.identities(ctx, described, by_root)
    summarised = sorted(names)
    mapped = {p for f in found for ps in f.mappings.values() for p in ps}
    names.update(data.identities(ctx, mapped - set(names)))
    candidates = []
    for item in found:
        allocations = collections.defaultdict(dict)
        for (provider, rc), amount in item.amounts.items():
            allocations[names[provider][0]][class_names[rc]] = amount
        candidates.append(Candidate(
            dict(allocations),
            {suffix: [names[p][0] for p in providers]
             for suffix, providers in item.mappings.items()}))
    inventories = data.inventories_of(ctx, described, by_root)
    traits = data.trait_names_of(ctx, described, by_root)
    summaries = [ProviderSummary(names[p][0], names[p][1], names[p][2],
                                 inventories.get(p, {}), traits.get(p, []))
                 for p in summarised]
    return Result(candidates, summaries)
