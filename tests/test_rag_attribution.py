"""litm's attribution: which placed documents contain a base model's answer, with offsets that point home."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from litm.placement import Doc, place
from litm.rag._attribution import content_tokens, ground


def _plan(*texts: str, starts: tuple[int, ...] = ()) -> object:
    docs = [
        Doc(text=t, id=f"d{i}", metadata={"start": starts[i], "end": starts[i] + len(t)} if starts else {})
        for i, t in enumerate(texts)
    ]
    return place(docs, "none")


def test_span_found_across_case_punctuation_and_spacing_with_exact_offsets() -> None:
    text = "In 1901, Wilhelm   Conrad Röntgen (Germany) won."
    [g] = ground("  wilhelm conrad RÖNTGEN. ", _plan(text))  # type: ignore[arg-type]
    assert text[g.start : g.end] == "Wilhelm   Conrad Röntgen"
    assert (g.id, g.slot, g.rank) == ("d0", 1, 1)
    assert g.source_start is None  # the document carries no offsets in a source


def test_offsets_in_the_source_file_add_the_chunk_start() -> None:
    source = "Intro paragraph.\n\nParis is the capital of France."
    chunk = source[18:]
    [g] = ground("Paris", _plan(chunk, starts=(18,)))  # type: ignore[arg-type]
    assert (g.source_start, g.source_end) == (18, 23)
    assert source[g.source_start : g.source_end] == "Paris"


def test_whole_words_only_for_spaced_scripts() -> None:
    plan = _plan("The code is 19012 and the cat sat.", "It was 1901.")
    assert [g.id for g in ground("1901", plan)] == ["d1"]  # type: ignore[arg-type]
    assert ground("at", plan) == ()  # type: ignore[arg-type]  # inside "cat" and "sat", never a word


def test_cjk_spans_match_without_word_boundaries() -> None:
    text = "生成器是 Python 的一种高级特性, 函数体中出现 yield。"
    [g] = ground("高级特性", _plan(text))  # type: ignore[arg-type]
    assert text[g.start : g.end] == "高级特性"


def test_every_document_that_contains_the_answer_in_slot_order() -> None:
    plan = place([Doc(text="Rome is old.", id="a"), Doc(text="No.", id="b"), Doc(text="rome!", id="c")], "none")
    assert [(g.id, g.slot) for g in ground("Rome", plan)] == [("a", 1), ("c", 3)]


def test_too_short_empty_or_absent_answers_ground_nothing() -> None:
    plan = _plan("A is the first letter.")
    for answer in ("", "   ", "A", "...", "Zanzibar"):
        assert ground(answer, plan) == ()  # type: ignore[arg-type]


def test_a_leading_list_marker_is_not_part_of_the_span() -> None:
    plan = _plan("列表推导式用一行表达式构造列表。", "It costs 1.5 million.")
    assert [g.id for g in ground("1. 列表推导式", plan)] == ["d0"]  # type: ignore[arg-type]
    assert [g.id for g in ground("1.5 million", plan)] == ["d1"]  # type: ignore[arg-type]  # a number stays


# -- answers in other words (issue 40, defect 8) ----------------------------------------------------------------

KB = Path(__file__).parent / "data" / "rag_kb" / "docs"


def _kb() -> object:
    files = sorted(KB.glob("*.md"))
    return place([Doc(text=f.read_text(encoding="utf-8"), id=f"{f.name}#0") for f in files], "none")


# Correct answers that restate a passage without copying it: each was "in none of the placed documents".
PARAPHRASES = [
    ("it is aged for nine months", "manchego.md#0", "The wheels mature for nine months in natural caves"),
    ("Manchego wheels are matured for 9 months.", "manchego.md#0", "The wheels mature for nine months"),
    ("The lighthouse was designed and built by Margaret Ellison in 1874", "lighthouse.md#0", "built in 1874 by"),
    ("A return ticket is 12 euros", "ferry.md#0", "A return ticket costs 12 euros."),
    ("Its cider is sold as Ansel Gold.", "orchard.md#0", "sells its cider under the name Ansel Gold"),
    ("The library has 85000 books today", "library.md#0", "It now holds 85,000 books"),
    ("春茶在四月采摘", "tea.md#0", "茶园每年四月采摘春茶。"),
    ("白毫银针要晒三天", "tea.md#0", "白毫银针需要晾晒三天。"),
]


def test_a_paraphrased_answer_is_grounded_with_its_span_and_score() -> None:
    plan = _kb()
    for answer, doc_id, inside in PARAPHRASES:
        found = ground(answer, plan)  # type: ignore[arg-type]
        assert [g.id for g in found] == [doc_id], answer
        [g] = found
        text = next(s.doc.text for s in plan.slots if s.doc.id == doc_id)  # type: ignore[attr-defined]
        span = text[g.start : g.end]
        assert inside in span and len(span) < len(text), (answer, span)
        assert 0.6 <= g.score <= 1.0, (answer, g.score)
        assert g.to_dict()["score"] == g.score


def test_a_verbatim_answer_still_scores_one_and_citations_are_not_part_of_it() -> None:
    plan = _kb()
    [g] = ground("Margaret Ellison [lighthouse.md#0]", plan)  # type: ignore[arg-type]
    assert (g.id, g.score) == ("lighthouse.md#0", 1.0)


# Answers the documents do not support: a wrong number, a wrong name, something no document says.
UNSUPPORTED = [
    "it is aged for ten months",
    "The wheels mature for 12 months",  # twelve months is another cheese's
    "The lighthouse was built in 1901",
    "A return ticket costs 15 euros",
    "Paris is the capital of France",
    "The orchard sells pears to Lisbon",
    "春茶在五月采摘",
    "白毫银针要晒五天",
]


def test_an_unsupported_answer_stays_ungrounded() -> None:
    plan = _kb()
    for answer in UNSUPPORTED:
        assert ground(answer, plan) == (), answer  # type: ignore[arg-type]
    # A base model's degenerate "1. 1. 1. ..." is one short token, in almost every document: not looked up.
    assert ground("1. 1. 1. 1. 1. 1", plan) == ()  # type: ignore[arg-type]


def test_the_words_of_the_question_are_not_what_grounds_an_answer() -> None:
    # "The tea garden lies by the sea": without the question, "tea garden lies" is 3 of its 4 bigrams.
    plan: Any = _kb()
    where = "云岭茶园位于哪里？"  # noqa: RUF001
    assert [g.id for g in ground("茶园位于海边", plan)] == ["tea.md#0"]
    assert ground("茶园位于海边", plan, question=where) == ()
    assert [g.id for g in ground("茶园位于山坡上", plan, question=where)] == ["tea.md#0"]
    assert ground("The lighthouse was built", plan, question="Who built the lighthouse?") == ()
    [g] = ground("it is aged for nine months", plan, question="How long do Manchego wheels mature?")
    assert g.id == "manchego.md#0" and g.score == 0.667


SENTENCES = [
    "The Kestrel-3 survey robot runs on four wheels and a lithium battery that lasts 14 hours.",
    "Visitors release paper lanterns over Lake Mirel at sunset.",
    "The reading room stays open until 9 pm on Thursdays.",
    "The ferry from Dunmore to the island of Skellan takes 45 minutes.",
]


@settings(max_examples=40, deadline=None)
@given(which=st.sampled_from(SENTENCES), data=st.data())
def test_content_words_in_any_order_ground_and_a_changed_number_never_does(which: str, data: st.DataObject) -> None:
    plan = _kb()
    tokens, numbers = content_tokens(which)
    words = [w for w in which.rstrip(".").split() if w.lower().strip(",") not in ("the", "a", "on", "of")]
    kept = data.draw(st.permutations(words))[: max(2, int(len(words) * 0.8))]
    answer = " ".join(kept)
    found = ground(answer, plan)  # type: ignore[arg-type]
    if not set(content_tokens(answer)[1]) - numbers:
        assert found and all(g.score >= 0.6 for g in found), answer
    # The same words with every number changed (to one no document holds) are supported by nothing.
    changed = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 100), answer)
    if changed != answer:
        assert ground(changed, plan) == (), changed  # type: ignore[arg-type]
    assert tokens
