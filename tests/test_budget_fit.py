"""The token gate's guarantees, checked over many random cases with a real tokenizer (cl100k, offline).

Ranking and placement are fit's own options (one PlacementOptions value, with shorthands); the builder carries
none. Approximate counts carry the margin.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.budget import fit
from litm.budget._counting import Counter
from litm.errors import (
    ContextBudgetExceeded,
    InvalidOptionError,
    InvalidOptionTypeError,
    LitmError,
    PromptError,
    PromptOptionError,
    UnsupportedTypeError,
)
from litm.models.tokenizers import count_request
from litm.models.tokenizers._base import UNSTATED_MARGIN
from litm.models.tokenizers._bpe import OpenAITokenizer
from litm.placement import PlacementOptions, place
from litm.placement._registry import DEFAULT_STRATEGY
from litm.prompt import PromptBuilder, Wording
from litm.tokens import get_tokenizer

TOK = OpenAITokenizer("cl100k_base")
BUILDER = PromptBuilder()


def build(docs: list[Any], question: str, strategy: str = DEFAULT_STRATEGY) -> Any:
    """The prompt fit builds for these survivors: placed by ``strategy``, in the given (rank) order."""
    return BUILDER.build(place(docs, strategy), question)

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
    floor = TOK.count(build([], question).text)
    try:
        result = fit(docs, question, BUILDER, TOK, max_input, reserve, truncate=truncate)
    except ContextBudgetExceeded as err:
        # Raised exactly when even the prompt with zero documents does not fit.
        assert floor > budget
        assert err.floor == floor and err.budget == budget
        return
    assert floor <= budget
    assert TOK.count(result.prompt.text) == result.tokens == result.upper <= budget
    assert result.exact and result.margin == 0.0
    kept_ids = [d.id for d in result.kept]
    # The survivors are a best-ranked prefix: nothing is dropped while a lower-ranked document survives.
    assert kept_ids == [d["id"] for d in docs[: len(kept_ids)]]
    assert [d.id for d in result.dropped] == [d["id"] for d in docs[len(kept_ids) :]]
    assert sorted(result.prompt.ids) == sorted(kept_ids)
    if result.truncated:
        assert result.truncated == kept_ids[-1]
    # Maximal: one more document would not have fitted (counts are monotone here, cl100k on our layout).
    if result.dropped and not result.truncated:
        bigger = build([*result.kept, result.dropped[0]], question)
        assert TOK.count(bigger.text) > budget


def test_dropped_in_rank_order_and_placement_reapplied() -> None:
    docs = [{"id": f"d{i}", "text": f"Passage {i}. " + "Filler sentence here. " * 20, "score": 0.9 - i / 20}
            for i in range(8)]
    full = TOK.count(build(docs, "Q?").text)
    result = fit(docs, "Q?", BUILDER, TOK, full - 100)
    assert result.prompt.plan.strategy == DEFAULT_STRATEGY == "auto"
    assert [d.id for d in result.dropped] == [f"d{i}" for i in range(len(result.kept), 8)]
    # auto without a profile is edges over the survivors: the best document first, the second best last.
    assert result.prompt.ids[0] == "d0" and result.prompt.ids[-1] == "d1"
    assert result.prompt.plan.ranks == place(result.kept, "edges").ranks


def test_score_ranking_is_respected() -> None:
    docs = [{"id": f"d{i}", "text": "word " * 50, "score": s} for i, s in enumerate([0.1, 0.9, 0.5, 0.7])]
    result = fit(docs, "Q?", BUILDER, TOK, TOK.count(build(docs[:2], "Q?").text) + 5, rank_by="score")
    assert [d.id for d in result.kept] == ["d1", "d3"]
    assert [d.id for d in result.dropped] == ["d2", "d0"]


SCORED = [{"id": f"d{i}", "text": f"Passage {i}. " + "Filler sentence here. " * 12, "score": s}
          for i, s in enumerate([0.1, 0.2, 0.3, 0.4, 0.9])]
TIGHT = TOK.count(build(SCORED[:2], "Q?").text) + 3  # room for two documents


def test_placement_options_and_shorthands_are_one_setting() -> None:
    # The options travel as one value; the strategy= / rank_by= shorthands override its fields.
    options = PlacementOptions(strategy="pyramid", rank_by="score")
    result = fit(SCORED, "Q?", BUILDER, TOK, TIGHT, placement=options)
    assert [d.id for d in result.kept] == ["d4", "d3"]
    direct = fit(SCORED, "Q?", BUILDER, TOK, TIGHT, strategy="pyramid", rank_by="score")
    assert direct.prompt.text == result.prompt.text and direct.prompt.ids == ["d4", "d3"]
    over = fit(SCORED, "Q?", BUILDER, TOK, TIGHT, rank_by="input", placement=options)
    assert [d.id for d in over.kept] == ["d0", "d1"]


def test_score_ranking_keeps_the_best_document_at_a_tight_budget() -> None:
    result = fit(SCORED, "Q?", BUILDER, TOK, TIGHT, rank_by="score")
    assert "d4" in result.prompt.ids and [d.id for d in result.dropped] == ["d2", "d1", "d0"]


def test_placement_must_be_a_placement_options_value() -> None:
    # The flat mapping of old is refused with a typed error, and the builder no longer carries placement.
    with pytest.raises(InvalidOptionTypeError, match="placement must be a PlacementOptions, got dict"):
        fit(SCORED, "Q?", BUILDER, TOK, TIGHT, placement={"rank_by": "score"})  # type: ignore[arg-type]
    with pytest.raises(PromptOptionError, match="unknown option"):
        PromptBuilder(strategy="edges")


def test_top_k_and_dedup_are_ranking_not_budget() -> None:
    docs = [*SCORED, {"id": "d4", "text": "a copy", "score": 0.05}]
    options = PlacementOptions(strategy="edges", rank_by="score", dedup="id", top_k=3)
    result = fit(docs, "Q?", BUILDER, TOK, 10_000, placement=options)
    assert [d.id for d in result.kept] == ["d4", "d3", "d2"] and result.dropped == []
    assert [(d.doc.id, d.reason.split()[0]) for d in result.excluded] == [("d4", "duplicate"), ("d1", "rank"),
                                                                          ("d0", "rank")]
    assert result.prompt.plan.strategy == "edges"


def test_an_approximate_count_carries_the_margin() -> None:
    approx = get_tokenizer("openai:gpt-future-x")  # an id litm does not know: the script-aware estimate
    assert not approx.exact and approx.margin > 0
    three = TOK.count(build([SCORED[4], SCORED[3], SCORED[2]], "Q?").text)  # exactly the best three
    exact = fit(SCORED, "Q?", BUILDER, TOK, three, rank_by="score")
    assert len(exact.kept) == 3 and exact.upper == exact.tokens == three
    result = fit(SCORED, "Q?", BUILDER, approx, three, rank_by="score")
    assert not result.exact and result.margin == approx.margin
    assert result.upper == math.ceil(round(result.tokens * (1 + approx.margin), 6)) <= three
    assert len(result.kept) < 3  # the margin costs room
    question = "A question. " * 10
    with pytest.raises(ContextBudgetExceeded, match=r"counted approximately, \+\d+% margin") as info:
        fit(SCORED, question, BUILDER, approx, approx.count(build([], question).text) + 2)
    assert info.value.margin == approx.margin and info.value.upper > info.value.prompt_tokens


def test_a_counting_function_is_approximate() -> None:
    result = fit(SCORED, "Q?", BUILDER, lambda text: len(text.split()), 120, rank_by="score")
    assert not result.exact and result.margin == UNSTATED_MARGIN and result.upper <= 120


def test_anthropic_format_counts_the_request() -> None:
    system = PromptBuilder(wording=Wording(system="Answer from the documents only."))
    result = fit(SCORED, "Q?", system, TOK, 200, format="anthropic", rank_by="score")
    request = result.prompt.messages("anthropic")
    assert result.tokens == count_request(TOK, request, "anthropic").tokens <= 200 and request["system"]


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
    counter = Counter(TOK)
    result = fit(docs, "Q?", BUILDER, counter, 4000)
    assert 0 < len(result.kept) < 500
    assert result.count_calls <= 2 + 10  # full, floor, then a binary search over 500


def test_bad_arguments() -> None:
    with pytest.raises(InvalidOptionError):
        fit(["a"], "q", BUILDER, TOK, -1)
    with pytest.raises(ContextBudgetExceeded):
        fit(["a"], "q", BUILDER, TOK, 10, reserve_output_tokens=10)
    with pytest.raises(UnsupportedTypeError, match="build"):
        fit(["a"], "q", object(), TOK, 100)
    with pytest.raises(PromptError, match="question must be str"):
        fit(["a"], None, BUILDER, TOK, 100)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTypeError, match="cannot count tokens"):
        fit(["a"], "q", BUILDER, 42, 100)
    assert all(issubclass(e, LitmError) for e in (InvalidOptionError, UnsupportedTypeError, PromptError))
