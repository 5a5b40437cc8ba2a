"""Wilson intervals and Fisher's exact test, checked against known values and brute-force enumeration."""

from __future__ import annotations

import math
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litm.eval._stats import fisher_greater, fisher_less, fisher_two_sided, wilson, wilson_half_width


@pytest.mark.parametrize(
    ("hits", "n", "lo", "hi"),
    [
        # Reference values from the closed form (also what statsmodels' proportion_confint(method="wilson") gives).
        (7, 20, 0.1812, 0.5671),
        (15, 20, 0.5313, 0.8881),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (50, 100, 0.4038, 0.5962),
    ],
)
def test_wilson_known_values(hits: int, n: int, lo: float, hi: float) -> None:
    got = wilson(hits, n)
    assert got[0] == pytest.approx(lo, abs=1e-4)
    assert got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_edge_cases() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(5, 4)
    assert wilson_half_width(5, 10) > wilson_half_width(50, 100)


@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_contains_the_estimate_and_stays_in_unit_interval(n: int, data: st.DataObject) -> None:
    hits = data.draw(st.integers(min_value=0, max_value=n))
    lo, hi = wilson(hits, n)
    assert 0.0 <= lo <= hits / n <= hi <= 1.0
    assert lo < hi


def _brute_less(a: int, na: int, b: int, nb: int) -> float:
    """P(hits in group a <= a | total hits) by enumerating every equally likely assignment of hits."""
    total = a + b
    tables = [(k, math.comb(na, k) * math.comb(nb, total - k)) for k in range(0, min(na, total) + 1)]
    tables = [(k, w) for k, w in tables if total - k <= nb]
    norm = sum(w for _, w in tables)
    return sum(w for k, w in tables if k <= a) / norm


@pytest.mark.parametrize(("a", "na", "b", "nb"), list(product([0, 2, 5], [5, 8], [0, 3, 8], [8, 10])))
def test_fisher_less_matches_enumeration(a: int, na: int, b: int, nb: int) -> None:
    if a > na or b > nb:
        return
    assert fisher_less(a, na, b, nb) == pytest.approx(_brute_less(a, na, b, nb))


def test_fisher_known_values_and_directions() -> None:
    # 2/10 vs 9/10: clearly lower (R: fisher.test(matrix(c(2,8,9,1),2), alternative="less")$p.value = 0.00274).
    assert fisher_less(2, 10, 9, 10) == pytest.approx(0.0027387, abs=1e-6)
    assert fisher_greater(9, 10, 2, 10) == pytest.approx(fisher_less(2, 10, 9, 10))
    assert fisher_less(9, 10, 2, 10) > 0.99
    assert fisher_two_sided(2, 10, 9, 10) == pytest.approx(0.0054775, abs=1e-6)
    assert fisher_two_sided(5, 10, 5, 10) == pytest.approx(1.0)
    assert fisher_less(0, 0, 3, 4) == 1.0


@given(st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=30), st.data())
def test_fisher_p_values_are_probabilities(na: int, nb: int, data: st.DataObject) -> None:
    a = data.draw(st.integers(min_value=0, max_value=na))
    b = data.draw(st.integers(min_value=0, max_value=nb))
    for p in (fisher_less(a, na, b, nb), fisher_greater(a, na, b, nb), fisher_two_sided(a, na, b, nb)):
        assert 0.0 <= p <= 1.0
    # The two one-sided p-values cover every table, the observed one twice.
    assert fisher_less(a, na, b, nb) + fisher_greater(a, na, b, nb) >= 1.0 - 1e-9
