"""The gateway in front of a real llama.cpp OpenAI-compatible server (``llama_server``: SmolLM2 135M), reached by
the official OpenAI SDK through the gateway's base URL: a call settles to exactly the server's own usage, a call
over budget never reaches the server, and a stream (llama.cpp reports no usage on streams) is charged its hold.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from fixtures_server import SERVER_N_CTX, Server
from litm.serve import GatewayConfig, config_from_mapping, create_app, create_key
from litm.spend import open_ledger
from serve_support import ThreadedServer

pytestmark = pytest.mark.server


def _config(tmp: Path, server: Server) -> GatewayConfig:
    return config_from_mapping({
        "ledger": {"url": str(tmp / "spend.db")}, "keys": {"store": str(tmp / "keys.db")},
        "upstreams": {"llama": {"kind": "openai-compatible", "base_url": server.base_url}},
        # $1 / $2 per million tokens: 1 and 2 micro-dollars a token, so costs read as token counts.
        "models": {server.alias: {"upstream": "llama", "max_input_tokens": SERVER_N_CTX,
                                  "price": {"input": "1", "output": "2"}}},
    }, env={})  # fmt: skip


@pytest.fixture
def gateway(tmp_path: Path, llama_server: Server) -> Iterator[tuple[str, GatewayConfig]]:
    cfg = _config(tmp_path, llama_server)
    with ThreadedServer(create_app(cfg)) as gw:
        yield gw.url, cfg


def _settled(cfg: GatewayConfig, scope: str) -> tuple[int, int]:
    led = open_ledger(cfg.ledger.url)
    try:
        deadline = time.monotonic() + 10
        while True:
            row = led.status([scope])[0]
            if row.held == 0 or time.monotonic() > deadline:
                return row.settled, row.held
            time.sleep(0.02)
    finally:
        led.close()


def test_a_call_settles_to_the_servers_usage_and_one_over_budget_never_reaches_it(
    gateway: tuple[str, GatewayConfig], llama_server: Server
) -> None:
    url, cfg = gateway
    plain, key = create_key(cfg, name="llama", limit="1")
    client = openai.OpenAI(base_url=url + "/v1", api_key=plain, max_retries=0)
    messages = [{"role": "user", "content": "Name one colour."}]
    raw = client.chat.completions.with_raw_response.create(model=llama_server.alias, messages=messages,  # type: ignore[arg-type]
                                                           max_tokens=8, temperature=0)  # fmt: skip
    resp = raw.parse()
    assert resp.usage is not None and resp.choices[0].message.content
    cost = resp.usage.prompt_tokens + 2 * resp.usage.completion_tokens
    assert raw.headers["x-litm-cost-micros"] == str(cost)
    assert _settled(cfg, key.scope) == (cost, 0)
    seen = llama_server.requests_seen("/v1/chat/completions")
    poor, _ = create_key(cfg, name="poor", limit="0.000010")  # 10 micro-dollars: less than one worst case
    with pytest.raises(openai.APIStatusError) as refused:
        openai.OpenAI(base_url=url + "/v1", api_key=poor, max_retries=0).chat.completions.create(
            model=llama_server.alias, messages=messages, max_tokens=8)  # type: ignore[arg-type]  # fmt: skip
    assert refused.value.status_code == 402
    assert llama_server.requests_seen("/v1/chat/completions") == seen


def test_a_stream_without_usage_is_passed_through_and_charged_its_hold(
    gateway: tuple[str, GatewayConfig], llama_server: Server
) -> None:
    url, cfg = gateway
    plain, key = create_key(cfg, name="stream", limit="1")
    client = openai.OpenAI(base_url=url + "/v1", api_key=plain, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model=llama_server.alias, messages=[{"role": "user", "content": "Say hi."}], max_tokens=6, stream=True,
    )  # type: ignore[call-overload]  # fmt: skip
    held = int(raw.headers["x-litm-held-micros"])
    text = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    assert text
    assert _settled(cfg, key.scope) == (held, 0)
