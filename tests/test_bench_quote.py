"""The quote-first bench arm: answered with room for the quote, scored by the answer after ``Answer:``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litm.bench._data import load_items
from litm.bench._design import QUOTE_ARM, QUOTE_TOKENS
from litm.bench._outputs import write_outputs
from litm.bench._runner import BenchConfig, run_bench
from litm.models import Completion, GenerationRequest, Model, load_model
from litm.models.tokenizers._estimate import EstimateTokenizer

pytest.importorskip("bm25s")


class QuotingModel(Model):
    """Quotes the gold passage (whose text holds the answer), then answers wrong on even questions and right on odd
    ones; a plain prompt gets the right answer. Honours a stop at a line end, as a real backend does, and
    records every request. ``chat``: an instruct model behind a chat API (no prefill: it writes both lines)."""

    name = "quoting-model"
    spec = "quoting:test"

    def __init__(self, answers: dict[str, tuple[str, str]], chat: bool = False) -> None:
        self.answers = answers  # question -> (answer, gold passage text)
        self.chat = chat
        self.requests: list[GenerationRequest] = []

    @property
    def supports_chat(self) -> bool:
        return self.chat

    @property
    def context_window(self) -> int:
        return 100_000

    @property
    def tokenizer(self) -> EstimateTokenizer:
        return EstimateTokenizer()

    def _generate(self, request: GenerationRequest) -> Completion:
        self.requests.append(request)
        text = request.prompt if isinstance(request.prompt, str) else request.prompt[-1]["content"]
        question = text.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        answer, gold = self.answers[question]
        said = answer if sorted(self.answers).index(question) % 2 else "I do not know"
        at = max(gold.casefold().find(answer.casefold()), 0)  # NQ's gold passages hold the answer
        quote = " " + " ".join(gold[max(at - 40, 0) : at + len(answer) + 20].split())
        if text.endswith("Quote:"):
            reply = f"Quote:{quote}\nAnswer: {said}" if self.chat else f"{quote}\nAnswer: {said}"
        elif "Quote:" in text and text.endswith("\nAnswer:"):
            reply = f" {said}"
        else:
            reply = f" {answer}\nQuestion: more"
        if "\n" in request.stop:
            reply = reply.split("\n", 1)[0]
        return Completion(reply, 10, 3, 0.001, "stop", self.name)


def _quote_run(tmp_path: Path, chat: bool) -> tuple[QuotingModel, list[dict[str, object]]]:
    items = load_items(4, k=4)
    model = QuotingModel({it.question: (it.answers[0], it.gold.text) for it in items}, chat=chat)
    config = BenchConfig(
        questions=4, ks=(4,), strategies=("none",), direct_questions=0, ablation_questions=4,
        ablation_arms=(QUOTE_ARM,), ablation_slots=(2,), controls=False, max_tokens=8,
    )  # fmt: skip
    run = run_bench(model, config, tmp_path, progress=False)
    assert [r["hit"] for r in run.rows if r.get("arm") == "plain" and r["slot"] == 2] == [True] * 4
    return model, [r for r in run.rows if r.get("arm") == QUOTE_ARM]


@pytest.mark.parametrize("chat", [False, True])
def test_quote_first_rows_are_scored_by_the_answer_not_the_quote(tmp_path: Path, chat: bool) -> None:
    model, quoted = _quote_run(tmp_path, chat)
    assert len(quoted) == 4
    order = sorted(model.answers)
    for r in quoted:
        right = order.index(str(r["question"])) % 2 == 1
        # Every quote holds an accepted answer: a scorer reading the quote's line would call all four right.
        assert r["hit"] is right and r["em"] is right, r["output"]
        assert r["first_line"] == (r["answers"][0] if right else "I do not know")  # type: ignore[index]
        assert str(r["answers"][0]).casefold() in str(r["quote"]).casefold()  # type: ignore[index]
        assert r["answered"] and r["quote_found"] and r["quote_gold"]


def test_a_prefilled_quote_is_answered_in_two_calls(tmp_path: Path) -> None:
    model, quoted = _quote_run(tmp_path, chat=False)
    first = [q for q in model.requests if isinstance(q.prompt, str) and q.prompt.endswith("Quote:")]
    second = [q for q in model.requests if isinstance(q.prompt, str) and q.prompt.endswith("\nAnswer:")
              and "Quote:" in q.prompt and not q.prompt.endswith("\nQuote:")]  # fmt: skip
    assert len(first) == 4 and all(q.max_tokens == QUOTE_TOKENS and q.stop == ("\n",) for q in first)
    # The second call continues the prompt, the quote and the marker, and answers one line.
    assert len(second) == 4 and all(q.max_tokens == 8 and q.stop == ("\n",) for q in second)
    assert all(str(r["output"]).count("\nAnswer: ") == 1 for r in quoted)


def test_the_summary_reports_how_the_quotes_went(tmp_path: Path) -> None:
    _quote_run(tmp_path, chat=False)
    rows = [json.loads(line) for line in (tmp_path / "bench.jsonl").read_text(encoding="utf-8").splitlines()]
    out = write_outputs(tmp_path, rows, {}, plots=False)
    assert out.summary["quote_first"]["4"]["slot 2"] == {
        "n": 4, "answered": 1.0, "quote_found": 1.0, "quote_gold": 1.0, "hit": 0.5,
    }  # fmt: skip
    markdown = (tmp_path / "bench-summary.md").read_text(encoding="utf-8")
    assert "| slot 2 | 4 | 1.00 | 1.00 | 1.00 | 0.50 |" in markdown
    assert "quote-first" in json.dumps(out.summary["by_k"]["4"]["ablation"])


def test_a_chat_api_gets_one_call_with_room_for_the_quote(tmp_path: Path) -> None:
    model, _ = _quote_run(tmp_path, chat=True)
    quote_first = [q for q in model.requests if not isinstance(q.prompt, str)
                   and str(q.prompt[-1]["content"]).endswith("Quote:")]  # fmt: skip
    assert len(quote_first) == 4
    assert all(q.max_tokens == 8 + QUOTE_TOKENS and "\n" not in q.stop for q in quote_first)


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
