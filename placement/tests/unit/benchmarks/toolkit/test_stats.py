from benchmarks.toolkit import stats


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert stats.percentile(values, 0.5) == 50
    assert stats.percentile(values, 0.99) == 99
    assert stats.percentile(values, 1.0) == 100
    assert stats.percentile([7], 0.99) == 7
    assert stats.percentile([], 0.5) is None


def test_p90_of_ten_values_is_the_ninth_not_the_largest():
    assert stats.percentile(list(range(1, 11)), 0.9) == 9
