"""Hypothesis properties of placement: permutation, edge rules, monotonicity, profile optimality."""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

import litm
from litm.placement.profile import PositionProfile

sizes = st.integers(min_value=0, max_value=60)
STRATS = ["none", "reverse", "edges", "pyramid", "langchain", "profile", "random"]


def names(n: int) -> list[str]:
    return [f"r{i}" for i in range(1, n + 1)]


@given(n=sizes, strategy=st.sampled_from(STRATS), min_docs=st.integers(0, 6))
def test_output_is_a_permutation_and_input_untouched(n: int, strategy: str, min_docs: int) -> None:
    items = names(n)
    before = list(items)
    plan = litm.place(items, strategy=strategy, min_docs=min_docs)
    assert items == before
    assert sorted(plan.items) == sorted(items)
    assert sorted(plan.ranks) == list(range(1, n + 1))
    assert [s.slot for s in plan.slots] == list(range(1, n + 1))


@given(n=st.integers(min_value=1, max_value=80))
def test_edges_first_pyramid_last(n: int) -> None:
    assert litm.place(names(n), "edges", min_docs=0).ranks[0] == 1
    assert litm.place(names(n), "pyramid", min_docs=0).ranks[-1] == 1
    if n >= 2:
        assert litm.place(names(n), "edges", min_docs=0).ranks[-1] == 2
        assert litm.place(names(n), "pyramid", min_docs=0).ranks[0] == 2


def _never_decreasing_toward_centre(ranks: list[int]) -> bool:
    # Walking from either end toward the centre the rank number never goes down (documents only get worse).
    n = len(ranks)
    half = (n + 1) // 2
    left = ranks[:half]
    right = ranks[::-1][:half]
    return all(a <= b for a, b in itertools.pairwise(left)) and all(a <= b for a, b in itertools.pairwise(right))


@given(n=st.integers(min_value=0, max_value=80), strategy=st.sampled_from(["edges", "pyramid"]))
def test_rank_never_improves_toward_the_centre(n: int, strategy: str) -> None:
    assert _never_decreasing_toward_centre(litm.place(names(n), strategy, min_docs=0).ranks)


weights_st = st.lists(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda w: round(w, 3)), min_size=1, max_size=9
)


@given(weights=weights_st, n=st.integers(min_value=1, max_value=7), tie=st.sampled_from(["end", "start"]))
def test_profile_assignment_is_optimal_against_brute_force(weights: list[float], n: int, tie: str) -> None:
    profile = PositionProfile.from_weights(weights, tie_break=tie)  # type: ignore[arg-type]
    slot_w = profile.exact_slot_weights(n)
    value = [Fraction(n - r) for r in range(n)]  # strictly falling with rank
    plan = litm.place(names(n), "profile", profile=profile, min_docs=0)
    ours = sum(slot_w[s] * value[r - 1] for s, r in enumerate(plan.ranks))
    best = max(sum(slot_w[s] * value[r] for s, r in enumerate(perm)) for perm in itertools.permutations(range(n)))
    assert ours == best


@given(weights=weights_st, n=st.integers(min_value=2, max_value=30))
def test_profile_ties_go_toward_the_question(weights: list[float], n: int) -> None:
    profile = PositionProfile.from_weights(weights)
    w = profile.exact_slot_weights(n)
    ranks = litm.place(names(n), "profile", profile=profile, min_docs=0).ranks
    for a in range(n):
        for b in range(a + 1, n):
            if w[a] == w[b]:
                assert ranks[b] < ranks[a], "equal weights: the later slot must get the better rank"
            elif w[a] > w[b]:
                assert ranks[a] < ranks[b]
