"""Deterministic scoring (Liu et al. normalised first-line match) and the miss classes."""

from __future__ import annotations

import pytest

from litm.eval._scoring import MISS_CLASSES, first_line, normalize, score_output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Answer", "answer"),
        ("  Wilhelm  Conrad\tRöntgen. ", "wilhelm conrad röntgen"),
        ("an apple, a pear & the fig!", "apple pear fig"),
        ("theatre another", "theatre another"),  # articles only as whole words
        ("«Quoted» — dash", "quoted dash"),
        ("482,913", "482913"),
        ("", ""),
    ],
)
def test_normalize_follows_liu_et_al(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_first_line_strips_leading_blank_lines() -> None:
    assert first_line("\n\n  482913.\nQuestion: more") == "482913."
    assert first_line("") == ""


def test_hit_is_a_normalised_substring_of_the_first_line_only() -> None:
    assert score_output(" The code is 482913.", answers=["482913"], question="q").hit
    assert score_output(" röntgen", answers=["Wilhelm Conrad Röntgen", "Röntgen"], question="q").hit
    # The answer on the second line does not count: Liu et al. score the first line.
    late = score_output(" I think\n482913", answers=["482913"], question="q")
    assert not late.hit


def test_multi_is_scored_by_recall_over_the_whole_output() -> None:
    targets = ["111111", "222222", "444444"]
    s = score_output(" 111111, 222222\n333333", answers=["111111"], question="q", targets=targets)
    assert s.found == (True, True, False)
    assert s.score == pytest.approx(2 / 3)
    assert not s.hit and s.miss == "partial"
    q = "codes for A, B and C?"
    echoed = score_output(" The codes for A, B and C are 111111", answers=[], question=q, targets=targets)
    assert echoed.miss == "partial"  # restating the question around a recalled fact is not an echo
    assert score_output(" no idea", answers=[], question="q", targets=targets).miss == "other"
    full = score_output(" 1, 2 and 3", answers=[], question="q", targets=["1", "2", "3"])
    assert full.hit and full.score == 1.0


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("", "empty"),
        ("  \n ... \n", "empty"),
        (" Question: What is the access code for the Kivo vault?", "echo"),
        (" What is the access code for the Kivo vault", "echo"),
        (' "b7a55693-86be-431d-abd7-679ff651d03c"', "wrong_item"),
        (" The schooner was built in the harbour town of Port Lovely.", "copied_context"),
        (" 999999", "other"),
    ],
)
def test_miss_classes(output: str, expected: str) -> None:
    s = score_output(
        output,
        answers=["482913"],
        question="Question: What is the access code for the Kivo vault?",
        distractors=["b7a55693-86be-431d-abd7-679ff651d03c"],
        distractor_positions={"b7a55693-86be-431d-abd7-679ff651d03c": 0.0},
        document="Filler. The schooner was built in the harbour town of Port Lovely. More filler.",
    )
    assert not s.hit
    assert s.miss == expected
    assert s.miss in MISS_CLASSES


@pytest.mark.parametrize(
    ("output", "truncated", "expected"),
    [
        (" The access code for the Mosusu vault is 93405", True, "truncated"),  # cut inside the answer
        (" The access code for the Mosusu vault is 93405", False, "echo"),  # stopped there by itself
        (" The Mosusu vault is a 100-year-old vault that", True, "other"),  # rambling, not an answer on its way
        (" 1000000000000000000000", True, "other"),
        (" 93\nQuestion: more text", True, "other"),  # the first line ended before max_tokens did
    ],
)
def test_truncated_only_when_max_tokens_cut_inside_an_answer(output: str, truncated: bool, expected: str) -> None:
    q = "What is the access code for the Mosusu vault?"
    assert score_output(output, answers=["934053"], question=q, truncated=truncated).miss == expected


def test_wrong_item_and_copied_span_report_where_they_came_from() -> None:
    s = score_output(
        " v-last", answers=["v-gold"], question="q", distractors=["v-last"], distractor_positions={"v-last": 1.0}
    )
    assert (s.miss, s.copied_position) == ("wrong_item", 1.0)
    doc = "one two three four five six seven eight nine ten"
    s = score_output(" one two three four five", answers=["x"], question="q", document=doc)
    assert s.miss == "copied_context" and s.copied_position == 0.0


def test_a_hit_is_never_classed_as_a_miss_even_if_it_also_echoes() -> None:
    s = score_output(
        " the access code for the Kivo vault is 482913",
        answers=["482913"],
        question="What is the access code for the Kivo vault?",
    )
    assert s.hit and s.miss is None


def test_empty_answer_string_never_matches() -> None:
    assert not score_output(" anything", answers=["", "the"], question="q").hit
