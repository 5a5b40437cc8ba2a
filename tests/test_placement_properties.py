"""Hypothesis properties of placement: permutation, edge rules, monotonicity, profile optimality."""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

import litm
from litm.placement import PlacementOptions
from litm.placement._profile import PositionProfile

sizes = st.integers(min_value=0, max_value=60)
STRATS = ["none", "reverse", "edges", "pyramid", "langchain", "profile", "random"]


def names(n: int) -> list[str]:
    return [f"r{i}" for i in range(1, n + 1)]


@given(n=sizes, strategy=st.sampled_from(STRATS), min_docs=st.integers(0, 6))
def test_output_is_a_permutation_and_input_untouched(n: int, strategy: str, min_docs: int) -> None:
    items = names(n)
    before = list(items)
    plan = litm.place(items, strategy=strategy, placement=PlacementOptions(min_docs=min_docs))
    assert items == before
    assert sorted(plan.items) == sorted(items)
    assert sorted(plan.ranks) == list(range(1, n + 1))
    assert [s.slot for s in plan.slots] == list(range(1, n + 1))


@given(n=st.integers(min_value=1, max_value=80))
def test_edges_first_pyramid_last(n: int) -> None:
    assert litm.place(names(n), "edges", placement=PlacementOptions(min_docs=0)).ranks[0] == 1
    assert litm.place(names(n), "pyramid", placement=PlacementOptions(min_docs=0)).ranks[-1] == 1
    if n >= 2:
        assert litm.place(names(n), "edges", placement=PlacementOptions(min_docs=0)).ranks[-1] == 2
        assert litm.place(names(n), "pyramid", placement=PlacementOptions(min_docs=0)).ranks[0] == 2


def _never_decreasing_toward_centre(ranks: list[int]) -> bool:
    # Walking from either end toward the centre the rank number never goes down (documents only get worse).
    n = len(ranks)
    half = (n + 1) // 2
    left = ranks[:half]
    right = ranks[::-1][:half]
    return all(a <= b for a, b in itertools.pairwise(left)) and all(a <= b for a, b in itertools.pairwise(right))


@given(n=st.integers(min_value=0, max_value=80), strategy=st.sampled_from(["edges", "pyramid"]))
def test_rank_never_improves_toward_the_centre(n: int, strategy: str) -> None:
    assert _never_decreasing_toward_centre(litm.place(names(n), strategy, placement=PlacementOptions(min_docs=0)).ranks)


weights_st = st.lists(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda w: round(w, 3)), min_size=1, max_size=9
)


@given(weights=weights_st, n=st.integers(min_value=1, max_value=7), tie=st.sampled_from(["end", "start"]))
def test_profile_assignment_is_optimal_against_brute_force(weights: list[float], n: int, tie: str) -> None:
    profile = PositionProfile.from_weights(weights, tie_break=tie)  # type: ignore[arg-type]
    slot_w = profile.exact_slot_weights(n)
    value = [Fraction(n - r) for r in range(n)]  # strictly falling with rank
    plan = litm.place(names(n), "profile", placement=PlacementOptions(profile=profile, min_docs=0))
    ours = sum(slot_w[s] * value[r - 1] for s, r in enumerate(plan.ranks))
    best = max(sum(slot_w[s] * value[r] for s, r in enumerate(perm)) for perm in itertools.permutations(range(n)))
    assert ours == best


@given(weights=weights_st, n=st.integers(min_value=2, max_value=30))
def test_profile_ties_go_toward_the_question(weights: list[float], n: int) -> None:
    profile = PositionProfile.from_weights(weights)
    w = profile.exact_slot_weights(n)
    ranks = litm.place(names(n), "profile", placement=PlacementOptions(profile=profile, min_docs=0)).ranks
    for a in range(n):
        for b in range(a + 1, n):
            if w[a] == w[b]:
                assert ranks[b] < ranks[a], "equal weights: the later slot must get the better rank"
            elif w[a] > w[b]:
                assert ranks[a] < ranks[b]


scores_st = st.lists(
    st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, 1.0, 1.0, -1e308, 1e308]),
    max_size=30,
)


@given(scores=scores_st, higher=st.booleans(), top_k=st.none() | st.integers(0, 30))
def test_relevance_is_the_score_rescaled_with_its_direction(
    scores: list[float], higher: bool, top_k: int | None
) -> None:
    items = [{"id": f"d{i}", "text": "t", "score": s} for i, s in enumerate(scores)]
    plan = litm.place(
        items, "pyramid", rank_by="score", placement=PlacementOptions(higher_is_better=higher, top_k=top_k)
    )
    by_rank = sorted(plan.slots, key=lambda s: s.rank)
    rel = [s.relevance for s in by_rank]
    assert all(r is not None and 0.0 <= r <= 1.0 for r in rel)
    if rel:
        # The best placed document is 1.0; the worst is 0.0 unless every placed score is equal (then all 1.0).
        assert rel[0] == 1.0
        placed = [s.score for s in by_rank]
        assert rel[-1] == (1.0 if min(placed) == max(placed) else 0.0)  # type: ignore[type-var]
    # Relevance never rises as rank falls, and the raw score is kept as given.
    assert all(a >= b for a, b in itertools.pairwise(rel))  # type: ignore[operator]
    assert all(s.score == scores[s.input_index] for s in plan.slots)


@given(scores=st.lists(st.one_of(st.none(), st.floats(-10, 10)), max_size=12))
def test_relevance_is_none_exactly_for_unscored_documents(scores: list[float | None]) -> None:
    items = [{"id": f"d{i}", "text": "t", **({} if s is None else {"score": s})} for i, s in enumerate(scores)]
    plan = litm.place(items, "edges")  # rank_by="input" takes mixed scores
    assert all((s.relevance is None) == (s.score is None) for s in plan.slots)
    assert all(s.to_dict()["relevance"] == s.relevance for s in plan.slots)
