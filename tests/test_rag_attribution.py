"""litm's attribution: which placed documents contain a base model's answer, with offsets that point home."""

from __future__ import annotations

from litm.placement import Doc, place
from litm.rag.attribution import ground


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
