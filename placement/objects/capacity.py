"""The capacity rule, in one place for every reader and writer.

An inventory record offers ``int((total - reserved) * allocation_ratio)``
units: its capacity. One allocation of ``amount`` from it must respect the
record's units (``min_unit <= amount <= max_unit``, a multiple of
``step_size``) and fit (usage after it at most the capacity).

Inventory writes check the capacity alone (``inventory.check_capacity``);
allocation writes, and so the reshaper, check units and then usage
(``allocation``); the candidates index keeps an ``Offer`` per inventory
and tests its ``allowed`` range per provider (``provider_index``), for
candidates and for the ``resources`` filter of GET /resource_providers
alike.
"""

import typing


class Offer(typing.NamedTuple):
    """What one allocation may take from an inventory, given its usage:
    ``allowed`` is the range of amounts it may be; ``capacity`` is the
    record's capacity."""

    allowed: range
    capacity: int

    @property
    def most(self):
        """The most one allocation may take (below zero when usage
        exceeds capacity)."""
        return self.allowed.stop - 1


def capacity(total, reserved, allocation_ratio):
    """Usable units of an inventory record."""
    return int((total - reserved) * allocation_ratio)


def _amounts(min_unit, most, step_size):
    """The multiples of ``step_size`` from ``min_unit`` to ``most``, as
    a range: membership is one C-level test, cheap enough for the
    candidates index to ask per provider."""
    first = -(-min_unit // step_size) * step_size
    return range(first, most + 1, step_size)


def offer(capacity, used, min_unit, max_unit, step_size):
    """The Offer of a record with ``capacity`` of which ``used`` is
    allocated: at most what is free, within ``max_unit``."""
    return Offer(_amounts(min_unit, min(capacity - used, max_unit),
                          step_size), capacity)


def allows(offer, amount):
    """True if one allocation of ``amount`` may be taken from
    ``offer``."""
    return amount in offer.allowed


def units_allowed(amount, min_unit, max_unit, step_size):
    """True if ``amount`` respects a record's units, usage aside."""
    return amount in _amounts(min_unit, max_unit, step_size)


def usage_allowed(capacity, before, after):
    """True if a pair's usage may become ``after``: within ``capacity``,
    or, already above it (``before``, None if the pair was unused), not
    growing."""
    return after <= capacity or (before is not None and after <= before)
