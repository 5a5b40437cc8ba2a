"""Chunking: every chunk fits the token limit, offsets point home, cuts fall on sentence and paragraph ends."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litm.errors import LitmError, RetrievalError
from litm.eval._datasets import nq_rows
from litm.models.tokenizers._bpe import OpenAITokenizer
from litm.retrieve._chunking import chunk_spans, token_counter
from litm.retrieve._embedder import MiniLMTokenizer
from litm.util._sentences import split_sentences

MINILM = MiniLMTokenizer()


def words(text: str) -> int:
    return len(text.split())


def texts(spans: list, text: str) -> list[str]:
    return [text[s.start : s.end] for s in spans]


def nq_text(n: int = 30) -> str:
    return "\n\n".join(r["ctxs"][0]["text"] for r in nq_rows()[:n])


def test_real_text_chunks_fit_the_embedder_exactly() -> None:
    text = nq_text()
    spans = chunk_spans(text, MINILM.count, max_tokens=128, overlap=24)
    assert len(spans) > 10
    for span in spans:
        chunk = text[span.start : span.end]
        assert MINILM.count(chunk) == span.tokens <= 128  # the reported count is the real one
        assert chunk == chunk.strip() and chunk
    # In order, and nothing of the text is lost: every sentence's first word lies inside some chunk.
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    covered = [False] * len(text)
    for span in spans:
        covered[span.start : span.end] = [True] * (span.end - span.start)
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def test_cuts_fall_after_sentences_and_overlap_repeats_whole_sentences() -> None:
    text = " ".join(f"Sentence {i} is here." for i in range(40))
    spans = chunk_spans(text, words, max_tokens=20, overlap=8)
    for chunk in texts(spans, text):
        assert chunk.startswith("Sentence") and chunk.endswith("here.")
        assert words(chunk) <= 20
    for a, b in itertools.pairwise(spans):
        shared = text[b.start : a.end] if b.start < a.end else ""
        assert 0 < words(shared) <= 8  # one paragraph: consecutive chunks overlap by whole sentences
        assert shared.endswith("here.")


def test_paragraph_end_is_preferred_and_not_overlapped() -> None:
    para1 = " ".join(f"Alpha {i} ends." for i in range(4))  # 12 words
    para2 = " ".join(f"Beta {i} ends." for i in range(6))  # 18 words
    text = f"{para1}\n\n{para2}"
    chunks = texts(chunk_spans(text, words, max_tokens=20, overlap=6), text)
    # The first paragraph fits whole (12 of 20 is at least half full): the cut goes there, with no overlap.
    assert chunks[0] == para1
    assert chunks[1].startswith("Beta 0")


def test_a_chunk_does_not_end_early_when_the_paragraph_end_is_too_soon() -> None:
    text = "Short one.\n\n" + " ".join(f"Word {i} here." for i in range(20))
    chunks = texts(chunk_spans(text, words, max_tokens=12, overlap=0), text)
    assert chunks[0].startswith("Short one.") and words(chunks[0]) > 2


def test_overlong_sentence_is_cut_between_words() -> None:
    text = " ".join(f"w{i}" for i in range(50)) + "."
    spans = chunk_spans(text, words, max_tokens=10, overlap=0)
    assert [s.tokens for s in spans] == [10, 10, 10, 10, 10]
    assert " ".join(texts(spans, text)) == text


def test_unspaced_cjk_is_cut_between_characters_within_the_limit() -> None:
    text = "Python的高级特性包括生成器装饰器和上下文管理器" * 30  # no spaces, no full stop
    spans = chunk_spans(text, MINILM.count, max_tokens=64, overlap=8)
    assert len(spans) > 5
    assert all(MINILM.count(c) <= 64 for c in texts(spans, text))
    assert "".join(texts(spans, text)) == text


@pytest.mark.parametrize("sep", [" ", ""])
def test_cjk_chunks_end_where_the_sentence_splitter_ends_sentences(sep: str) -> None:
    # Unspaced CJK (sep="") splits at 。 once litm.util._sentences learns to; either way chunk ends must be
    # sentence ends whenever a sentence fits, so the chunker follows the one splitter the package has.
    text = sep.join(["装饰器可以修改函数的行为。", "生成器按需产生数据。", "上下文管理器负责清理资源。"])
    sentences = split_sentences(text)
    spans = chunk_spans(text, MINILM.count, max_tokens=20, overlap=0)
    ends, at = set(), 0
    for sentence in sentences:
        at = text.index(sentence, at) + len(sentence)
        ends.add(at)
    fits = all(MINILM.count(s) <= 20 for s in sentences)
    assert not fits or {s.end for s in spans} <= ends
    assert all(MINILM.count(c) <= 20 for c in texts(spans, text))


def test_a_litm_tokenizer_can_do_the_counting() -> None:
    tok = OpenAITokenizer("cl100k_base")
    count, name = token_counter(tok)
    assert name == tok.name
    text = nq_text(5)
    spans = chunk_spans(text, count, max_tokens=60, overlap=10)
    assert all(tok.count(c) <= 60 for c in texts(spans, text))


def test_default_counter_is_minilm() -> None:
    count, name = token_counter(None)
    assert name == "minilm-wordpiece" and count("Lost in the middle") == 6


@pytest.mark.parametrize(("max_tokens", "overlap"), [(2, 0), (10, 10), (10, -1)])
def test_impossible_settings_are_typed_errors(max_tokens: int, overlap: int) -> None:
    with pytest.raises(RetrievalError) as info:
        chunk_spans("Some text.", MINILM.count, max_tokens=max_tokens, overlap=overlap)
    assert isinstance(info.value, LitmError) and isinstance(info.value, ValueError)


def test_blank_text_has_no_chunks() -> None:
    assert chunk_spans("  \n\n \n", words) == []


@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab c.\n!?。高"), min_size=0, max_size=40), min_size=0, max_size=12
    ).map("".join),
    st.integers(min_value=3, max_value=30),
    st.integers(min_value=0, max_value=10),
)
def test_any_text_chunks_within_limit_and_offsets_are_exact(text: str, max_tokens: int, overlap: int) -> None:
    overlap = min(overlap, max_tokens - 1)
    spans = chunk_spans(text, MINILM.count, max_tokens=max_tokens, overlap=overlap)
    for span in spans:
        chunk = text[span.start : span.end]
        assert chunk.strip() == chunk != ""
        assert span.tokens == MINILM.count(chunk) <= max_tokens
    assert [s.start for s in spans] == sorted({s.start for s in spans})  # strictly advancing
    kept = "".join(text[s.start : s.end] for s in spans)
    assert all(ch in kept for ch in set(text) if not ch.isspace())
