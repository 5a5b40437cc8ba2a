"""``charged(model, cap)``: litm models reserve before each call, at the HTTP boundary of the real SDKs.

The OpenAI and Anthropic backends send through the real SDK over a capturing transport (``http_capture``);
the ledger is a real SQLite file. The concurrent case against a real server is in ``test_spend_server.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from http_capture import Capture, http
from litm.errors import InvalidOptionError, ModelError, PriceUnknownError, SpendBudgetExceeded
from litm.models import Completion, complete_many
from litm.models._anthropic_backend import AnthropicModel
from litm.models._openai_backend import OpenAIModel
from litm.spend import SpendCap, charged
from litm.spend._ledger import SQLiteLedger
from litm.spend._model import ChargedModel
from litm.spend._money import micros_ceil

QUESTION = [{"role": "user", "content": "Say hi."}]


@pytest.fixture
def cap(tmp_path: Path) -> SpendCap:
    made = SpendCap(SQLiteLedger(tmp_path / "spend.db"), scopes=["project:acme"])
    made.set_limit("project:acme", "0.01")
    return made


def settled(cap: SpendCap) -> tuple[int, int]:
    (counter,) = cap.status()
    return counter.settled, counter.held


def openai_model(capture: Capture, **options: Any) -> OpenAIModel:
    return OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url="https://api.test/v1", max_retries=0,
                       http_client=http.Client(transport=capture.transport()), **options)  # fmt: skip


def test_each_call_holds_its_worst_case_and_settles_its_completion(cap: SpendCap) -> None:
    capture = Capture()
    model = charged(openai_model(capture), cap)
    assert isinstance(model, ChargedModel) and model.remote and model.tokenizer.exact
    out = model.complete(QUESTION, max_tokens=40)
    assert isinstance(out, Completion) and capture.bodies[0]["max_completion_tokens"] == 40  # what was held
    (reserve,) = [e for e in cap.history() if e.kind == "reserve"]
    assert reserve.deltas[0][1] == micros_ceil(model.count_tokens(QUESTION) * 150_000 + 40 * 600_000)
    assert settled(cap) == (micros_ceil(11 * 150_000 + 1 * 600_000), 0)  # the transport's usage


def test_complete_many_runs_charged_calls_in_parallel(cap: SpendCap) -> None:
    capture = Capture()
    answers = complete_many(charged(openai_model(capture, concurrency=4), cap), [QUESTION] * 6, max_tokens=5)
    assert len(answers) == len(capture.sent) == 6
    assert settled(cap) == (6 * micros_ceil(11 * 150_000 + 600_000), 0)


def test_an_over_budget_call_is_never_sent(cap: SpendCap) -> None:
    capture = Capture()
    with pytest.raises(SpendBudgetExceeded):
        charged(openai_model(capture), cap).complete(QUESTION, max_tokens=20_000)  # $0.012 > $0.01
    assert capture.sent == [] and settled(cap) == (0, 0)


@pytest.mark.parametrize(("status", "charged_in_full"), [(400, False), (429, False), (500, True), (502, True)])
def test_a_failed_call_is_refunded_only_when_the_provider_refused_it(
    cap: SpendCap, status: int, charged_in_full: bool
) -> None:
    capture = Capture(status=status)
    model = charged(openai_model(capture), cap)
    with pytest.raises(ModelError):
        model.complete(QUESTION, max_tokens=40)
    hold = micros_ceil(model.count_tokens(QUESTION) * 150_000 + 40 * 600_000)
    assert len(capture.sent) == 1 and settled(cap) == ((hold if charged_in_full else 0), 0)


def test_a_connection_never_made_is_refunded(cap: SpendCap) -> None:
    def refuse(request: Any) -> Any:
        raise http.ConnectError("connection refused")

    model = OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url="https://api.test/v1", max_retries=0,
                        http_client=http.Client(transport=http.MockTransport(refuse)))  # fmt: skip
    with pytest.raises(ModelError, match="cannot reach"):
        charged(model, cap).complete(QUESTION, max_tokens=40)
    assert settled(cap) == (0, 0)


def test_anthropic_completions_settle_at_anthropic_prices(cap: SpendCap) -> None:
    capture = Capture()
    model = AnthropicModel("claude-sonnet-4-6", api_key="test-key", max_retries=0,
                           http_client=http.Client(transport=capture.transport()))  # fmt: skip
    out = charged(model, cap).complete(QUESTION, max_tokens=16)
    # The backend counts with Anthropic's count_tokens endpoint (exact), then sends the message.
    assert [s.path for s in capture.sent] == ["/v1/messages/count_tokens", "/v1/messages"] and out.input_tokens == 11
    assert settled(cap) == (micros_ceil(11 * 3_000_000 + 1 * 15_000_000), 0)


def test_what_cannot_be_charged_exactly_is_refused_when_wrapped(cap: SpendCap) -> None:
    with pytest.raises(InvalidOptionError, match="retries up to 3 times"):
        charged(OpenAIModel("gpt-4o-mini"), cap)
    with pytest.raises(PriceUnknownError, match="my-finetune"):
        charged(OpenAIModel("my-finetune", max_retries=0), cap)
    server = OpenAIModel("qwen2.5", base_url="http://127.0.0.1:1/v1", compatible=True, max_retries=0)
    with pytest.raises(PriceUnknownError, match="price="):
        charged(server, cap)
    priced = charged(server, cap, price={"input": "0.1", "output": "0.2"})
    assert priced.cap is not cap and priced.cap.ledger is cap.ledger  # same ledger, its own price version
    with pytest.raises(InvalidOptionError, match="litm Model"):
        charged("openai:gpt-4o-mini", cap)  # type: ignore[arg-type]
