"""The framework-free core of the integrations: settings, reorder, trim (a real o200k count), assemble."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import litm
from litm.budget._counting import as_counter
from litm.errors import (
    ContextBudgetExceeded,
    InvalidOptionError,
    InvalidOptionTypeError,
    InvalidProfileError,
    InvalidScoreError,
    PromptError,
    UnknownStrategyError,
)
from litm.integrations import Budget
from litm.integrations._options import optional_budget, placing, placing_dict
from litm.integrations._steps import assemble, reorder, trim
from litm.placement import PlacementOptions, PositionProfile, place
from litm.placement._registry import get_strategy
from litm.prompt import AnchorOptions, PromptBuilder

GPT4O = "openai:gpt-4o"


def _docs(n: int, words: int = 25) -> list[dict[str, object]]:
    # Scores fall with the index: d0 is the best. Distinct texts, so that every document costs tokens.
    return [
        {"id": f"d{i}", "text": f"passage {i}: " + "lorem ipsum dolor " * words, "score": 1 - i / 100} for i in range(n)
    ]


def _chat_tokens(prompt: litm.Prompt) -> int:
    return as_counter(GPT4O).count_request({"messages": prompt.to_openai()}, "openai-chat").tokens


def test_reorder_hands_back_the_callers_objects_in_the_strategys_order() -> None:
    docs = _docs(7)
    plan = reorder(docs, placing(dict(strategy="edges")))
    assert [d["id"] for d in plan.items] == ["d0", "d2", "d4", "d6", "d5", "d3", "d1"]
    assert all(any(item is d for d in docs) for item in plan.items)
    assert plan.ranks == [r + 1 for r in get_strategy("edges").arrange(7)]


def test_auto_ranks_by_score_only_when_every_document_has_one() -> None:
    scored = [("a", 0.1), ("b", 0.9), ("c", 0.5), ("d", 0.3)]
    assert [t for t, _ in reorder(scored, placing(dict(strategy="none"))).items] == ["b", "c", "d", "a"]
    # One missing score: the given order is the ranking; the missing score is never read as 0.
    mixed = [("a", 0.1), ("b", None), ("c", -0.5), ("d", 0.3)]
    assert [t for t, _ in reorder(mixed, placing(dict(strategy="none"))).items] == ["a", "b", "c", "d"]
    with pytest.raises(InvalidScoreError, match=r"item 1 .* has no score"):
        reorder(mixed, placing(dict(rank_by="score")))


def test_distances_rank_lowest_first_and_show_the_closest_as_relevance_1() -> None:
    hits = [({"id": "far", "text": "far away"}, 0.9), ({"id": "near", "text": "close by"}, 0.1)]
    options = placing({"strategy": "none", "rank_by": "score", "higher_is_better": False})
    assert [d["id"] for d, _ in reorder(hits, options).items] == ["near", "far"]
    # Through the budget too (fit placed its survivors as higher-is-better and showed the closest as 0).
    scored = PromptBuilder(anchors=AnchorOptions(positions=True, scores=True))
    cut = trim(hits, "Which is near?", options, Budget(GPT4O, 4000), scored)
    assert [(s.id, s.relevance) for s in cut.prompt.plan.slots] == [("near", 1.0), ("far", 0.0)]
    assert '<document id="near" position="1/2" score="1">' in cut.prompt.user


def test_trim_keeps_the_largest_best_ranked_prefix_that_fits_placed() -> None:
    docs = _docs(10)
    budget = Budget(GPT4O, max_input_tokens=700)
    cut = trim(docs, "Which passage?", placing(dict(strategy="pyramid")), budget)
    kept = len(cut.items)
    assert 4 <= kept < 10
    # The lowest-ranked went: the survivors are exactly the best `kept`, placed by the strategy.
    assert sorted(d["id"] for d in cut.items) == sorted(f"d{i}" for i in range(kept))
    assert [d["id"] for d in cut.dropped] == [f"d{i}" for i in range(kept, 10)]
    assert cut.prompt.plan.ranks == [r + 1 for r in get_strategy("pyramid").arrange(kept)]
    assert all(any(item is d for d in docs) for item in (*cut.items, *cut.dropped))
    # The count is the real o200k count of the chat request those messages make, and it is the largest that fits.
    assert cut.tokens == _chat_tokens(cut.prompt) <= 700 and cut.upper == cut.tokens
    one_more = assemble(docs[: kept + 1], "Which passage?", placing(dict(strategy="pyramid"))).prompt
    assert _chat_tokens(one_more) > 700


def test_assemble_with_a_budget_builds_the_prompt_the_trim_counted() -> None:
    docs = _docs(10)
    builder = PromptBuilder(anchors=AnchorOptions(style="bracket"))
    budget = Budget(GPT4O, max_input_tokens=700)
    made = assemble(docs, "Which passage?", placing({}), budget, builder)
    assert made.trimmed is not None and made.prompt == trim(docs, "Which passage?", placing({}), budget, builder).prompt
    assert made.prompt.ids == [d["id"] for d in made.items] and "[DOC_ID: d0]" in made.prompt.user
    # Without a budget every document is placed and shown.
    everything = assemble(docs, "Which passage?", placing({}), builder=builder)
    assert len(everything.items) == 10 and everything.trimmed is None


def test_counting_as_text_or_anthropic_counts_that_form() -> None:
    docs = _docs(3)
    text = trim(docs, "Which?", placing({}), Budget(GPT4O, 4000, count_as="text"))
    assert text.tokens == as_counter(GPT4O).count_text(text.prompt.text).tokens
    chat = trim(docs, "Which?", placing({}), Budget(GPT4O, 4000))
    assert chat.tokens == _chat_tokens(chat.prompt) > text.tokens - 5  # per-message overhead, no answer cue
    anthropic = trim(docs, "Which?", placing({}), Budget(GPT4O, 4000, count_as="anthropic"))
    assert anthropic.tokens == as_counter(GPT4O).count_request(anthropic.prompt.to_anthropic(), "anthropic").tokens


def test_a_budget_too_small_for_the_question_alone_is_refused() -> None:
    with pytest.raises(ContextBudgetExceeded, match="with no documents at all"):
        trim(_docs(3), "Which passage?", placing({}), Budget(GPT4O, max_input_tokens=10))


def test_reserve_output_tokens_comes_off_the_budget() -> None:
    cut = trim(_docs(10), "Which?", placing({}), Budget(GPT4O, 900, reserve_output_tokens=200))
    assert cut.budget == 700 and cut.tokens <= 700


def test_a_measured_profile_from_a_file_places_and_saves_inline(tmp_path: Path) -> None:
    path = tmp_path / "gemma.profile.json"
    profile = PositionProfile.from_weights([0.9, 0.2, 0.3, 0.95], name="measured")
    profile.save(path)
    options = placing({"strategy": "profile", "profile": str(path)})
    assert options.profile == profile
    by_profile = PlacementOptions("profile", profile=profile)
    assert reorder(_docs(5), options).ranks == place(_docs(5), placement=by_profile).ranks
    saved = json.loads(json.dumps(placing_dict(options)))
    assert placing(saved) == options and saved["profile"]["name"] == "measured"


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"strategy": "best"}, UnknownStrategyError, "unknown placement strategy 'best'"),
        ({"strategy": get_strategy("edges")}, InvalidOptionTypeError, "strategy must be a registered strategy name"),
        ({"rank_by": "relevance"}, InvalidOptionError, "rank_by must be 'auto', 'input' or 'score'"),
        ({"higher_is_better": "yes"}, InvalidOptionTypeError, "higher_is_better must be True or False"),
        ({"dedup": "text"}, InvalidOptionError, "dedup must be None, 'id' or 'content'"),
        ({"top_k": "3"}, InvalidOptionTypeError, "top_k must be a non-negative integer, got '3'"),
        ({"min_docs": -1}, InvalidOptionError, "min_docs must be a non-negative integer, got -1"),
        ({"profile": [0.9, 0.5]}, InvalidOptionTypeError, "profile must be a PositionProfile"),
        ({"profile": "/no/such/profile.json"}, InvalidProfileError, "profile file not found"),
    ],
)
def test_bad_placement_settings_raise_one_line_typed_errors(
    settings: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as info:
        placing(settings)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, 100), "tokenizer must be a model spec string"),
        (("", 100), "tokenizer must be a model spec string"),
        ((GPT4O, 0), "max_input_tokens must be a positive integer, got 0"),
        ((GPT4O, True), "max_input_tokens must be a positive integer, got True"),
        ((GPT4O, 100, -5), "reserve_output_tokens must be a non-negative integer"),
        ((GPT4O, 100, 0, "gemini"), "count_as must be one of 'openai', 'anthropic', 'text'"),
    ],
)
def test_bad_budgets_raise_typed_errors(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        Budget(*args)  # type: ignore[arg-type]


def test_half_a_budget_is_refused_and_none_is_no_budget() -> None:
    assert optional_budget("X") is None
    with pytest.raises(InvalidOptionError, match=r"X: a token budget needs both .*; tokenizer is missing"):
        optional_budget("X", max_input_tokens=100)
    with pytest.raises(InvalidOptionError, match="max_input_tokens is missing"):
        optional_budget("X", GPT4O)


def test_the_question_is_required_and_must_be_text() -> None:
    with pytest.raises(PromptError, match="the question is empty"):
        trim(_docs(2), "  ", placing({}), Budget(GPT4O, 1000))
    with pytest.raises(PromptError, match="the question must be a string, got NoneType"):
        assemble(_docs(2), None, placing({}))  # type: ignore[arg-type]


def test_a_tokenizer_is_loaded_once_per_spec() -> None:
    assert Budget(GPT4O, 100).load_tokenizer() is Budget(GPT4O, 5000, count_as="text").load_tokenizer()


def test_no_framework_is_imported_until_asked_and_a_missing_one_names_its_extra() -> None:
    script = """
import sys
import litm, litm.integrations
loaded = sorted(m for m in ("langchain_core", "llama_index", "haystack", "pydantic") if m in sys.modules)
print("loaded:", loaded)
for module, package in (("langchain_core", "langchain"), ("llama_index.core", "llamaindex"), ("haystack", "haystack")):
    sys.modules[module] = None  # what an uninstalled package looks like to the import system
    try:
        __import__(f"litm.integrations.{package}")
    except litm.MissingDependencyError as exc:
        print(exc)
"""
    src = Path(__file__).resolve().parents[1] / "src"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    ).stdout.splitlines()  # fmt: skip
    assert out == [
        "loaded: []",
        "litm.integrations.langchain needs langchain_core: pip install 'litm[langchain]'",
        "litm.integrations.llamaindex needs llama_index.core: pip install 'litm[llamaindex]'",
        "litm.integrations.haystack needs haystack: pip install 'litm[haystack]'",
    ]
