"""Admission never crashes on what a client sends: any JSON (or not JSON) body is admitted or refused with a
typed refusal (a status and a code), never an exception that would be a 500 and a traceback in the log."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litm.serve import config_from_mapping, create_key
from litm.serve._admit import Admitted, admit
from litm.serve._keys import VirtualKey
from litm.serve._runtime import Runtime, build_runtime
from litm.serve._shapes import Refusal

FIELDS = ["model", "messages", "input", "instructions", "system", "tools", "max_tokens", "max_completion_tokens",
          "max_output_tokens", "n", "stream", "stream_options", "service_tier", "speed", "role", "content", "type",
          "text", "image_url", "tool_calls", "function", "name", "arguments", "cache_control", "source"]  # fmt: skip
MODELS = ["gpt-4o-mini", "claude-haiku-4-5", "other"]

scalars = st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=20)
scalars = scalars | st.sampled_from([*MODELS, "user", "assistant", "system", "tool", "text", "image_url"])
names = st.sampled_from(FIELDS) | st.text(max_size=5)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=5), max_leaves=25
)
bodies = st.fixed_dictionaries(
    {}, optional={"model": st.sampled_from(MODELS) | scalars, "max_tokens": st.integers(-1, 50) | scalars}
).flatmap(lambda base: st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6).map(lambda d: {**d, **base}))


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Runtime, VirtualKey]]:
    tmp = tmp_path_factory.mktemp("admit")
    cfg = config_from_mapping({
        "ledger": {"url": str(tmp / "s.db"), "synchronous": "NORMAL"}, "keys": {"store": str(tmp / "k.db")},
        "upstreams": {"o": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"},
                      "a": {"kind": "anthropic", "base_url": "http://127.0.0.1:9"}},
        "models": {"gpt-4o-mini": {"upstream": "o", "max_input_tokens": 5000},
                   "claude-haiku-4-5": {"upstream": "a"}},
    }, env={})  # fmt: skip
    _, key = create_key(cfg, name="fuzz", limit="1000")
    rt = build_runtime(cfg)
    yield rt, key
    rt.close()


def _outcome(rt: Runtime, key: VirtualKey, api: str, raw: bytes) -> Admitted | Refusal:
    try:
        return asyncio.run(admit(rt, api, key, raw, uuid.uuid4().hex))
    except Refusal as refusal:
        return refusal


@settings(max_examples=150, deadline=None)
@given(api=st.sampled_from(["openai-chat", "openai-responses", "anthropic"]), body=bodies)
def test_any_json_body_is_admitted_or_refused_with_a_code(runtime: tuple[Runtime, VirtualKey], api: str,
                                                          body: dict[str, object]) -> None:  # fmt: skip
    rt, key = runtime
    got = _outcome(rt, key, api, json.dumps(body).encode())
    if isinstance(got, Refusal):
        assert 400 <= got.status < 500 and got.code and "\n" not in got.message
    else:  # admitted: a hold on the key's chain and an output limit in what will be sent
        assert got.reservation.amount > 0 and got.body["model"] in MODELS


@pytest.mark.parametrize("raw", [b"", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000, b"null", b'"x"', b"[1]", b"{"])
def test_bodies_that_are_not_json_objects_are_400(runtime: tuple[Runtime, VirtualKey], raw: bytes) -> None:
    got = _outcome(*runtime, "openai-chat", raw)
    assert isinstance(got, Refusal) and (got.status, got.code) == (400, "invalid_json")


def test_an_invalid_output_limit_is_named_not_called_missing(runtime: tuple[Runtime, VirtualKey]) -> None:
    body = {"model": "gpt-4o-mini", "max_tokens": 5.5, "messages": [{"role": "user", "content": "x"}]}
    got = _outcome(*runtime, "openai-chat", json.dumps(body).encode())
    assert isinstance(got, Refusal) and got.code == "invalid_request" and "got 5.5" in got.message
