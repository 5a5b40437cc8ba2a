"""The metric (Liu et al. first-line normalised match) and the benchmark analysis on synthetic rows."""

from __future__ import annotations

import math
from typing import Any

import pytest

from litm.bench._analysis import (
    ablation_cells,
    ablation_vs_plain,
    dead_zone_test,
    derived_cells,
    direct_check,
    fold_profiles,
    gain_intervals,
    gap_recovered,
    rank_weights,
    slot_cells,
    summarize,
)
from litm.bench._design import arrangement
from litm.bench._markdown import summary_markdown
from litm.eval._scoring import score_output
from litm.eval._stats import Cell


@pytest.mark.parametrize(
    ("output", "answers", "hit"),
    [
        (" Wilhelm Conrad Röntgen", ["Wilhelm Conrad Röntgen"], True),
        (" It was wilhelm conrad röntgen, in 1901.", ["Wilhelm Conrad Röntgen"], True),  # substring, case
        ("  The Beatles!\nQuestion: next", ["Beatles"], True),  # article and punctuation dropped
        (" 150,782 SEK", ["150782"], True),  # punctuation deleted, not spaced
        (" I do not know.\nWilhelm Conrad Röntgen", ["Wilhelm Conrad Röntgen"], False),  # only the first line
        (" Marie Curie", ["Wilhelm Conrad Röntgen"], False),
        ("", ["x"], False),
        (" 2026", ["2026", "the year 2026"], True),  # any accepted answer
    ],
)
def test_first_line_normalised_substring_match(output: str, answers: list[str], hit: bool) -> None:
    assert score_output(output, answers=answers, question="q?").hit is hit


def _slot_rows(pattern: dict[int, list[bool]], k: int) -> list[dict[str, Any]]:
    return [
        {"phase": "slot", "k": k, "qid": q, "fold": i % 2, "slot": s + 1, "hit": h}
        for i, (q, hits) in enumerate(pattern.items())
        for s, h in enumerate(hits)
    ]


# A U-shaped model: right at the edges, wrong in the middle, for every question.
U = [True, False, False, True]


def test_slot_cells_count_only_complete_questions() -> None:
    rows = _slot_rows({1: U, 2: U, 3: U}, 4)
    rows = [r for r in rows if not (r["qid"] == 3 and r["slot"] == 2)]  # question 3 unfinished
    cells = slot_cells(rows, 4)
    assert [(c.hits, c.n) for c in cells] == [(2, 2), (0, 2), (0, 2), (2, 2)]


def test_derived_accuracy_follows_each_strategy_order() -> None:
    rows = _slot_rows({q: U for q in range(1, 7)}, 4)
    d = derived_cells(rows, 4, ("none", "edges", "pyramid", "profile", "random"))
    assert [c.acc for c in d["none"]] == [1, 0, 0, 1]
    # edges (1 3 4 2): ranks 1 and 2 at the edges.
    assert [c.acc for c in d["edges"]] == [1, 1, 0, 0]
    assert [c.acc for c in d["pyramid"]] == [1, 1, 0, 0]
    # profile, measured on the other fold (also U), puts ranks 1 and 2 at the edges too.
    assert [c.acc for c in d["profile"]] == [1, 1, 0, 0]
    assert all(c.n == 6 for cells in d.values() for c in cells)
    # random: each question's own shuffle, so its accuracy per rank is a mix.
    expected = [sum(U[arrangement("random", 4, seed=q).index(r)] for q in range(1, 7)) for r in range(1, 5)]
    assert [c.hits for c in d["random"]] == expected


def test_profile_is_cross_fitted_not_tuned_on_the_test_question() -> None:
    # Fold 0 questions only answer in slot 1; fold 1 questions only in slot 4.
    rows = _slot_rows({1: [True, False, False, False], 2: [False, False, False, True]}, 4)
    profiles = fold_profiles(rows, 4)
    assert profiles[0].slot_weights(4) == [1, 0, 0, 0] and profiles[1].slot_weights(4) == [0, 0, 0, 1]
    d = derived_cells(rows, 4, ("profile",))
    # Each question's rank 1 goes where the *other* fold answers: both miss at rank 1.
    assert d["profile"][0].hits == 0


def test_gap_recovered_and_rank_distributions() -> None:
    assert math.isclose(sum(rank_weights("uniform", 10)), 1) and math.isclose(sum(rank_weights("decaying", 10)), 1)
    with pytest.raises(ValueError):
        rank_weights("zipf", 3)
    rows = _slot_rows({q: U for q in range(1, 5)}, 4)
    d = derived_cells(rows, 4, ("none", "edges"))
    slots = slot_cells(rows, 4)
    uni = gap_recovered(d, slots, "uniform")
    assert uni["none"]["gap_recovered"] == 0.5 and uni["edges"]["gap_recovered"] == 0.5  # uniform: any order ties
    dec = gap_recovered(d, slots, "decaying")
    assert dec["edges"]["gap_recovered"] > dec["none"]["gap_recovered"]
    assert dec["edges"]["gain_over_none"] > 0
    flat = _slot_rows({1: [True] * 4}, 4)
    assert math.isnan(
        gap_recovered(derived_cells(flat, 4, ("none",)), slot_cells(flat, 4), "uniform")["none"]["gap_recovered"]
    )


def test_dead_zone_test() -> None:
    deep = [Cell(20, 20), Cell(2, 20), Cell(1, 20), Cell(19, 20)]
    assert dead_zone_test(deep)["dead_zone"] is True
    flat = [Cell(10, 20)] * 4
    res = dead_zone_test(flat)
    assert res["dead_zone"] is False and res["p_value"] > 0.5


def test_direct_check_compares_like_with_like() -> None:
    rows = _slot_rows({1: U, 2: U}, 4)
    rows += [
        {"phase": "direct", "k": 4, "qid": 1, "slot": 4, "strategy": "pyramid", "hit": True},
        {"phase": "direct", "k": 4, "qid": 2, "slot": 2, "strategy": "pyramid", "hit": True},  # derivation: miss
    ]
    dc = direct_check(rows, 4)
    assert dc["pyramid"]["n"] == 2 and dc["pyramid"]["agree"] == 0.5
    assert dc["pyramid"]["direct"]["hits"] == 2 and dc["pyramid"]["derived"]["hits"] == 1


def test_summarize_shape() -> None:
    rows = _slot_rows({q: U for q in range(1, 5)}, 4)
    rows += [{"phase": "closed", "qid": 1, "hit": False}, {"phase": "oracle", "qid": 1, "hit": True}]
    s = summarize(rows, {"model": {"name": "m"}})["by_k"]["4"]
    assert s["questions"] == 4 and s["closed_book"]["n"] == 1 and s["oracle"]["acc"] == 1
    assert set(s["headline"]) == {"uniform", "decaying"}
    assert len(s["slot_accuracy"]) == 4 and set(s["derived"]) >= {"none", "edges", "profile"}


def test_uniform_gold_rank_cannot_favour_any_placement() -> None:
    # Every strategy is a permutation of slots, so under a uniform rank distribution all tie.
    pattern = {q: [q % 3 == 0, False, q % 2 == 0, True, False, q % 5 == 0] for q in range(1, 13)}
    rows = _slot_rows(pattern, 6)
    d = derived_cells(rows, 6)
    table = gap_recovered(d, slot_cells(rows, 6), "uniform")
    assert len({v["expected_acc"] for v in table.values()}) == 1 and set(table) == set(d)


def test_direct_check_pools_only_prompts_not_already_in_the_slot_run() -> None:
    rows = _slot_rows({1: U}, 4)
    rows += [
        {"phase": "direct", "k": 4, "qid": 1, "slot": 1, "strategy": "none", "hit": True, "same_prompt_as": "slot"},
        {"phase": "direct", "k": 4, "qid": 1, "slot": 2, "strategy": "edges", "hit": True},
    ]
    dc = direct_check(rows, 4)
    assert dc["none"]["agree"] == 1.0 and dc["all reordered"]["n"] == 1 and dc["all reordered"]["agree"] == 0.0


def test_direct_rows_placed_by_a_superseded_profile_are_not_counted() -> None:
    rows = _slot_rows({1: U, 2: U}, 4)
    current = arrangement("profile", 4, profile=fold_profiles(rows, 4)[1])
    stale = [4, 3, 2, 1] if current != [4, 3, 2, 1] else [1, 2, 3, 4]
    for order in (current, stale):
        rows.append(
            {
                "phase": "direct",
                "k": 4,
                "qid": 1,
                "slot": order.index(1) + 1,
                "strategy": "profile",
                "hit": True,
                "order": order,
            }
        )
    assert direct_check(rows, 4)["profile"]["n"] == 1


def test_gain_interval_is_paired_over_questions_and_reproducible() -> None:
    # Only the last slot answers, for 10 of 12 questions: pyramid (rank 1 last) must gain over rank order, and the
    # paired interval must exclude 0; every strategy against itself (none) gains exactly 0.
    pattern = {q: [False, False, False, q > 2] for q in range(1, 13)}
    rows = _slot_rows(pattern, 4)
    ci = gain_intervals(rows, 4, "decaying")
    assert ci["none"] == (0.0, 0.0)
    assert 0 < ci["pyramid"][0] <= ci["pyramid"][1]
    assert ci == gain_intervals(rows, 4, "decaying")  # seeded
    mixed = _slot_rows({q: [q % 2 == 0, q % 3 == 0, q % 5 == 0, q % 7 != 0] for q in range(1, 41)}, 4)
    mixed_ci = gain_intervals(mixed, 4, "decaying")
    assert mixed_ci["langchain"] == mixed_ci["pyramid"]  # the same order at k = 4 must get the same interval
    # A model with no positional preference: no strategy's interval leaves 0.
    flat = _slot_rows({q: [q % 3 == 0] * 4 for q in range(1, 13)}, 4)
    assert all(v == (0.0, 0.0) for v in gain_intervals(flat, 4, "decaying").values())


def test_headline_carries_the_gain_interval() -> None:
    rows = _slot_rows({q: [False, False, False, q > 2] for q in range(1, 13)}, 4)
    table = summarize(rows)["by_k"]["4"]["headline"]["decaying"]
    lo, hi = table["pyramid"]["gain_ci"]
    assert lo <= table["pyramid"]["gain_over_none"] <= hi


def test_ablation_arms_are_compared_with_plain_on_the_same_prompts() -> None:
    rows = _slot_rows({q: [True, False, False, q <= 8] for q in range(1, 11)}, 4)
    for q in range(1, 11):
        for slot in (1, 4):
            plain = slot == 1 or q <= 8
            # "both" loses the last slot's answers; "anchored" is plain with one answer gained at slot 4
            arms = {"plain-both": plain and slot == 1, "anchored": plain or q == 10, "anchored-both": plain}
            rows += [
                {"phase": "ablation", "k": 4, "qid": q, "slot": slot, "arm": a, "hit": h} for a, h in arms.items()
            ]
    paired = ablation_vs_plain(rows, 4)
    assert paired["plain-both"] == {"pairs": 20, "better": 0, "worse": 8, "p_value": 0.00781, "diff": -0.4,
                                    "lo": -0.6, "hi": -0.2}  # fmt: skip
    assert paired["anchored"]["better"] == 1 and paired["anchored"]["worse"] == 0
    assert paired["anchored"]["p_value"] == 1.0 and paired["anchored-both"]["p_value"] == 1.0
    text = summary_markdown(summarize(rows))
    assert ("`plain-both` -0.40 [-0.60, -0.20] on 20 prompts, right where plain missed 0, missed where plain "
            "was right 8, p = 0.0078") in text


def test_an_arm_added_at_more_slots_is_compared_with_plain_wherever_it_ran() -> None:
    # A copied run has "default" at slot 2 only; "late" was added on top at slots 1 and 2. Slot 1 must not be
    # dropped for lacking "default", and slot 2 still needs both arms (a question stopped mid-way is left out).
    rows = _slot_rows({q: [q <= 5, q <= 2, False] for q in range(1, 11)}, 3)
    rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": 2, "arm": "default", "hit": q <= 3} for q in range(1, 11)]
    rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": s, "arm": "late", "hit": True}
             for q in range(1, 11) for s in (1, 2) if (q, s) != (10, 2)]  # fmt: skip
    paired = ablation_vs_plain(rows, 3)
    assert paired["late"]["pairs"] == 19 and paired["late"]["better"] == 5 + 7
    assert paired["default"]["pairs"] == 9 and paired["default"]["better"] == 1
    cells = ablation_cells(rows, 3)
    assert cells["late"][1].n == 10 and cells["late"][2].n == 9 and 1 not in cells["default"]
    assert "likelihood" not in paired["late"]  # the slot rows were not scored: no likelihood difference
    for r in rows:
        r["likelihood"] = -2.5 if r.get("arm") == "late" else -2.0
    mean, lo, hi = ablation_vs_plain(rows, 3)["late"]["likelihood"]
    assert mean == -0.5 and lo == hi == -0.5


def test_anchor_element_arms_are_also_paired_with_the_full_default() -> None:
    rows = _slot_rows({q: [False, False, False] for q in range(1, 11)}, 3)
    for q in range(1, 11):
        arms = {"default": q <= 2, "minimal": q <= 6, "bracket": True, "default-recap": q <= 2}
        rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": 2, "arm": a, "hit": h} for a, h in arms.items()]
    versus = ablation_vs_plain(rows, 3, base="default")
    assert set(versus) == {"minimal", "default-recap"}  # bracket is another style, not an element of the default
    assert versus["minimal"]["better"] == 4 and versus["minimal"]["worse"] == 0 and versus["minimal"]["diff"] == 0.4
    assert versus["default-recap"]["better"] == versus["default-recap"]["worse"] == 0
    text = summary_markdown(summarize(rows))
    assert "Each anchor element against the full `default`" in text and "`minimal` +0.40 [" in text
