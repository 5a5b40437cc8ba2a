"""The one sentence splitter (litm.util._sentences): Latin abbreviations, CJK punctuation, and its contract."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litm.util._sentences import first_sentence, sentence_spans, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Chinese puts no space after its full stop: the old splitter returned this text whole.
        ("我们今天去北京。明天去上海！你呢？", ["我们今天去北京。", "明天去上海！", "你呢？"]),
        ("他来了吗？！真的。", ["他来了吗？！", "真的。"]),
        ("今日は晴れです。明日は雨でしょう。", ["今日は晴れです。", "明日は雨でしょう。"]),
        # A full stop inside a Japanese quotation does not end the sentence that quotes it.
        ("「行くよ。」と彼は言った。次の日だ。", ["「行くよ。」と彼は言った。", "次の日だ。"]),
        ("Paris is big. 巴黎很大。Berlin too.", ["Paris is big.", "巴黎很大。", "Berlin too."]),
        # The old splitter cut after every "Dr." and "e.g.".
        ("Dr. Smith is in. Mr. Jones is out.", ["Dr. Smith is in.", "Mr. Jones is out."]),
        ("Bring fruit, e.g. Apples or pears. Then leave.", ["Bring fruit, e.g. Apples or pears.", "Then leave."]),
        ("Use one (i.e. The first). Done.", ["Use one (i.e. The first).", "Done."]),
        ("It costs 3.50 dollars. Pi is 3.14159 roughly.", ["It costs 3.50 dollars.", "Pi is 3.14159 roughly."]),
        (
            "See https://example.com/a.b/c.html?q=1.5 for more. Then stop.",
            ["See https://example.com/a.b/c.html?q=1.5 for more.", "Then stop."],
        ),
        ("He works at the U.S. Army base. Yes.", ["He works at the U.S. Army base.", "Yes."]),
        ("J. R. R. Tolkien wrote it. Done.", ["J. R. R. Tolkien wrote it.", "Done."]),
        ('He said "Stop." Then silence.', ['He said "Stop."', "Then silence."]),
        ("no capital after. the end", ["no capital after. the end"]),
        ("Line one.\n\nLine two?  Yes!", ["Line one.", "Line two?", "Yes!"]),
        ("", []),
        ("   \n ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_spans_cut_exact_prefixes_of_cjk_text() -> None:
    # What truncation needs: a prefix of whole sentences, byte for byte (no space invented between them).
    text = "第一句。第二句！第三句？"
    assert [text[: end] for _, end in sentence_spans(text)] == ["第一句。", "第一句。第二句！", text]


def test_first_sentence() -> None:
    assert first_sentence("Call Dr. Lee\n at 9. She knows.") == "Call Dr. Lee at 9."
    assert first_sentence("你好。我是小明。") == "你好。"
    assert first_sentence("") == ""
    assert first_sentence("word " * 100, limit=20) == "word word word word…"
    assert len(first_sentence("x" * 500)) == 240


def test_long_text_of_abbreviations_is_one_sentence() -> None:
    # Every candidate boundary is refused; the walk back to the last word keeps this linear.
    text = "See Dr. Who and " * 20_000
    assert split_sentences(text) == [text.strip()]


# Texts built from the pieces the rules are about: abbreviations, initialisms, decimals, quotes, CJK marks.
PIECES = [*"aZ9 .!?\n\"')(「」。！？", "Dr.", "U.S.", "e.g.", "3.5", " A", "。B", "\u3000"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@given(TEXT)
def test_spans_partition_the_text(text: str) -> None:
    spans = sentence_spans(text)
    pos = 0
    for start, end in spans:
        assert start >= pos and end > start
        assert text[pos:start].strip() == "", "only whitespace lies between two sentences"
        piece = text[start:end]
        assert piece == piece.strip()
        pos = end
    assert text[pos:].strip() == ""
    # Rejoined with spaces, the sentences are the text up to whitespace.
    assert "".join(" ".join(split_sentences(text)).split()) == "".join(text.split())
    collapsed = " ".join(text.split())
    assert first_sentence(text, limit=10_000) == (split_sentences(collapsed)[0] if collapsed else "")
