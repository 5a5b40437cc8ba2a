"""Exact orders for n = 0..9 for every strategy, the one default, and parity with the real LongContextReorders.

The parity tests run LangChain's ``LongContextReorder`` (langchain-community) and LlamaIndex's
(llama-index-core) themselves on the same documents, not a transcription of their code.
"""

from __future__ import annotations

import pickle
import random

import pytest
from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document
from llama_index.core.postprocessor import LongContextReorder as LlamaLongContextReorder
from llama_index.core.schema import NodeWithScore, TextNode

import litm
from litm.placement import PlacementOptions
from litm.placement._profile import PositionProfile
from litm.placement._registry import DEFAULT_STRATEGY, STRATEGIES, get_strategy, strategy_names, unregister_strategy
from litm.placement._strategies import Edges, Pyramid, RandomOrder

# Written out by hand from the definitions in the issue (not generated from the code under test).
EXPECTED: dict[str, dict[int, list[int]]] = {
    "edges": {
        0: [],
        1: [1],
        2: [1, 2],
        3: [1, 3, 2],
        4: [1, 3, 4, 2],
        5: [1, 3, 5, 4, 2],
        6: [1, 3, 5, 6, 4, 2],
        7: [1, 3, 5, 7, 6, 4, 2],
        8: [1, 3, 5, 7, 8, 6, 4, 2],
        9: [1, 3, 5, 7, 9, 8, 6, 4, 2],
    },
    "pyramid": {
        0: [],
        1: [1],
        2: [2, 1],
        3: [2, 3, 1],
        4: [2, 4, 3, 1],
        5: [2, 4, 5, 3, 1],
        6: [2, 4, 6, 5, 3, 1],
        7: [2, 4, 6, 7, 5, 3, 1],
        8: [2, 4, 6, 8, 7, 5, 3, 1],
        9: [2, 4, 6, 8, 9, 7, 5, 3, 1],
    },
    "langchain": {
        0: [],
        1: [1],
        2: [2, 1],
        3: [1, 3, 2],
        4: [2, 4, 3, 1],
        5: [1, 3, 5, 4, 2],
        6: [2, 4, 6, 5, 3, 1],
        7: [1, 3, 5, 7, 6, 4, 2],
        8: [2, 4, 6, 8, 7, 5, 3, 1],
        9: [1, 3, 5, 7, 9, 8, 6, 4, 2],
    },
    "none": {n: list(range(1, n + 1)) for n in range(10)},
    "reverse": {n: list(range(n, 0, -1)) for n in range(10)},
}


def names(n: int) -> list[str]:
    return [f"r{i}" for i in range(1, n + 1)]


@pytest.mark.parametrize("strategy", sorted(EXPECTED))
@pytest.mark.parametrize("n", range(10))
def test_exact_order(strategy: str, n: int) -> None:
    plan = litm.place(names(n), strategy=strategy, placement=PlacementOptions(min_docs=0))
    assert plan.ranks == EXPECTED[strategy][n]
    assert plan.items == tuple(f"r{r}" for r in EXPECTED[strategy][n])


@pytest.mark.parametrize("n", range(10))
def test_profile_builtins_reproduce_edges_and_pyramid(n: int) -> None:
    for name in ("edges", "pyramid"):
        plan = litm.place(
            names(n), strategy="profile", placement=PlacementOptions(profile=PositionProfile.builtin(name), min_docs=0)
        )
        assert plan.ranks == EXPECTED[name][n], name
    assert (
        litm.place(names(n), "profile", placement=PlacementOptions(profile=PositionProfile.primacy(), min_docs=0)).ranks
        == EXPECTED["none"][n]
    )
    assert (
        litm.place(names(n), "profile", placement=PlacementOptions(profile=PositionProfile.recency(), min_docs=0)).ranks
        == EXPECTED["reverse"][n]
    )


@pytest.mark.parametrize("n", range(0, 10))
def test_profile_without_measurement_defaults_to_pyramid(n: int) -> None:
    assert (
        litm.place(names(n), strategy="profile", placement=PlacementOptions(min_docs=0)).ranks == EXPECTED["pyramid"][n]
    )


@pytest.mark.parametrize("n", [*range(21), 33])
def test_langchain_matches_real_long_context_reorder(n: int) -> None:
    # No min_docs: LongContextReorder reorders 2 and 3 documents too ([d2, d1] and [d1, d3, d2]).
    docs = [Document(page_content=f"r{i}") for i in range(1, n + 1)]
    theirs = [d.page_content for d in LongContextReorder().transform_documents(list(docs))]
    ours = litm.place(docs, strategy="langchain").items
    assert [d.page_content for d in ours] == theirs
    # The caller's own Document objects come back, not copies.
    assert all(any(o is d for d in docs) for o in ours)
    assert litm.place(docs, "langchain").note is None


def test_langchain_parity_for_two_and_three_documents_written_out() -> None:
    assert litm.place(["d1", "d2"], "langchain").items == ("d2", "d1")
    assert litm.place(["d1", "d2", "d3"], "langchain").items == ("d1", "d3", "d2")
    # An explicit threshold is still honoured.
    assert litm.place(["d1", "d2", "d3"], "langchain", placement=PlacementOptions(min_docs=4)).items == (
        "d1",
        "d2",
        "d3",
    )


def _nodes(scores: list[float | None]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=f"t{i}", id_=f"n{i}"), score=s) for i, s in enumerate(scores)]


def _ids(nodes: object) -> list[str]:
    return [n.node.node_id for n in nodes]  # type: ignore[attr-defined]


@pytest.mark.parametrize("n", range(21))
def test_langchain_matches_llamaindex_with_distinct_scores(n: int) -> None:
    # LlamaIndex sorts by score itself; litm does the same under rank_by="score". Shuffled input, distinct scores.
    scores: list[float | None] = [round(0.05 + 0.9 * i / max(n, 1), 6) for i in range(n)]
    random.Random(n).shuffle(scores)
    nodes = _nodes(scores)
    theirs = LlamaLongContextReorder().postprocess_nodes(list(nodes))
    ours = litm.place(nodes, "langchain", rank_by="score").items
    assert _ids(ours) == _ids(theirs)
    assert all(any(o is x for x in nodes) for o in ours)


@pytest.mark.parametrize("n", range(2, 12))
def test_llamaindex_reads_an_unscored_list_worst_first_and_litm_does_not(n: int) -> None:
    # Without scores LlamaIndex counts every node as 0 and its stable ascending sort keeps the list as it is,
    # worst first: the retriever's top hit is treated as the weakest. litm deliberately reads a list as
    # best first (rank_by="input"), like LangChain, and refuses rank_by="score" without scores.
    nodes = _nodes([None] * n)
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    assert _ids(litm.place(nodes, "langchain").items) != theirs
    assert _ids(litm.place(nodes[::-1], "langchain").items) == theirs
    with pytest.raises(litm.InvalidScoreError, match="no item has a score"):
        litm.place(nodes, "langchain", rank_by="score")


def test_llamaindex_counts_a_missing_score_as_zero_and_litm_refuses() -> None:
    nodes = _nodes([0.9, None, -0.4, 0.2])
    # LlamaIndex places the unscored node as if it scored 0 (above the one scored -0.4): a guess litm will not make.
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    assert theirs == ["n3", "n2", "n1", "n0"]
    assert _ids(litm.place(_nodes([0.9, 0.0, -0.4, 0.2]), "langchain", rank_by="score").items) == theirs
    with pytest.raises(litm.InvalidScoreError, match=r"item 1 \('n1'\) has no score"):
        litm.place(nodes, "langchain", rank_by="score")


def test_equal_scores_break_ties_differently_from_llamaindex() -> None:
    # Ties: litm keeps input order (the earlier item ranks higher, as everywhere in litm); LlamaIndex's
    # ascending stable sort makes the earlier of two equal scores the *weaker* one.
    nodes = _nodes([0.5, 0.5, 0.5, 0.5])
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    ours = _ids(litm.place(nodes, "langchain", rank_by="score").items)
    assert ours == ["n1", "n3", "n2", "n0"] and theirs == ["n2", "n0", "n1", "n3"]


def test_default_strategy_is_auto_edges_without_a_profile() -> None:
    assert DEFAULT_STRATEGY == "auto"
    for n in range(4, 10):
        plan = litm.place(names(n))
        assert plan.strategy == "auto"
        # No measured profile: exactly the edges order (rank 1 first, rank 2 last), and the plan says why.
        assert plan.ranks == EXPECTED["edges"][n] == litm.place(names(n), "edges").ranks
        assert plan.note is not None and plan.note.startswith("auto: no measured profile for this model: edges")
        assert plan.note in plan.explain()


def test_default_strategy_places_by_a_measured_profile() -> None:
    # A profile whose best slot is the first and whose worst is the third: not the edges order.
    measured = litm.PositionProfile.from_weights([0.9, 0.1, 0.0, 0.4, 0.5, 0.6], name="qwen-like")
    plan = litm.place(names(6), placement=PlacementOptions(profile=measured))
    assert plan.strategy == "auto"
    assert (
        plan.ranks
        == litm.place(names(6), "profile", placement=PlacementOptions(profile=measured)).ranks
        == [1, 5, 6, 4, 3, 2]
    )
    assert plan.ranks != EXPECTED["edges"][6]
    assert plan.note == "auto: measured profile 'qwen-like' (given): best rank to its highest-weight slot"
    assert plan.profile_name == "qwen-like"


def test_min_docs_keeps_rank_order_and_says_so() -> None:
    docs = [{"text": "a", "score": 0.1}, {"text": "b", "score": 0.9}, {"text": "c", "score": 0.5}]
    plan = litm.place(docs, strategy="pyramid", rank_by="score")
    # Score order, not the input order: the best-scored document first.
    assert [d["text"] for d in plan.items] == ["b", "c", "a"]
    assert plan.ranks == [1, 2, 3]
    assert plan.note == "3 document(s) is below min_docs=4: rank order kept"
    assert {s.reason for s in plan.slots} == {"rank order kept (below min_docs)"}
    # Distances: the smallest first.
    near = litm.place(docs, "pyramid", rank_by="score", placement=PlacementOptions(higher_is_better=False))
    assert [d["text"] for d in near.items] == ["a", "c", "b"]
    # Under rank_by="input" the rank order is the given order.
    assert litm.place(docs, "pyramid").items == tuple(docs)
    # Lowering min_docs makes the strategy act.
    assert litm.place(docs, strategy="pyramid", rank_by="score", placement=PlacementOptions(min_docs=3)).ranks == [
        2,
        3,
        1,
    ]


def test_random_is_seeded_and_a_permutation() -> None:
    a = litm.place(names(9), strategy=RandomOrder(seed=7))
    b = litm.place(names(9), strategy=RandomOrder(seed=7))
    c = litm.place(names(9), strategy=RandomOrder(seed=8))
    assert a.items == b.items
    assert sorted(a.items) == sorted(names(9))
    assert a.items != c.items


def test_plan_is_a_frozen_hashable_value() -> None:
    docs = [{"id": f"d{i}", "text": f"t{i}", "score": s} for i, s in enumerate([0.3, 0.9, 0.1, 0.5, 0.7])]
    a = litm.place(docs, rank_by="score")
    b = litm.place([dict(d) for d in docs], rank_by="score")
    assert isinstance(a.items, tuple)
    assert a == b and hash(a) == hash(b)  # equal placements of equal input are equal values
    assert a != litm.place(docs, "edges", rank_by="score")
    assert len({a, b}) == 1
    with pytest.raises(AttributeError):
        a.items.append("x")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        a.items = ()  # type: ignore[misc]
    # A value survives a round trip through pickle (process pools, caches).
    again = pickle.loads(pickle.dumps(a))
    assert again == a and hash(again) == hash(a) and again.slots[0].relevance == a.slots[0].relevance


def test_strategy_objects_place_like_their_names() -> None:
    assert litm.place(names(6), Pyramid()).ranks == litm.place(names(6), "pyramid").ranks == [2, 4, 6, 5, 3, 1]
    assert get_strategy("edges").arrange(6) == [0, 2, 4, 5, 3, 1]


def test_register_custom_strategy() -> None:
    class MiddleFirst(litm.Strategy):
        name = "middle-first-test"

        def arrange(self, n: int) -> list[int]:
            return list(range(n))[::-1]

    litm.register_strategy("middle-first-test", MiddleFirst)
    try:
        assert litm.place(names(5), "middle-first-test").ranks == [5, 4, 3, 2, 1]
        assert "middle-first-test" in strategy_names()
        # One rule for every name: a taken one (a built-in or this one) is refused without replace=True.
        with pytest.raises(litm.AlreadyRegisteredError):
            litm.register_strategy("middle-first-test", MiddleFirst)
        with pytest.raises(litm.AlreadyRegisteredError, match="pyramid"):
            litm.register_strategy("pyramid", MiddleFirst)
        litm.register_strategy("middle-first-test", Edges, replace=True)
        assert litm.place(names(5), "middle-first-test").ranks == [1, 3, 5, 4, 2]
    finally:
        unregister_strategy("middle-first-test")
    assert "middle-first-test" not in STRATEGIES


def test_broken_custom_strategy_is_caught() -> None:
    class Broken(litm.Strategy):
        name = "broken"

        def arrange(self, n: int) -> list[int]:
            return [0] * n

    with pytest.raises(litm.LitmError, match="not a permutation"):
        litm.place(names(5), Broken())


def test_unknown_strategy() -> None:
    with pytest.raises(litm.UnknownStrategyError, match="bogus"):
        litm.place(names(5), "bogus")
