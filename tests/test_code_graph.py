"""The personalised PageRank that orders callers and callees: a probability distribution, led by the target."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litm.code._graph import personalized_pagerank

edges_st = st.dictionaries(
    st.tuples(st.integers(0, 7), st.integers(0, 7)), st.floats(min_value=0.0, max_value=10.0), max_size=20
)


@given(edges=edges_st)
def test_scores_are_a_distribution_and_isolated_nodes_get_nothing(edges: dict[tuple[int, int], float]) -> None:
    nodes = list(range(8))
    scores = personalized_pagerank(nodes, edges, source=0)
    assert abs(sum(scores.values()) - 1.0) < 1e-9 and all(s >= 0.0 for s in scores.values())
    linked = {n for (a, b), w in edges.items() if w > 0 and a != b for n in (a, b)}
    for n in nodes:
        if n != 0 and n not in linked:
            assert scores[n] == 0.0


def test_star_weights_rank_callers_by_call_sites() -> None:
    scores = personalized_pagerank(["t", "a", "b", "c"], {("a", "t"): 3.0, ("t", "b"): 1.0, ("c", "t"): 1.0},
                                   source="t")  # fmt: skip
    assert scores["a"] == pytest.approx(3 * scores["b"]) and scores["b"] == pytest.approx(scores["c"])
    assert scores["t"] > scores["a"]


def test_a_neighbour_linked_to_other_neighbours_outranks_an_isolated_one() -> None:
    edges = {("a", "t"): 1.0, ("b", "t"): 1.0, ("c", "t"): 1.0, ("a", "b"): 1.0}
    scores = personalized_pagerank(["t", "a", "b", "c"], edges, source="t")
    assert scores["a"] > scores["c"] and scores["b"] > scores["c"]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="source"):
        personalized_pagerank(["a"], {}, source="z")
    with pytest.raises(ValueError, match="damping"):
        personalized_pagerank(["a"], {}, source="a", damping=1.0)
