"""The quote-first bench arm: answered with room for the quote, scored by the answer after ``Answer:``."""

from __future__ import annotations

from pathlib import Path

import pytest

from litm.bench.data import load_items
from litm.bench.design import QUOTE_ARM, QUOTE_TOKENS
from litm.bench.runner import BenchConfig, run_bench
from litm.models import Completion, GenerationRequest, Model, load_model
from litm.tokens import EstimateTokenizer

pytest.importorskip("bm25s")


class QuotingModel(Model):
    """Quotes the gold passage's first words, then answers wrong on even questions and right on odd ones; a plain
    prompt gets the right answer. Records every request."""

    name = "quoting-model"
    spec = "quoting:test"

    def __init__(self, answers: dict[str, tuple[str, str]]) -> None:
        self.answers = answers  # question -> (answer, gold passage text)
        self.requests: list[GenerationRequest] = []

    @property
    def supports_chat(self) -> bool:
        return False

    @property
    def context_window(self) -> int:
        return 100_000

    @property
    def tokenizer(self) -> EstimateTokenizer:
        return EstimateTokenizer()

    def _generate(self, request: GenerationRequest) -> Completion:
        assert isinstance(request.prompt, str)
        self.requests.append(request)
        question = request.prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        answer, gold = self.answers[question]
        if not request.prompt.endswith("Quote:"):
            return Completion(f" {answer}", 10, 3, 0.001, "stop", self.name)
        index = sorted(self.answers).index(question)
        # The quote holds the answer (the gold passage does); the answer line is right only on odd questions.
        said = answer if index % 2 else "I do not know"
        return Completion(f" {answer}: {gold[:80]}\nAnswer: {said}", 10, 30, 0.001, "stop", self.name)


def test_quote_first_rows_are_scored_by_the_answer_not_the_quote(tmp_path: Path) -> None:
    items = load_items(4, k=4)
    model = QuotingModel({it.question: (it.answers[0], it.gold.text) for it in items})
    config = BenchConfig(
        questions=4, ks=(4,), strategies=("none",), direct_questions=0, ablation_questions=4,
        ablation_arms=(QUOTE_ARM,), ablation_slots=(2,), controls=False, max_tokens=8,
    )  # fmt: skip
    run = run_bench(model, config, tmp_path, progress=False)
    quoted = [r for r in run.rows if r.get("arm") == QUOTE_ARM]
    assert len(quoted) == 4
    order = sorted(model.answers)
    for r in quoted:
        right = order.index(r["question"]) % 2 == 1
        # Every quote holds an accepted answer: a scorer reading the quote's line would call all four right.
        assert r["hit"] is right and r["em"] is right, r["output"]
        assert r["first_line"] == (r["answers"][0] if right else "I do not know")
        assert r["answered"] and "quote" in r
    # The quote-first prompts got room for the quote and no stop at its line's end; the plain ones did not.
    for request in model.requests:
        quote_first = isinstance(request.prompt, str) and request.prompt.endswith("Quote:")
        assert request.max_tokens == (8 + QUOTE_TOKENS if quote_first else 8)
        assert ("\n" in request.stop) is not quote_first
    assert [r["hit"] for r in run.rows if r.get("arm") == "plain" and r["slot"] == 2] == [True] * 4


@pytest.mark.model
def test_the_embedded_model_answers_a_quote_first_prompt_through_the_bench(tmp_path: Path) -> None:
    """The embedded Gemma 270M (a base model: the prompt ends in the Quote: prefill) on one quote-first prompt
    of two documents (beside the two slot prompts every run has), end to end through run_bench; its reply parses
    without error into a scored row."""
    config = BenchConfig(
        questions=1, ks=(2,), strategies=("none",), direct_questions=0, ablation_questions=1,
        ablation_arms=(QUOTE_ARM,), ablation_slots=(1,), controls=False, likelihood="off", max_tokens=4,
    )  # fmt: skip
    run = run_bench(load_model("local", n_threads=2), config, tmp_path, progress=False)
    (row,) = [r for r in run.rows if r.get("arm") == QUOTE_ARM]
    assert row["format"] == "completion" and row["output_tokens"] <= 4 + QUOTE_TOKENS
    assert isinstance(row["quote"], str) and isinstance(row["quote_found"], bool) and isinstance(row["hit"], bool)
    assert row["first_line"] == "" or row["first_line"] in row["output"]
