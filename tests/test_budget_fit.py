"""The token gate's guarantees, checked over many random cases with a real tokenizer (cl100k, offline)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.budget import Counter, fit
from litm.errors import ContextBudgetExceeded, LitmError
from litm.prompt import PromptBuilder
from litm.tokens import TiktokenTokenizer

TOK = TiktokenTokenizer("cl100k_base")
BUILDER = PromptBuilder(strategy="pyramid")

# Unicode text with sentence ends, so truncation has boundaries to cut at.
sentence = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40
).map(lambda s: s.strip() + ".")
doc_text = st.lists(sentence, min_size=1, max_size=6).map(" ".join)
docs_st = st.lists(doc_text, min_size=0, max_size=14).map(
    lambda texts: [{"id": f"d{i}", "text": t, "score": 1.0 - i / 100} for i, t in enumerate(texts)]
)


@settings(max_examples=10_000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    docs=docs_st,
    question=st.text(min_size=1, max_size=60).filter(str.strip),
    budget=st.integers(min_value=1, max_value=900),
    reserve=st.integers(min_value=0, max_value=50),
    truncate=st.booleans(),
)
def test_fit_never_exceeds_budget_and_drops_lowest_ranked_first(
    docs: list[dict[str, Any]], question: str, budget: int, reserve: int, truncate: bool
) -> None:
    max_input = budget + reserve
    floor = TOK.count(BUILDER.build([], question).text)
    try:
        result = fit(docs, question, BUILDER, TOK, max_input, reserve, truncate=truncate)
    except ContextBudgetExceeded as err:
        # Raised exactly when even the prompt with zero documents does not fit.
        assert floor > budget
        assert err.floor == floor and err.budget == budget
        return
    assert floor <= budget
    assert TOK.count(result.prompt.text) == result.tokens <= budget
    kept_ids = [d.id for d in result.kept]
    # The survivors are a best-ranked prefix: nothing is dropped while a lower-ranked document survives.
    assert kept_ids == [d["id"] for d in docs[: len(kept_ids)]]
    assert [d.id for d in result.dropped] == [d["id"] for d in docs[len(kept_ids) :]]
    assert sorted(result.prompt.ids) == sorted(kept_ids)
    if result.truncated:
        assert result.truncated == kept_ids[-1]
    # Maximal: one more document would not have fitted (counts are monotone here, cl100k on our layout).
    if result.dropped and not result.truncated:
        bigger = BUILDER.build([*result.kept, result.dropped[0]], question)
        assert TOK.count(bigger.text) > budget


def test_dropped_in_rank_order_and_placement_reapplied() -> None:
    docs = [{"id": f"d{i}", "text": f"Passage {i}. " + "Filler sentence here. " * 20, "score": 0.9 - i / 20}
            for i in range(8)]
    full = TOK.count(BUILDER.build(docs, "Q?").text)
    result = fit(docs, "Q?", BUILDER, TOK, full - 100)
    assert [d.id for d in result.dropped] == [f"d{i}" for i in range(len(result.kept), 8)]
    # Pyramid over the survivors: the best document sits last, next to the question.
    assert result.prompt.ids[-1] == "d0" and result.prompt.ids[0] == "d1"


def test_score_ranking_is_respected() -> None:
    docs = [{"id": f"d{i}", "text": "word " * 50, "score": s} for i, s in enumerate([0.1, 0.9, 0.5, 0.7])]
    result = fit(docs, "Q?", BUILDER, TOK, TOK.count(BUILDER.build(docs[:2], "Q?").text) + 5, rank_by="score")
    assert [d.id for d in result.kept] == ["d1", "d3"]
    assert [d.id for d in result.dropped] == ["d2", "d0"]


def test_truncate_keeps_a_sentence_prefix() -> None:
    docs = [{"id": "a", "text": "Alpha is first. " * 10}, {"id": "b", "text": "Beta one. Beta two. Beta three. " * 10}]
    budget = TOK.count(BUILDER.build(docs[:1], "Q?").text) + 40
    result = fit(docs, "Q?", BUILDER, TOK, budget, truncate=True)
    assert result.truncated == "b" and result.tokens <= budget
    cut = result.kept[-1]
    assert docs[1]["text"].startswith(cut.text) and cut.text.endswith(".") and cut.metadata["truncated"] is True
    assert result.dropped == []


def test_chat_format_counts_messages() -> None:
    docs = [{"id": f"d{i}", "text": "word " * 40} for i in range(6)]
    r_text = fit(docs, "Q?", BUILDER, TOK, 200)
    r_chat = fit(docs, "Q?", BUILDER, TOK, 200, format="openai")
    assert r_chat.tokens == TOK.count_messages(r_chat.prompt.messages("openai")) <= 200
    assert len(r_chat.kept) <= len(r_text.kept)


def test_error_carries_numbers_and_advice() -> None:
    with pytest.raises(ContextBudgetExceeded) as info:
        fit(["some document"], "a question that is long " * 20, BUILDER, TOK, 30)
    err = info.value
    assert err.budget == 30 and err.floor is not None and err.floor > 30 and err.prompt_tokens >= err.floor
    assert "raise max_input_tokens" in str(err)


def test_tokenizer_calls_grow_logarithmically() -> None:
    docs = [{"id": f"d{i}", "text": "A sentence of filler text. " * 5} for i in range(500)]
    counter = Counter(text_fn=TOK.count)
    result = fit(docs, "Q?", BUILDER, counter, 4000)
    assert 0 < len(result.kept) < 500
    assert result.count_calls <= 2 + 10  # full, floor, then a binary search over 500


def test_bad_arguments() -> None:
    with pytest.raises(LitmError):
        fit(["a"], "q", BUILDER, TOK, -1)
    with pytest.raises(ContextBudgetExceeded):
        fit(["a"], "q", BUILDER, TOK, 10, reserve_output_tokens=10)
    with pytest.raises(LitmError, match="build"):
        fit(["a"], "q", object(), TOK, 100)
    with pytest.raises(LitmError, match="question must be str"):
        fit(["a"], None, BUILDER, TOK, 100)  # type: ignore[arg-type]
