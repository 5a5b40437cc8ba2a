"""Prompt log-probabilities from OpenAI-compatible servers (``/completions`` with ``echo`` and ``logprobs``).

Two servers: the real llama-cpp-python server of the test session (``llama_server``), whose echoed values are
misaligned by one token, which litm's first-use check must catch; and a correct server, written here as an
``httpx`` transport that answers from SmolLM2 itself (llama-cpp-python in-process, every position's logits
kept), which no test machine can otherwise run (vLLM needs a GPU). Both use the real ``openai`` SDK.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from fixtures_server import Server
from litm.errors import InvalidOptionError, LogprobsUnavailableError
from litm.models import load_model
from litm.models._embedded import smollm2_path
from litm.models._logprobs import supports_logprobs

np = pytest.importorskip("numpy")
llama_cpp = pytest.importorskip("llama_cpp")
pytest.importorskip("openai")
http = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")

PROMPT = "The capital of France is"
CONTINUATION = " Paris, on the Seine"


@pytest.fixture(scope="module")
def smol() -> Iterator[Any]:
    llm = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=256, logits_all=True, n_threads=2, verbose=False)
    yield llm
    llm.close()


def _true_logprobs(llm: Any, text: str) -> tuple[list[int], list[float]]:
    """Each token of ``text`` with log P(token | tokens before it), computed by hand (row i-1 predicts i)."""
    ids = list(llm.tokenize(text.encode(), add_bos=False, special=False))
    llm.reset()
    llm.eval(ids)
    x = np.asarray(llm.scores[: len(ids)], dtype=np.float64)
    top = x.max(axis=1, keepdims=True)
    lp = x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))
    return ids, [float(lp[i - 1, t]) for i, t in enumerate(ids) if i > 0]


class CorrectServer:
    """``POST /v1/completions`` answered from SmolLM2 the way the OpenAI completions API defines echo."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content)
        self.bodies.append(body)
        ids, lps = _true_logprobs(self.llm, body["prompt"])
        x = np.asarray(self.llm.scores[len(ids) - 1], dtype=np.float64)
        gen = int(x.argmax())
        gen_lp = float(x[gen] - x.max() - np.log(np.exp(x - x.max()).sum()))
        piece = self.llm.detokenize([gen]).decode()
        tokens, values, offsets = [piece], [gen_lp], [len(body["prompt"])]
        if body.get("echo"):
            pieces = [self.llm.detokenize([t]).decode() for t in ids]
            starts = [sum(len(p) for p in pieces[:i]) for i in range(len(pieces))]
            tokens, values, offsets = [*pieces, *tokens], [None, *lps, *values], [*starts, *offsets]
        text = (body["prompt"] if body.get("echo") else "") + piece
        logprobs = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets, "top_logprobs": None}
        choice = {"index": 0, "text": text, "finish_reason": "length", "logprobs": logprobs}
        usage = {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}
        return http.Response(200, json={"id": "c1", "object": "text_completion", "created": 0, "model": "m",
                                        "choices": [choice], "usage": usage})  # fmt: skip


def test_a_correct_server_gives_the_hand_computed_values(smol: Any) -> None:
    server = CorrectServer(smol)
    client = http.Client(transport=http.MockTransport(server))
    model = load_model("openai-compatible:http://10.0.0.5:8000/v1@m", http_client=client)
    assert supports_logprobs(model)
    (lp,) = model.continuation_logprobs(PROMPT, [CONTINUATION])
    _, truth = _true_logprobs(smol, PROMPT + CONTINUATION)
    n_prompt = len(smol.tokenize(PROMPT.encode(), add_bos=False))
    assert "".join(lp.tokens) == CONTINUATION and lp.prompt_tokens == n_prompt
    assert lp.logprobs == pytest.approx(truth[n_prompt - 1 :], abs=1e-9)
    # First use: a generation request and an echo request check the server, then one echo per continuation.
    assert [(b.get("echo", False), b["max_tokens"]) for b in server.bodies] == [(False, 1), (True, 1), (True, 1)]
    model.continuation_logprobs(PROMPT, [" Lyon"])
    assert len(server.bodies) == 4  # checked once per model


def test_llama_cpp_python_server_is_refused_because_its_echo_is_misaligned(llama_server: Server, smol: Any) -> None:
    model = load_model(llama_server.spec)
    with pytest.raises(LogprobsUnavailableError, match="misaligned"):
        model.continuation_logprobs(PROMPT, [CONTINUATION])
    # The refusal is justified: what the server echoes is not log P(token | prefix).
    import openai

    raw = openai.OpenAI(base_url=llama_server.base_url, api_key="sk-no-key").completions.create(
        model=llama_server.alias, prompt=PROMPT + CONTINUATION, max_tokens=1, temperature=0, echo=True, logprobs=0
    )
    echoed = [v for v in raw.choices[0].logprobs.token_logprobs if v is not None]
    _, truth = _true_logprobs(smol, PROMPT + CONTINUATION)
    n = min(len(echoed), len(truth))
    assert max(abs(a - b) for a, b in zip(echoed[:n], truth[:n], strict=True)) > 1.0


def test_what_cannot_be_scored_is_a_typed_error() -> None:
    server = load_model("openai-compatible:http://10.0.0.5:8000/v1@m")
    with pytest.raises(LogprobsUnavailableError, match="completion prompt"):
        server.continuation_logprobs([{"role": "user", "content": "Capital of France?"}], ["Paris"])
    with pytest.raises(InvalidOptionError, match="not one string"):
        server.continuation_logprobs(PROMPT, " Paris")
    with pytest.raises(LogprobsUnavailableError, match="OpenAI's API"):
        load_model("openai:gpt-4o-mini", api_key="sk-test").continuation_logprobs(PROMPT, [" Paris"])
    assert issubclass(LogprobsUnavailableError, NotImplementedError)
