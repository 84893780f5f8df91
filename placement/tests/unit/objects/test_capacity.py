"""The capacity rule on plain values."""

from placement.objects import capacity


def test_capacity_truncates_the_product():
    assert capacity.capacity(10, 1, 1.5) == 13
    assert capacity.capacity(3, 0, 0.5) == 1
    assert capacity.capacity(4, 4, 16.0) == 0


def test_offer_is_what_is_free_within_max_unit():
    assert capacity.offer(13, 5, 1, 100, 1).most == 8
    assert capacity.offer(13, 5, 1, 4, 1).most == 4
    # Usage above capacity (capacity lowered after allocating): no room.
    assert capacity.offer(2, 3, 1, 4, 1).most == -1


def test_allows_checks_units_and_room():
    offer = capacity.offer(capacity.capacity(20, 0, 1.0), 6, 2, 12, 2)
    allowed = [amount for amount in range(0, 20)
               if capacity.allows(offer, amount)]
    # Multiples of 2 from min_unit 2 to the 12 that max_unit allows and
    # 14 units free would too.
    assert allowed == [2, 4, 6, 8, 10, 12]
    offer = capacity.offer(10, 3, 1, 100, 1)
    assert [a for a in range(5, 10) if capacity.allows(offer, a)] == [5, 6, 7]


def test_steps_count_from_zero_not_from_min_unit():
    offer = capacity.offer(20, 0, 3, 20, 2)
    assert [a for a in range(0, 12) if capacity.allows(offer, a)] == [
        4, 6, 8, 10]


def test_units_allowed_ignores_usage():
    assert capacity.units_allowed(30, 10, 50, 10)
    assert not capacity.units_allowed(35, 10, 50, 10)
    assert not capacity.units_allowed(5, 10, 50, 5)
    assert not capacity.units_allowed(60, 10, 50, 10)


def test_a_record_of_no_numbers_has_no_capacity():
    # Rows the service did not write: a NULL or NaN ratio, text SQLite
    # kept as it was.
    assert capacity.capacity(8, 0, None) == 0
    assert capacity.capacity(8, 0, float('nan')) == 0
    assert capacity.capacity(8, 0, float('inf')) == 0
    assert capacity.capacity(8, 0, 'NaN') == 0


GOOD = dict(total=8, reserved=0, allocation_ratio=1.0, min_unit=1,
            max_unit=8, step_size=1)


def _problem(min_capacity=0, **changes):
    found = capacity.problem(**dict(GOOD, **changes),
                             min_capacity=min_capacity)
    return found and (found.kind, found.field, found.text)


def test_problem_names_the_value_at_fault():
    assert _problem() is None
    assert _problem(reserved=8) is None
    assert _problem(allocation_ratio=0.0) is None
    assert _problem(allocation_ratio=None) == (
        'missing_value', 'allocation_ratio',
        'The allocation_ratio value is missing.')
    assert _problem(allocation_ratio=float('nan')) == (
        'not_a_number', 'allocation_ratio',
        'The allocation_ratio value nan is not a finite number.')
    assert _problem(allocation_ratio='NaN')[:2] == (
        'not_a_number', 'allocation_ratio')
    assert _problem(total=-1)[:2] == ('negative_value', 'total')
    assert _problem(step_size=0) == (
        'units', 'step_size', 'The step_size value 0 is below 1.')
    assert _problem(min_unit=5, max_unit=2) == (
        'units', 'min_unit',
        'The min_unit value 5 is greater than max_unit 2.')
    assert _problem(reserved=9) == (
        'reserved_above_total', 'reserved',
        'The reserved value is greater than total.')
    assert _problem(allocation_ratio=-1) == (
        'capacity_below_minimum', 'allocation_ratio',
        'The allocation_ratio value -1 leaves a capacity of -8, below 0.')


def test_problem_with_a_minimum_capacity_of_one():
    # Writes before microversion 1.26: upstream Placement's words for reserved.
    assert _problem(1, reserved=8) == (
        'reserved_above_total', 'reserved',
        'The reserved value is greater than or equal to total.')
    assert _problem(1, allocation_ratio=0.1)[1:] == (
        'allocation_ratio',
        'The allocation_ratio value 0.1 leaves a capacity of 0, below 1.')
