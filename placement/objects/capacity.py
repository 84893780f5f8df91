"""The capacity rule, in one place for every reader and writer.

An inventory record offers ``int((total - reserved) * allocation_ratio)``
units: its capacity. One allocation of ``amount`` from it must respect the
record's units (``min_unit <= amount <= max_unit``, a multiple of
``step_size``) and fit (usage after it at most the capacity).

Whether a record can be offered at all is ``problem``: every inventory
write (``inventory.check_records``: PUT, POST, the reshaper) refuses a
record it finds a problem with, and every reader of stored rows (the
candidates index, allocation writes, ``placement-status upgrade check``)
leaves such a row out, since rows the service did not write (hand SQL,
another implementation on the same database) can hold anything.

Allocation writes, and so the reshaper, check units and then usage
(``allocation``); the candidates index keeps an ``Offer`` per inventory
and tests its ``allowed`` range per provider (``provider_index``), for
candidates and for the ``resources`` filter of GET /resource_providers
alike.
"""

import functools
import math
import typing

#: The largest value an ``Integer`` column holds on every database (a
#: signed 32-bit INTEGER) and a ``Float`` column (MySQL's FLOAT is single
#: precision). The request schemas bound the record values written to
#: such columns by them, so that a larger one is a 400, never a database
#: error.
INTEGER_MAX = 2 ** 31 - 1
FLOAT_MAX = 3.40282e+38

#: The fields of a record, in the order ``problem`` takes them.
FIELDS = ('total', 'reserved', 'allocation_ratio', 'min_unit', 'max_unit',
          'step_size')


class Problem(typing.NamedTuple):
    """What is wrong with a record: ``kind`` (a short identifier, the
    label of the metric counting such rows), ``field`` (the value that
    is wrong) and ``text`` (a sentence naming it)."""

    kind: str
    field: str
    text: str


def problem(total, reserved, allocation_ratio, min_unit, max_unit,
            step_size, min_capacity=0):
    """None if the record can be offered, with a capacity of at least
    ``min_capacity``, else its first Problem."""
    values = dict(zip(FIELDS, (total, reserved, allocation_ratio, min_unit,
                               max_unit, step_size)))
    for field, value in values.items():
        if value is None:
            return Problem('missing_value', field,
                           'The %s value is missing.' % field)
        if not _finite(value):
            return Problem('not_a_number', field,
                           'The %s value %r is not a finite number.'
                           % (field, value))
    for field in ('total', 'reserved'):
        if values[field] < 0:
            return Problem('negative_value', field,
                           'The %s value %s is negative.'
                           % (field, values[field]))
    for field in ('min_unit', 'max_unit', 'step_size'):
        if values[field] < 1:
            return Problem('units', field, 'The %s value %s is below 1.'
                           % (field, values[field]))
    if min_unit > max_unit:
        return Problem('units', 'min_unit',
                       'The min_unit value %s is greater than max_unit %s.'
                       % (min_unit, max_unit))
    if total - reserved < min_capacity:
        return Problem('reserved_above_total', 'reserved',
                       'The reserved value is %s total.'
                       % ('greater than' if min_capacity <= 0
                          else 'greater than or equal to'))
    value = capacity(total, reserved, allocation_ratio)
    if value < min_capacity:
        return Problem('capacity_below_minimum', 'allocation_ratio',
                       'The allocation_ratio value %s leaves a capacity of '
                       '%s, below %s.' % (allocation_ratio, value,
                                          min_capacity))
    return None


class Offer(typing.NamedTuple):
    """What one allocation may take from an inventory, given its usage:
    ``allowed`` is the range of amounts it may be; ``capacity`` is the
    record's capacity; ``units`` the amounts its units allow, usage
    aside (what GET /capacity/fit names a full tree's limit by)."""

    allowed: range
    capacity: int
    units: range = range(0)

    @property
    def most(self):
        """The most one allocation may take (below zero when usage
        exceeds capacity)."""
        return self.allowed.stop - 1


def _finite(value):
    try:
        return math.isfinite(value)
    except TypeError:  # not a number (e.g. text SQLite kept as it was)
        return False


def capacity(total, reserved, allocation_ratio):
    """Usable units of an inventory record: none for a record whose
    values are no numbers (see ``problem``), which only a row the service
    did not write can hold."""
    try:
        return int((total - reserved) * allocation_ratio)
    except (TypeError, ValueError, OverflowError):
        return 0


#: No amount at all.
_NO_AMOUNTS = range(0)


def _amounts(min_unit, most, step_size):
    """The multiples of ``step_size`` from ``min_unit`` to ``most``, as
    a range: membership is one C-level test, cheap enough for the
    candidates index to ask per provider. None for units no write makes
    (a step below one, a missing value)."""
    try:
        if step_size < 1:
            return _NO_AMOUNTS
        first = -(-min_unit // step_size) * step_size
        return range(first, most + 1, step_size)
    except TypeError:
        return _NO_AMOUNTS


#: The Offer of a record with a problem: nothing, of no capacity.
NOTHING = Offer(_NO_AMOUNTS, 0)


def offer(capacity, used, min_unit, max_unit, step_size):
    """The Offer of a record with ``capacity`` of which ``used`` is
    allocated: at most what is free, within ``max_unit``."""
    return Offer(_amounts(min_unit, min(capacity - used, max_unit),
                          step_size), capacity,
                 _units(min_unit, max_unit, step_size))


@functools.lru_cache(maxsize=256)
def _units(min_unit, max_unit, step_size):
    """``_amounts`` usage aside: one range per set of units, shared by
    every Offer with them (a fleet has a handful)."""
    return _amounts(min_unit, max_unit, step_size)


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
