"""The atomic claim: pick one allocation candidate and write it.

A scheduler that reads candidates and then writes one races every other
scheduler between the two requests. ``claim`` does both for it: it
finds the candidates (``allocation_candidate.find``), orders them by a
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
import logging
import typing

from placement.db import api as db_api
from placement import exception
from placement import metrics
from placement.objects import allocation as alloc_obj
from placement.objects import allocation_candidate as ac_obj

LOG = logging.getLogger(__name__)

PACK = 'pack'
SPREAD = 'spread'
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
    """Write one candidate of ``request`` (allocation_candidate.Request)
    as the allocations of ``consumer`` (``consumer.prepare`` keyword
    arguments), replacing those it had; returns Claimed.

    Raises NoClaimCandidates when the search finds nothing,
    ClaimCandidatesTaken when ``tries`` writes were all refused,
    ConsumerGenerationMismatch/ConsumerGenerationConflict as an
    allocation write does, ResourceClassNotFound/TraitNotFound for
    unknown names in ``request``.
    """
    return write_one(
        ctx, consumer,
        lambda: ordered(candidates(ctx, request, options), strategy), tries)


def write_one(ctx, consumer, search, tries=MAX_TRIES):
    """Write the first Choice ``search()`` offers. A refused write means
    the search was behind a concurrent writer (a request may wait for
    the write lock while many others commit), so the next write follows
    a new search, skipping the choices already refused; at most
    ``tries`` writes. Returns Claimed or raises as ``claim``."""
    refused = set()
    for tried in range(1, tries + 1):
        choice = next((c for c in search() if _key(c) not in refused),
                      None)
        if choice is None:
            raise exception.NoClaimCandidates()
        try:
            view = _write(ctx, consumer, choice.allocations)
        except _CANDIDATE_GONE as exc:
            metrics.allocation_write('capacity_refused')
            LOG.debug('Claim for consumer %s: write %d refused (%s)',
                      consumer['uuid'], tried, exc)
            refused.add(_key(choice))
            continue
        except (exception.ConsumerGenerationConflict,
                exception.ConsumerGenerationMismatch):
            metrics.allocation_write('consumer_generation_conflict')
            raise
        metrics.allocation_write('ok')
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
    return sorted(choices, key=lambda choice: (
        -choice.load if strategy == PACK else choice.load))


def candidates(ctx, request, options):
    """The Choices of ``request``, in the engine's order."""
    return ac_obj.find(ctx, request, options, present=_choices)


def _choices(result):
    """Choices of an ``allocation_candidate.Result`` (called while the
    provider index is locked, as ``find`` requires)."""
    uuid, names = result.uuid, result.class_names
    placed_sets = []
    contributing = set()
    for suffixes, partials in result.candidates:
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
        contributing.update(provider for provider, _rc in placed)
        placed_sets.append((placed, mappings))
    loads = {}
    for summary in result.summaries(contributing):
        for name, capacity, used in summary.resources:
            loads[summary.uuid, name] = (
                used / capacity if capacity > 0 else 1.0)
    choices = []
    for placed, mappings in placed_sets:
        allocations = {}
        ratios = []
        for (provider, rc), amount in placed.items():
            rp_uuid, name = uuid[provider], names[rc]
            allocations.setdefault(rp_uuid, {})[name] = amount
            ratios.append(loads.get((rp_uuid, name), 1.0))
        choices.append(Choice(allocations, mappings,
                              sum(ratios) / len(ratios) if ratios else 0.0))
    return choices


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
