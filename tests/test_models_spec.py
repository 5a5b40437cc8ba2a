"""Spec strings, the backend registry, messages and complete_many: no model and no network needed."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from litm.errors import (
    InvalidOptionError,
    LitmError,
    ModelError,
    PromptError,
    UnknownModelSpecError,
    UnsupportedTypeError,
)
from litm.models import Completion, Model, ModelSpec, complete_many, load_model, register_backend, unregister_backend
from litm.models._anthropic_backend import AnthropicModel
from litm.models._base import GenerationRequest, check_prompt
from litm.models._local.kv_reuse import KvReuse
from litm.models._local.pool import context_size
from litm.models._openai_backend import OpenAIModel
from litm.models._spec import backends, parse_spec
from litm.models.tokenizers._estimate import EstimateTokenizer
from litm.prompt._messages import check_messages, is_messages
from litm.tokens import Tokenizer


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", ModelSpec("local", "")),
        ("  local  ", ModelSpec("local", "")),
        ("local:gemma3-270m", ModelSpec("local", "")),
        ("local:smollm2", ModelSpec("local", "smollm2")),
        ("local:/models/m.gguf", ModelSpec("local", "/models/m.gguf")),
        ("local:~/m.gguf", ModelSpec("local", "~/m.gguf")),
        ("local:model.GGUF", ModelSpec("local", "model.GGUF")),
        ("local:./rel/m", ModelSpec("local", "./rel/m")),
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        ("OpenAI:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        (
            "openai-compatible:http://127.0.0.1:8080/v1@qwen2.5:0.5b",
            ModelSpec("openai-compatible", "qwen2.5:0.5b", "http://127.0.0.1:8080/v1"),
        ),
        (
            "openai-compatible:https://user@host.example/v1/@m",
            ModelSpec("openai-compatible", "m", "https://user@host.example/v1"),
        ),
        ("anthropic:claude-haiku-4-5", ModelSpec("anthropic", "claude-haiku-4-5")),
    ],
)
def test_parse_spec(spec: str, expected: ModelSpec) -> None:
    assert parse_spec(spec) == expected


def test_spec_round_trips_as_string() -> None:
    for text in ("local", "local:smollm2", "openai:gpt-4o-mini", "openai-compatible:http://h:1/v1@m", "anthropic:c"):
        assert str(parse_spec(text)) == text


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("", "empty model spec"),
        ("   ", "empty model spec"),
        ("gpt-4o", "unknown model spec"),
        ("llama:foo", "unknown model backend 'llama'"),
        ("local:", "names no model"),
        ("local:llama3", "unknown local model 'llama3'"),
        ("openai:", "names no model"),
        ("anthropic:", "names no model"),
        ("openai-compatible:http://127.0.0.1:8080/v1", "URL, '@', model name"),
        ("openai-compatible:127.0.0.1:8080/v1@m", "URL, '@', model name"),
        ("openai-compatible:http://127.0.0.1:8080/v1@", "URL, '@', model name"),
    ],
)
def test_bad_specs_raise_a_typed_error(spec: str, fragment: str) -> None:
    with pytest.raises(UnknownModelSpecError, match=fragment) as info:
        load_model(spec)
    assert isinstance(info.value, LitmError) and isinstance(info.value, ValueError)


def test_remote_models_load_without_network_or_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    oa = load_model("openai:gpt-4o-mini", timeout=5)
    assert isinstance(oa, OpenAIModel) and oa.remote and oa.name == "gpt-4o-mini" and oa.timeout == 5
    assert oa.context_window == 128_000
    compat = load_model("openai-compatible:http://127.0.0.1:9/v1@m", context_window=4096)
    assert isinstance(compat, OpenAIModel) and compat.compatible and compat.context_window == 4096
    assert compat.base_url == "http://127.0.0.1:9/v1" and compat.spec == "openai-compatible:http://127.0.0.1:9/v1@m"
    claude = load_model("anthropic:claude-haiku-4-5")
    assert isinstance(claude, AnthropicModel) and claude.context_window == 200_000
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        oa.complete("hi")
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        claude.complete("hi")


def test_unknown_remote_context_window_asks_for_the_option() -> None:
    with pytest.raises(ModelError, match="context_window=N"):
        _ = load_model("openai:my-finetune").context_window
    with pytest.raises(ModelError, match="context_window=N"):
        _ = load_model("anthropic:other-model").context_window


class EchoModel(Model):
    """A fake remote backend: answers with the prompt reversed, after a short sleep."""

    remote = True

    def __init__(self, target: str, *, delay: float = 0.0, concurrency: int = 4) -> None:
        self.name = target
        self.spec = f"echo:{target}"
        self.delay = delay
        self.concurrency = concurrency
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()
        self.closed = False

    @property
    def context_window(self) -> int:
        return 100

    @property
    def tokenizer(self) -> Tokenizer:
        return EstimateTokenizer(1.0)

    def _generate(self, request: GenerationRequest) -> Completion:
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.delay)
        with self._lock:
            self.active -= 1
        text = request.prompt
        if text == "boom":
            raise ModelError("boom")
        assert isinstance(text, str)
        return Completion(text[::-1], len(text), len(text), self.delay, "stop", self.name)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def echo_backend() -> object:
    register_backend("echo", lambda spec, **options: EchoModel(spec.target, **options))
    yield
    unregister_backend("echo")


@pytest.mark.usefixtures("echo_backend")
def test_plugin_backends_register_and_load() -> None:
    assert "echo" in backends()
    model = load_model("echo:abc", delay=0.0)
    assert isinstance(model, EchoModel) and model.name == "abc"
    assert model.complete("hello").text == "olleh"
    assert model.count_tokens("hello") == 5
    assert load_model(model) is model
    with pytest.raises(UnsupportedTypeError, match="options delay apply only when loading a model from a spec"):
        load_model(model, delay=1.0)
    assert issubclass(UnsupportedTypeError, TypeError)
    with pytest.raises(ValueError, match="already registered"):
        register_backend("echo", lambda spec, **options: EchoModel(spec.target))
    with pytest.raises(ValueError, match="scheme"):
        register_backend("Bad Scheme", lambda spec, **options: EchoModel(spec.target))
    with model as entered:
        assert entered is model
    assert model.closed


@pytest.mark.usefixtures("echo_backend")
def test_complete_many_runs_remote_prompts_concurrently_in_order() -> None:
    model = EchoModel("x", delay=0.05, concurrency=3)
    prompts = [f"p{i}" for i in range(9)]
    seen: list[int] = []
    out = complete_many(model, prompts, on_result=lambda i, c: seen.append(i))
    assert [c.text for c in out] == [p[::-1] for p in prompts]
    assert model.peak == 3 and sorted(seen) == list(range(9))
    serial = EchoModel("y", delay=0.01)
    complete_many(serial, prompts[:3], concurrency=1)
    assert serial.peak == 1
    local_like = EchoModel("z", delay=0.01)
    local_like.remote = False  # in-process models share one context: always one prompt at a time
    complete_many(local_like, prompts[:3], concurrency=8)
    assert local_like.peak == 1
    with pytest.raises(ModelError, match="boom"):
        complete_many(model, ["a", "boom", "c"])
    with pytest.raises(InvalidOptionError, match="concurrency must be an integer >= 1, got 0"):
        complete_many(model, ["a"], concurrency=0)
    assert complete_many(model, []) == []


def test_messages_are_checked() -> None:
    assert is_messages([{"role": "user", "content": "x"}]) and not is_messages("x")
    assert check_messages([{"role": "user", "content": "x", "name": "bob"}]) == [
        {"role": "user", "content": "x", "name": "bob"}
    ]
    for bad, fragment in [
        ([], "no messages"),
        (["hi"], "not a dict"),
        ([{"role": "robot", "content": "x"}], "role 'robot'"),
        ([{"role": "user", "content": None}], "not text"),
    ]:
        with pytest.raises(PromptError, match=fragment):
            check_messages(bad)  # type: ignore[arg-type]
    with pytest.raises(PromptError, match=r"a string, a list of messages or a litm\.Prompt, not int"):
        check_prompt(42)  # type: ignore[arg-type]


def test_completion_to_dict() -> None:
    done = Completion("Paris", 13, 2, 0.1, "stop", "m", 5)
    assert done.to_dict() == {
        "text": "Paris",
        "input_tokens": 13,
        "output_tokens": 2,
        "latency_s": 0.1,
        "finish_reason": "stop",
        "model": "m",
        "cached_tokens": 5,
        "cache_write_tokens": 0,
        "sampled": False,
    }


def test_context_is_sized_to_the_request() -> None:
    assert context_size(10, 32768) == 2048
    assert context_size(2048, 32768) == 2048
    assert context_size(2049, 32768) == 4096
    assert context_size(20000, 32768) == 32768
    assert context_size(9000, 8192) == 8192
    assert context_size(5000, 0) == 8192  # training context not known yet


class FakeLlama:
    """Just the llama-cpp-python state that ``KvReuse.prepare`` reads and writes (n_batch of 4)."""

    n_batch = 4

    def __init__(self) -> None:
        import numpy as np

        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0

    @staticmethod
    def longest_token_prefix(a: Sequence[int], b: Sequence[int]) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    def reset(self) -> None:
        self.n_tokens = 0

    def evaluate(self, tokens: list[int], keep: int, generated: int = 2) -> None:
        """What llama.cpp leaves behind: the prompt, then all but the last generated token."""
        seq = tokens + [999] * (generated - 1)
        self.input_ids[keep : len(seq)] = seq[keep:]
        self.n_tokens = len(seq)


def test_aligned_reuse_keeps_only_whole_chunks_a_cold_run_computes() -> None:
    kv = KvReuse()
    llm = FakeLlama()
    a = list(range(1, 11))  # 10 tokens
    b = [*range(1, 10), 77]  # shares 9 tokens with a
    assert kv.prepare(llm, a, "aligned") == 0 and kv.exact_prefix == 8  # cold: chunks [0,4) and [4,8) are exact
    llm.evaluate(a, 0)
    assert kv.prepare(llm, b, "aligned") == 8 and llm.n_tokens == 8  # whole chunks only, not all 9
    llm.evaluate(b, 8)
    assert kv.prepare(llm, b, "full") == 9 and kv.exact_prefix == 8  # full reuse: the tail runs off the grid
    llm.evaluate(b, 9)
    c = [*range(1, 7), 55, 56, 57, 58]  # shares 6 tokens
    assert kv.prepare(llm, c, "full") == 6 and kv.exact_prefix == 4  # chunk [4, 8) is recomputed off the grid
    llm.evaluate(c, 6)
    assert kv.prepare(llm, a, "aligned") == 4  # so aligned reuse stops at the last exact chunk
    llm.evaluate(a, 4)
    assert kv.prepare(llm, a, "cold") == 0 and llm.n_tokens == 0 and kv.exact_prefix == 8
    llm.evaluate(a, 0)
    assert kv.prepare(llm, a[:8], "aligned") == 4  # the whole prompt is cached: its last token is re-evaluated
