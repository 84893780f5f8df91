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
