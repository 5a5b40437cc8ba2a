"""Gold-rank placement derivation: the benchmark's slot for each rank is exactly what litm.place does."""

from __future__ import annotations

import pytest

from litm import placement
from litm.bench.data import Passage, QAItem
from litm.bench.design import (
    ARMS,
    GOLD_DESIGNS,
    LIU_INSTRUCTION,
    MULTIHOP_INSTRUCTION,
    STRATEGIES,
    arrangement,
    build_prompt,
    closed_book_prompt,
    fold_of,
    gold_slot,
    gold_slots,
)
from litm.errors import EvalError, InvalidOptionError
from litm.placement import RandomOrder, place
from litm.placement._profile import PositionProfile

PROFILE = PositionProfile.from_weights([0.7, 0.5, 0.3, 0.2, 0.2, 0.25, 0.3, 0.4, 0.5, 0.8], name="t")


def _item(k: int) -> QAItem:
    return QAItem(
        7, "who?", ("gold",), Passage(0, "Gold", "gold text"), tuple(Passage(i, f"D{i}", f"d{i}") for i in range(1, k))
    )


@pytest.mark.parametrize("k", [4, 5, 10, 20])
@pytest.mark.parametrize("name", STRATEGIES)
def test_gold_slot_matches_place_on_real_documents(name: str, k: int) -> None:
    item = _item(k)
    for seed in (0, 7, 123):
        for r in range(1, k + 1):
            docs = [{"id": f"p{p.pid}", "text": p.text} for p in item.ranked(r, k)]
            strat = RandomOrder(seed) if name == "random" else placement.get_strategy(name, profile=PROFILE)
            plan = place(docs, strat, profile=PROFILE if name == "profile" else None)
            slot = [d["id"] for d in plan.items].index("p0") + 1
            assert gold_slot(name, k, r, seed=seed, profile=PROFILE) == slot


def test_known_orders_for_k_10() -> None:
    assert [gold_slot("none", 10, r) for r in range(1, 11)] == list(range(1, 11))
    assert gold_slot("edges", 10, 1) == 1 and gold_slot("edges", 10, 2) == 10
    assert gold_slot("pyramid", 10, 1) == 10 and gold_slot("pyramid", 10, 2) == 1
    assert arrangement("langchain", 10) == arrangement("pyramid", 10)  # LongContextReorder, even k
    assert arrangement("langchain", 9) == arrangement("edges", 9)  # ... and odd k
    # The profile strategy sends rank 1 to the highest-weight slot (slot 10 here), rank 2 to the next (slot 1).
    assert gold_slot("profile", 10, 1, profile=PROFILE) == 10
    assert gold_slot("profile", 10, 2, profile=PROFILE) == 1


def test_random_is_a_per_question_permutation() -> None:
    orders = {tuple(arrangement("random", 10, seed=s)) for s in range(20)}
    assert len(orders) > 15
    assert all(sorted(o) == list(range(1, 11)) for o in orders)
    assert arrangement("random", 10, seed=3) == arrangement("random", 10, seed=3)


def test_profile_strategy_requires_a_profile() -> None:
    with pytest.raises(ValueError):
        arrangement("profile", 10)


def test_folds_alternate() -> None:
    assert [fold_of(i) for i in range(6)] == [0, 1, 0, 1, 0, 1]


def test_plain_prompt_is_liu_format() -> None:
    docs = [Passage(1, "A", "alpha."), Passage(2, "B", "beta.")]
    text = build_prompt(docs, [1, 2], "what?")
    assert text == (
        f"{LIU_INSTRUCTION}\n\nDocument [1](Title: A) alpha.\nDocument [2](Title: B) beta.\n\nQuestion: what?\nAnswer:"
    )
    both = build_prompt(docs, [1, 2], "what?", "plain-both")
    assert both.count("Question: what?") == 2 and both.index("Question") < both.index("Document [1]")


def test_anchored_prompt_has_ids_scores_closing_tags_and_middle_marker() -> None:
    docs = [Passage(i, f"T{i}", f"text {i}.") for i in range(1, 7)]
    ranks = [3, 1, 2, 6, 5, 4]
    text = build_prompt(docs, ranks, "what?", "anchored")
    assert '<document id="doc-3" position="1/6" score="0.9" title="T1">' in text
    assert '</document id="doc-3">' in text
    assert text.count('zone="middle"') >= 2
    assert text.rstrip().endswith("Question: what?\nAnswer:")
    assert text.count("Question: what?") == 1
    assert build_prompt(docs, ranks, "what?", "anchored-both").count("Question: what?") == 2
    assert LIU_INSTRUCTION in text and "Cite" not in text
    with pytest.raises(ValueError):
        build_prompt(docs, ranks, "what?", "fancy")
    assert set(ARMS) == {"plain", "plain-both", "anchored", "anchored-both", "default", "bracket"}


def test_closed_book_prompt_has_no_documents() -> None:
    text = closed_book_prompt("who?")
    assert "Document" not in text and text.endswith("Question: who?\nAnswer:")


def _multi(golds: int, k: int) -> QAItem:
    gs = tuple(Passage(f"g{i}", f"G{i}", f"gold {i}") for i in range(golds))
    return QAItem("m", "q?", ("a",), gs[0], tuple(Passage(i, f"D{i}", f"d{i}") for i in range(k)), more_golds=gs[1:])


@pytest.mark.parametrize(("k", "golds"), [(4, 2), (4, 3), (10, 2), (10, 3), (10, 4), (20, 2), (20, 4)])
def test_gold_set_designs_place_every_gold_once_in_order(k: int, golds: int) -> None:
    item = _multi(golds, k)
    spans = {}
    for design in GOLD_DESIGNS:
        slots = gold_slots(design, k, golds)
        assert len(set(slots)) == golds and slots == sorted(slots) and all(1 <= s <= k for s in slots)
        docs = item.golds_at(slots, k)
        assert len(docs) == k and [docs[s - 1] for s in slots] == list(item.golds)
        assert [p for p in docs if p not in item.golds] == list(item.distractors[: k - golds])  # rank order kept
        spans[design] = slots
    assert spans["early"] == list(range(1, golds + 1)) and spans["late"] == list(range(k - golds + 1, k + 1))
    assert spans["split"][0] == 1 and spans["split"][-1] == k
    mid = (k + 1) / 2
    assert abs(sum(spans["middle"]) / golds - mid) <= 0.5  # centred on the middle of the context


def test_gold_set_design_errors() -> None:
    with pytest.raises(InvalidOptionError, match="unknown gold-set design"):
        gold_slots("centre", 10, 2)
    with pytest.raises(InvalidOptionError, match="1 <= golds < k"):
        gold_slots("early", 4, 4)
    item = _multi(2, 10)
    with pytest.raises(InvalidOptionError, match="need 2 distinct gold slots"):
        item.golds_at([3, 3], 10)
    with pytest.raises(EvalError, match="needs 10"):
        _multi(2, 3).golds_at([1, 12], 12)


def test_anchor_arms_render_their_style() -> None:
    docs = [Passage(0, "T", "Paris is in France."), Passage(1, "U", "Lyon."), Passage(2, "V", "Nice.")]
    default = build_prompt(docs, [1, 2, 3], "Where is Paris?", "default")
    assert '<document id="doc-1" position="1/3" score="1" title="T">' in default
    assert "for citations: [doc-1] [doc-2] [doc-3]" in default and "MIDDLE" not in default
    bracket = build_prompt(docs, [1, 2, 3], "Where is Paris?", "bracket")
    assert "[DOC_ID: doc-2 | REL_SCORE: 0.5 | POSITION: 2/3 | TITLE: U | ZONE: MIDDLE]" in bracket
    assert "[/DOC_ID: doc-2]" in bracket and "<document" not in bracket
    for arm in ARMS:
        text = build_prompt(docs, [1, 2, 3], "Where is Paris?", arm, instruction=MULTIHOP_INSTRUCTION)
        assert text.startswith(MULTIHOP_INSTRUCTION[:40]) and text.count("Where is Paris?") == (
            2 if arm.endswith("-both") else 1
        )
