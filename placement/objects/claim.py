"""The atomic claim: pick one allocation candidate and write it.

A scheduler that reads candidates and then writes one races every other
scheduler between the two requests. ``claim`` does both for it: it
finds the candidates (``engine.find``), orders them by a
strategy, and writes the first as the consumer's allocations through
the transaction of every allocation write (``allocation.replace``:
providers locked, capacity and generations checked). When that write
is refused because a concurrent writer took the capacity meanwhile (the
provider index of this process was behind it), it searches again and
writes the best candidate not refused yet, up to ``MAX_TRIES`` writes.
See api-ref/claims.rst.
"""

import collections
import dataclasses
import functools
import heapq
import logging
import typing

from placement.db import api as db_api
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects.candidates import engine as ac_obj

LOG = logging.getLogger(__name__)

PACK = 'pack'
SPREAD = 'spread'
#: The strategies, in the order the API documents them (the request
#: schema's enum comes from here).
STRATEGIES = (PACK, SPREAD)
DEFAULT_STRATEGY = PACK

#: Writes at most per claim before giving up.
MAX_TRIES = 10

#: Write refusals that mean "this candidate no longer fits": a
#: concurrent writer took capacity, changed or removed an inventory, a
#: provider or a class after the search saw it.
_CANDIDATE_GONE = (exception.InvalidAllocation,
                   exception.ResourceProviderNotFound,
                   exception.ResourceClassNotFound,
                   exception.ConcurrentUpdateDetected)


@dataclasses.dataclass
class Choice:
    """One candidate as plain values: ``allocations`` {provider uuid:
    {class name: amount}}, ``mappings`` {suffix: [provider uuid]} and
    ``load``, the mean used/capacity ratio of the (provider, class)
    pairs it takes from, before the claim."""

    allocations: typing.Dict[str, typing.Dict[str, int]]
    mappings: typing.Dict[str, typing.List[str]]
    load: float


@dataclasses.dataclass
class Claimed:
    """What a successful claim wrote: the consumer as GET
    /allocations/{consumer} reads it right after the write, the chosen
    candidate's mappings, and how many writes it took (1 unless
    concurrent writers took the first candidates chosen)."""

    view: alloc_obj.ConsumerView
    mappings: typing.Dict[str, typing.List[str]]
    tries: int


def claim(ctx, consumer, request, options, strategy=DEFAULT_STRATEGY,
          tries=MAX_TRIES):
    """Write one candidate of ``request`` (engine.Request)
    as the allocations of ``consumer`` (``consumer.prepare`` keyword
    arguments), replacing those it had; returns Claimed.

    Raises NoClaimCandidates when the search finds nothing,
    ClaimCandidatesTaken when ``tries`` writes were all refused,
    ConsumerGenerationMismatch/ConsumerGenerationConflict as an
    allocation write does, ResourceClassNotFound/TraitNotFound for
    unknown names in ``request``.
    """
    if strategy not in STRATEGIES:
        raise ValueError(strategy)
    return write_one(
        ctx, consumer,
        lambda refused: best(ctx, request, options, strategy, refused),
        tries)


def write_one(ctx, consumer, search, tries=MAX_TRIES):
    """Write the first Choice ``search(refused)`` offers whose ``_key``
    is not in ``refused`` (the choices already refused; ``search`` may
    leave them out). A refused write means the search was behind a
    concurrent writer (a request may wait for the write lock while many
    others commit), so the next write follows a new search; at most
    ``tries`` writes. Returns Claimed or raises as ``claim``."""
    refused = set()
    for tried in range(1, tries + 1):
        choice = next((c for c in search(frozenset(refused))
                       if _key(c) not in refused), None)
        if choice is None:
            raise exception.NoClaimCandidates()
        try:
            with alloc_obj.counted_write(refused=_CANDIDATE_GONE):
                view = _write(ctx, consumer, choice.allocations)
        except _CANDIDATE_GONE as exc:
            LOG.debug('Claim for consumer %s: write %d refused (%s)',
                      consumer['uuid'], tried, exc)
            refused.add(_key(choice))
            continue
        return Claimed(view, choice.mappings, tried)
    raise exception.ClaimCandidatesTaken(tried=tries)


def _key(choice):
    """What a choice allocates, comparable between searches."""
    return frozenset((uuid, frozenset(resources.items()))
                     for uuid, resources in choice.allocations.items())


def ordered(choices, strategy):
    """``choices`` by ``strategy``: ``pack`` the most loaded first,
    ``spread`` the least loaded first; equal loads keep the engine's
    order."""
    if strategy not in STRATEGIES:
        raise ValueError(strategy)
    return sorted(choices, key=lambda choice: _rank(choice.load, strategy))


def _rank(load, strategy):
    return -load if strategy == PACK else load


def candidates(ctx, request, options):
    """The Choices of ``request``, in the engine's order."""
    return ac_obj.find(ctx, request, options, present=_choices)


def best(ctx, request, options, strategy, refused=frozenset()):
    """[the first Choice of ``request`` in the order of ``strategy``
    (as ``ordered`` puts them) whose ``_key`` is not in ``refused``], or
    [] if there is none."""
    return ac_obj.find(ctx, request, options, present=functools.partial(
        _best, strategy=strategy, refused=refused))


def _best(result, strategy, refused):
    """``best`` of an ``engine.Result``: candidates are
    ranked by their load alone (a heap over (rank, engine position)),
    and only those popped become Choices. A claim writes one candidate
    of up to thousands, and building a Choice costs far more than its
    load."""
    placed = [_placed_pairs(partials)
              for _suffixes, partials in result.candidates]
    ratio = _ratios(result, placed)
    heap = [(_rank(_mean(ratio, pairs), strategy), position)
            for position, pairs in enumerate(placed)]
    heapq.heapify(heap)
    while heap:
        _rank_, position = heapq.heappop(heap)
        choice = _choice(result, result.candidates[position], ratio)
        if _key(choice) not in refused:
            return [choice]
    return []


def _ratios(result, placed):
    """{(provider id, class id): used/capacity before the claim} of the
    pairs in ``placed`` (lists of pairs), from the providers' summaries;
    1.0 where the provider has no such inventory or none to give."""
    loads = {}
    for summary in result.summaries({provider for pairs in placed
                                     for provider, _rc in pairs}):
        for name, capacity, used in summary.resources:
            loads[summary.uuid, name] = (
                used / capacity if capacity > 0 else 1.0)
    uuid, names = result.uuid, result.class_names
    return {pair: loads.get((uuid[pair[0]], names[pair[1]]), 1.0)
            for pair in {pair for pairs in placed for pair in pairs}}


def _mean(ratio, pairs):
    """The mean ratio of ``pairs``, summed in their order (0.0 for
    none), as a Choice's ``load``."""
    if not pairs:
        return 0.0
    return sum(map(ratio.__getitem__, pairs)) / len(pairs)


def _placed_pairs(partials):
    """The (provider, class) pairs ``partials`` place amounts on, in the
    order they first appear."""
    pairs = {}
    for partial in partials:
        if partial.template is not None:
            provider = partial.providers[0]
            for rc, _amount in partial.template:
                pairs[provider, rc] = None
        else:
            for provider, rc, _amount in partial.amounts:
                pairs[provider, rc] = None
    return list(pairs)


def _choice(result, candidate, ratio):
    """The Choice of one ``(suffixes, partials)`` candidate."""
    uuid, names = result.uuid, result.class_names
    suffixes, partials = candidate
    placed = collections.Counter()
    mappings = {}
    for suffix, partial in zip(suffixes, partials):
        mappings[suffix] = [uuid[p] for p in partial.providers]
        if partial.template is not None:
            provider = partial.providers[0]
            for rc, amount in partial.template:
                placed[provider, rc] += amount
        else:
            for provider, rc, amount in partial.amounts:
                placed[provider, rc] += amount
    allocations = {}
    for (provider, rc), amount in placed.items():
        allocations.setdefault(uuid[provider], {})[names[rc]] = amount
    return Choice(allocations, mappings, _mean(ratio, list(placed)))


def _choices(result):
    """Choices of an ``engine.Result`` (called while the
    provider index is locked, as ``find`` requires), in its order."""
    candidates = result.candidates
    ratio = _ratios(result, [_placed_pairs(partials)
                             for _suffixes, partials in candidates])
    return [_choice(result, candidate, ratio) for candidate in candidates]


@db_api.writer
def _write(ctx, consumer, allocations):
    """Replace the consumer's allocations with ``allocations`` in one
    transaction, and read them back in it. Unlike PUT /allocations, an
    unknown provider rolls the consumer record back too: the claim goes
    on with the next candidate, which must see the consumer as the
    client described it."""
    writes = alloc_obj.prepare(
        ctx, [alloc_obj.ConsumerRequest(consumer, allocations)])
    alloc_obj.replace(ctx, writes,
                      alloc_obj.provider_ids(ctx, list(allocations)))
    return alloc_obj.get_by_consumer(ctx, consumer['uuid'])
