"""The set arithmetic of provider listing filters (no database)."""

import random
import types

import pytest

from placement.objects import provider_listing


@pytest.mark.parametrize('seed', range(20))
def test_filtering_among_some_providers_equals_intersecting_after(seed):
    """``_every`` narrowed to ``among`` (what a ``member_of`` filter after
    a ``required`` one does) finds what filtering every provider and
    intersecting with ``among`` finds, and leaves ``among`` as it was."""
    rng = random.Random(seed)
    providers = set(range(1, 60))
    index = types.SimpleNamespace(uuid=dict.fromkeys(providers))
    holders = {key: set(rng.sample(sorted(providers), rng.randrange(40)))
               for key in range(6)}
    holders = {key: members for key, members in holders.items() if members}
    terms = [set(rng.sample(range(8), rng.randrange(1, 4)))
             for _ in range(rng.randrange(3))]
    forbidden = set(rng.sample(range(8), rng.randrange(3)))
    among = set(rng.sample(sorted(providers), rng.randrange(30)))
    kept = set(among)
    narrowed = provider_listing._every(index, terms, forbidden, holders, among)
    assert narrowed == among & provider_listing._every(index, terms, forbidden,
                                             holders)
    assert among == kept
    assert narrowed is not among
