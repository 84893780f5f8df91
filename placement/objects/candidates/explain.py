"""Why a candidates query finds what it finds: the provider funnel.

``explain(ctx, request)`` reads the same provider index as
``engine.find`` and, per request group, counts the
providers left after each condition of the group in turn; then it runs
the real search (capped at ``CANDIDATE_CAP``) to count the trees every
group fits in, those passing ``root_required`` and the candidates
surviving the combination rules (isolate, same_subtree, capacity shared
between groups). The response shape and the counting rules are in
api-ref/allocation-candidates-explain.rst.
"""

import dataclasses
import itertools
import typing

from placement.db import api as db_api
from placement.objects.candidates import engine as ac
from placement.objects.candidates import provider_index
from placement.objects.candidates import search as search

#: Candidates counted at most; more are reported as "at least".
CANDIDATE_CAP = 1000


@dataclasses.dataclass
class Step:
    """One condition and how many remain after it. ``kind`` is one of
    providers, inventory, capacity, required, forbidden, member_of,
    forbidden_member_of, in_tree (group steps) or trees, root_required,
    candidates (request-wide steps); ``subject`` what it names
    (``CUSTOM_GPU:1``, a trait, ``in:A,B``, a uuid); ``previous`` the
    count it started from."""

    kind: str
    subject: str
    count: int
    previous: typing.Optional[int] = None


@dataclasses.dataclass
class GroupFunnel:
    suffix: str
    resources: typing.Dict[str, int]
    steps: typing.List[Step]


@dataclasses.dataclass
class Explanation:
    """The funnels, the request-wide steps and the first step that left
    nothing (None when candidates exist); ``group`` names the group of
    that step (None for a request-wide step). ``at_least`` is true when
    the candidate count stopped at the cap."""

    groups: typing.List[GroupFunnel]
    steps: typing.List[Step]
    at_least: bool
    emptied_by: typing.Optional[Step] = None
    group: typing.Optional[GroupFunnel] = None


@db_api.reader
def explain(ctx, request, max_search_steps=-1):
    """The Explanation of ``request``; raises ResourceClassNotFound or
    TraitNotFound for unknown names, and CandidateSearchTooLarge past
    ``max_search_steps``, as ``find`` does."""
    index = provider_index.of(ctx.db)
    with index.lock:
        index.refresh(ctx.conn)
        return _explain(ctx, index, request, max_search_steps)


def _explain(ctx, index, request, max_search_steps=-1):
    names = ac._Names(ctx, index, request)
    root_required = names.trait_ids(request.root_required)
    root_forbidden = names.trait_ids(request.root_forbidden)
    resolved = []
    for group in request.groups:
        # As find does: names after a group that matches nothing (an
        # unknown aggregate) are not checked.
        resolved.append(names.resolve(group))
        if resolved[-1] is None:
            break
    funnels = [_funnel(index, names, group) for group in request.groups]
    steps, at_least = _combine(index, request, names, resolved, funnels,
                               root_required, root_forbidden,
                               search.Budget(max_search_steps))
    result = Explanation(funnels, steps, at_least)
    if steps[-1].count:
        return result
    for funnel in funnels:
        for step in funnel.steps:
            if step.count == 0:
                result.emptied_by, result.group = step, funnel
                return result
    result.emptied_by = next(step for step in steps if step.count == 0)
    return result


def _funnel(index, names, group):
    """The group's provider steps (see the api-ref page for what each
    counts). Steps of a suffixed group are exact; those of the
    unsuffixed group, whose classes, traits and aggregates may come
    from several providers of a tree, never count too few, so a 0 is
    always true."""
    steps = []
    fitting = []
    for name, amount in group.resources.items():
        rc = names.class_id(name)
        holders = index.with_class.get(rc, ac._NOTHING)
        steps.append(Step('inventory', name, len(holders)))
        fit = set(index.fitting(sorted(holders), [(rc, amount)]))
        steps.append(Step('capacity', '%s:%d' % (name, amount), len(fit),
                          len(holders)))
        fitting.append(fit)
    spread = not group.suffix
    if not fitting:
        pool = set(index.root)
        steps.append(Step('providers', '', len(pool)))
    elif spread:
        pool = set().union(*fitting)
    else:
        pool = ac._intersection(fitting)
        if len(fitting) > 1:
            steps.append(Step('one_provider', ','.join(
                '%s:%d' % item for item in group.resources.items()),
                len(pool), len(fitting[-1])))
    for term in group.required:
        holders = index.union(index.with_trait, names.known_trait_ids(term))
        # Unsuffixed: the trait may sit on another contributing provider.
        pool = _keep(steps, pool, 'required', _term(term), holders,
                     narrow=not spread)
    for name in sorted(group.forbidden):
        pool = _drop(steps, pool, 'forbidden', name,
                     index.with_trait.get(names.trait_id(name), ac._NOTHING))
    for term in group.member_of:
        pool = _keep(steps, pool, 'member_of', _term(term),
                     _members(index, names, term, spread))
    for uuid in sorted(group.forbidden_aggregates):
        pool = _drop(steps, pool, 'forbidden_member_of', uuid,
                     _members(index, names, (uuid,), spread))
    if group.in_tree is not None:
        provider = index.by_uuid.get(group.in_tree)
        tree = (ac._NOTHING if provider is None
                else index.members.get(index.root[provider], ac._NOTHING))
        pool = _keep(steps, pool, 'in_tree', group.in_tree, tree)
    return GroupFunnel(group.suffix, dict(group.resources), steps)


def _members(index, names, term, spread):
    """Providers in an aggregate of ``term``; for the unsuffixed group
    also every provider of a tree whose root is in one."""
    members = index.union(index.in_aggregate, names.aggregate_ids(term))
    if not spread:
        return members
    return set(members) | index.trees(
        p for p in members if index.root[p] == p)


def _term(term):
    return next(iter(term)) if len(term) == 1 else 'in:' + ','.join(
        sorted(term))


def _keep(steps, pool, kind, subject, allowed, narrow=True):
    """Count the providers of ``pool`` in ``allowed``; carry them on
    (or the whole pool, unless ``narrow``)."""
    kept = pool & allowed
    steps.append(Step(kind, subject, len(kept), len(pool)))
    return kept if narrow else pool


def _drop(steps, pool, kind, subject, excluded):
    kept = pool - excluded
    steps.append(Step(kind, subject, len(kept), len(pool)))
    return kept


def _combine(index, request, names, resolved, funnels, root_required,
             root_forbidden, budget):
    """Each group's ``trees`` step and the request-wide steps, from the
    real search space."""
    builder = ac._SpaceBuilder(index, request, names.sharing(),
                               ac._shared_classes(
                                   [ids for ids in resolved if ids]),
                               budget=budget)
    complete = len(resolved) == len(request.groups)
    for ids, funnel in zip(resolved, funnels):
        before = funnel.steps[-1].count
        if ids is not None and builder.add(ids):
            trees = len(builder.space.groups[-1].partials)
        else:
            trees, complete = 0, False
        funnel.steps.append(Step('trees', '', trees, before))
    anchors = builder.space.anchors() if complete else []
    steps = [Step('trees', '', len(anchors))]
    if request.root_required or request.root_forbidden:
        kept = ac._anchors(index, builder.space, root_required,
                           root_forbidden) if anchors else []
        steps.append(Step('root_required', ','.join(
            list(request.root_required)
            + ['!' + name for name in request.root_forbidden]),
            len(kept), len(anchors)))
        anchors = kept
    if request.same_subtree and anchors:
        builder.space.ancestry = search.Ancestry(index.parent, index.lines)
    cap = CANDIDATE_CAP if request.limit is None else min(
        CANDIDATE_CAP, request.limit)
    found = sum(1 for _ in itertools.islice(
        search.generate(builder.space, anchors, dedupe=builder.shares),
        cap)) if anchors else 0
    steps.append(Step('candidates', '', found, len(anchors)))
    return steps, found == cap
