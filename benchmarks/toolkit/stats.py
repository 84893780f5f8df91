"""Summaries of measured values, one definition for every benchmark."""

import math


def percentile(values, share):
    """The nearest-rank percentile (``share`` in 0-1) of ``values``: the
    smallest value with at least ``share`` of them at or below it, so
    the p90 of ten values is the ninth, and p100 the largest. None for
    no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    # ceil(share * n), without 0.99 * 100 rounding up to 100.
    rank = max(1, math.ceil(share * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]
