"""Exact orders for n = 0..9 for every strategy, and parity with the real LangChain LongContextReorder."""

from __future__ import annotations

import pytest
from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document

import litm
from litm.placement.profile import PositionProfile

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
    plan = litm.place(names(n), strategy=strategy, min_docs=0)
    assert plan.ranks == EXPECTED[strategy][n]
    assert plan.items == [f"r{r}" for r in EXPECTED[strategy][n]]


@pytest.mark.parametrize("n", range(10))
def test_profile_builtins_reproduce_edges_and_pyramid(n: int) -> None:
    for name in ("edges", "pyramid"):
        plan = litm.place(names(n), strategy="profile", profile=PositionProfile.builtin(name), min_docs=0)
        assert plan.ranks == EXPECTED[name][n], name
    assert litm.place(names(n), "profile", profile=PositionProfile.primacy(), min_docs=0).ranks == EXPECTED["none"][n]
    assert (
        litm.place(names(n), "profile", profile=PositionProfile.recency(), min_docs=0).ranks == EXPECTED["reverse"][n]
    )


@pytest.mark.parametrize("n", range(0, 10))
def test_profile_without_measurement_defaults_to_pyramid(n: int) -> None:
    assert litm.place(names(n), strategy="profile", min_docs=0).ranks == EXPECTED["pyramid"][n]


@pytest.mark.parametrize("n", [*range(10), 10, 11, 20, 33])
def test_langchain_matches_real_long_context_reorder(n: int) -> None:
    docs = [Document(page_content=f"r{i}") for i in range(1, n + 1)]
    theirs = [d.page_content for d in LongContextReorder().transform_documents(list(docs))]
    ours = litm.place(docs, strategy="langchain", min_docs=0).items
    assert [d.page_content for d in ours] == theirs
    # The caller's own Document objects come back, not copies.
    assert all(any(o is d for d in docs) for o in ours)


def test_min_docs_keeps_input_order_and_says_so() -> None:
    docs = [{"text": "a", "score": 0.1}, {"text": "b", "score": 0.9}, {"text": "c", "score": 0.5}]
    plan = litm.place(docs, strategy="pyramid", rank_by="score")
    assert plan.items == docs
    assert plan.note is not None and "min_docs" in plan.note
    assert plan.ranks == [3, 1, 2]
    # Lowering min_docs makes the strategy act.
    assert litm.place(docs, strategy="pyramid", rank_by="score", min_docs=3).ranks == [2, 3, 1]


def test_random_is_seeded_and_a_permutation() -> None:
    a = litm.place(names(9), strategy=litm.RandomOrder(seed=7))
    b = litm.place(names(9), strategy=litm.RandomOrder(seed=7))
    c = litm.place(names(9), strategy=litm.RandomOrder(seed=8))
    assert a.items == b.items
    assert sorted(a.items) == sorted(names(9))
    assert a.items != c.items


def test_strategy_objects_are_callable() -> None:
    assert litm.Pyramid()(names(6)).ranks == [2, 4, 6, 5, 3, 1]
    assert litm.get_strategy("edges").arrange(6) == [0, 2, 4, 5, 3, 1]


def test_register_custom_strategy() -> None:
    class MiddleFirst(litm.Strategy):
        name = "middle-first-test"

        def arrange(self, n: int) -> list[int]:
            return list(range(n))[::-1]

    litm.register_strategy("middle-first-test", MiddleFirst)
    try:
        assert litm.place(names(5), "middle-first-test").ranks == [5, 4, 3, 2, 1]
        assert "middle-first-test" in litm.placement.strategy_names()
        # One rule for every name: a taken one (a built-in or this one) is refused without replace=True.
        with pytest.raises(litm.AlreadyRegisteredError):
            litm.register_strategy("middle-first-test", MiddleFirst)
        with pytest.raises(litm.AlreadyRegisteredError, match="pyramid"):
            litm.register_strategy("pyramid", MiddleFirst)
        litm.register_strategy("middle-first-test", litm.Edges, replace=True)
        assert litm.place(names(5), "middle-first-test").ranks == [1, 3, 5, 4, 2]
    finally:
        litm.placement.unregister_strategy("middle-first-test")
    assert "middle-first-test" not in litm.STRATEGIES


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
