"""``litm serve`` end to end: the real gateway (``litm serve``, uvicorn, 2 workers) on loopback, clients by base URL
(the official OpenAI and Anthropic SDKs, curl), a stand-in upstream (tests/serve_support.py).

Every refusal is checked twice: the client gets the provider's error shape, and the stand-in never saw the
request. The last test reads the gateway's whole log for the keys and the provider secrets.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from fixtures_server import free_port
from litm.serve import create_key, load_config, revoke_key
from litm.spend import open_ledger, usage_from
from litm.spend._cost import price_usage
from litm.spend._prices import default_table
from serve_support import INPUT, GatewayProcess, StandIn, ThreadedServer

OPENAI_SECRET = "sk-upstream-openai-0f3c9a7e51d2b8"
ADMIN_KEY = "admin-7d0c2e9b41a5f3e6"
ANTHROPIC_SECRET = "sk-ant-upstream-77e1a0c4d9f2b3"


@dataclass
class Env:
    url: str
    standin: StandIn
    config: Path
    log: Path
    keys: dict[str, str]
    ledger: str

    def openai(self, key: str = "main") -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=self.keys[key], max_retries=0)

    def anthropic(self, key: str = "main") -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key=self.keys[key], max_retries=0)

    def status(self, scope: str) -> tuple[int, int, int]:
        """(limit, settled, held) of ``scope`` once nothing is held: a stream's hold is settled just after its
        last event went out, so a client that read it all may look a moment before the settle."""
        deadline = time.monotonic() + 10
        led = open_ledger(self.ledger)
        try:
            while True:
                row = next(c for c in led.status([scope]))
                if row.held == 0 or time.monotonic() > deadline:
                    return row.limit, row.settled, row.held
                time.sleep(0.02)
        finally:
            led.close()


CONFIG = """
[server]
workers = 2
max_body_bytes = 200000
admin_key_env = "TEST_ADMIN_KEY"

[ledger]
url = "spend.db"

[keys]
store = "keys.db"

[upstreams.oai]
kind = "openai"
base_url = "{upstream}/v1"
api_key_env = "TEST_OPENAI_SECRET"

[upstreams.ant]
kind = "anthropic"
base_url = "{upstream}"
api_key_env = "TEST_ANTHROPIC_SECRET"

[upstreams.local]
kind = "openai-compatible"
base_url = "{upstream}/v1"

[models.gpt-4o-mini]
upstream = "oai"
max_input_tokens = 2000

[models.claude-haiku-4-5]
upstream = "ant"
max_input_tokens = 2000

[models.cap-model]
upstream = "local"
price = {{ input = "0", output = "1000" }}

[models.fail-500]
upstream = "local"
price = {{ input = "0", output = "1000" }}

[models.fail-429]
upstream = "local"
price = {{ input = "0", output = "1000" }}

[upstreams.keyed]
kind = "openai-compatible"
base_url = "{upstream}/v1"
api_key_env = "TEST_OPENAI_SECRET"

[models.fail-401]
upstream = "keyed"
price = {{ input = "0", output = "1000" }}

[models.fail-400]
upstream = "keyed"
price = {{ input = "0", output = "1000" }}

[models.fail-403]
upstream = "ant"
price = {{ input = "0", output = "1000" }}

[models.fail-422]
upstream = "ant"
price = {{ input = "0", output = "1000" }}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("gateway")
    standin = StandIn()
    with ThreadedServer(standin.app()) as upstream:
        port = free_port()
        config = tmp / "gateway.toml"
        config.write_text(CONFIG.format(upstream=upstream.url), encoding="utf-8")
        env = {"TEST_OPENAI_SECRET": OPENAI_SECRET, "TEST_ANTHROPIC_SECRET": ANTHROPIC_SECRET,
               "TEST_ADMIN_KEY": ADMIN_KEY, "LITM_SERVE__SERVER__PORT": str(port)}  # fmt: skip
        cfg = load_config(config, env=env)
        ledger = open_ledger(cfg.ledger.url)
        ledger.set_limit("org:test", "total", 100_000_000)
        ledger.close()
        keys = {
            "main": create_key(cfg, name="main", limit="10", scopes=["org:test"])[0],
            "default": create_key(cfg, name="default", limit="10", default_max_tokens=7)[0],
            "narrow": create_key(cfg, name="narrow", limit="10", models=["gpt-4o-mini"])[0],
            "tight": create_key(cfg, name="tight", limit="0.05", scopes=["org:test"])[0],
            "broke": create_key(cfg, name="broke", limit="0.000001", window="daily", scopes=["org:test"])[0],
            "revoked": create_key(cfg, name="revoked", limit="10")[0],
            "compact": create_key(cfg, name="compact", limit="10", compact=True)[0],
        }
        revoke_key(cfg, keys["revoked"].split("-")[2])
        with GatewayProcess(config, tmp / "gateway.log", env, port) as proc:
            yield Env(proc.url, standin, config, proc.log, keys, cfg.ledger.url)


def _cost(model: str, provider: str, usage: dict[str, int]) -> int:
    return price_usage(default_table().rates(model, provider), usage_from(usage, provider=provider))


def test_openai_sdk_chat_is_forwarded_settled_and_reported(gw: Env) -> None:
    before = gw.standin.count()
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}], max_tokens=50,
        extra_headers={"cookie": "session=abc", "openai-organization": "org-client"},
    )  # fmt: skip
    resp = raw.parse()
    assert resp.choices[0].message.content == "hi"
    assert gw.standin.count() == before + 1
    seen = gw.standin.seen[-1]
    assert seen.path == "/v1/chat/completions"
    # The upstream gets its own secret, never the client's key, and only allow-listed headers.
    assert seen.headers["authorization"] == f"Bearer {OPENAI_SECRET}"
    assert gw.keys["main"] not in json.dumps(seen.headers)
    assert "cookie" not in seen.headers and "openai-organization" not in seen.headers
    assert not any(h.startswith("x-stainless") for h in seen.headers)
    expected = _cost("gpt-4o-mini", "openai", {"prompt_tokens": INPUT, "completion_tokens": 5})
    assert raw.headers["x-litm-cost-micros"] == str(expected)
    assert raw.headers["x-litm-outcome"] == "settled"
    assert int(raw.headers["x-litm-held-micros"]) > expected
    assert raw.headers["x-litm-remaining-scope"].startswith("key:")
    assert int(raw.headers["x-litm-remaining-micros"]) <= 10_000_000 - expected


def test_anthropic_sdk_messages_and_count_tokens(gw: Env) -> None:
    client = gw.anthropic()
    msg = client.messages.create(model="claude-haiku-4-5", max_tokens=64,
                                 messages=[{"role": "user", "content": "hello"}])  # fmt: skip
    assert msg.content[0].text == "hi" and msg.usage.output_tokens == 5
    seen = gw.standin.seen[-1]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == ANTHROPIC_SECRET and "authorization" not in seen.headers
    assert seen.headers["anthropic-version"]
    counted = client.messages.count_tokens(model="claude-haiku-4-5", messages=[{"role": "user", "content": "hi"}])
    assert counted.input_tokens == INPUT


def test_openai_responses_api(gw: Env) -> None:
    resp = gw.openai().responses.create(model="gpt-4o-mini", input="hello", max_output_tokens=40)
    assert resp.output_text == "hi"
    assert gw.standin.seen[-1].path == "/v1/responses"


def test_openai_responses_stream_passes_through_and_settles(gw: Env) -> None:
    before = gw.status(gw_key_scope(gw, "main"))
    events = list(gw.openai().responses.create(model="gpt-4o-mini", input="hello", max_output_tokens=40,
                                               stream=True))  # fmt: skip
    assert [e.type for e in events] == ["response.created", "response.output_text.delta", "response.completed"]
    after = gw.status(gw_key_scope(gw, "main"))
    assert after[1] - before[1] == _cost("gpt-4o-mini", "openai", {"input_tokens": INPUT, "output_tokens": 5})
    assert after[2] == 0


def test_openai_stream_hides_the_usage_chunk_it_asked_for_and_settles(gw: Env) -> None:
    before = gw.status(gw_key_scope(gw, "main"))
    chunks = list(gw.openai().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}], max_tokens=50, stream=True))  # fmt: skip
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "hi"
    assert all(c.choices for c in chunks)  # the usage chunk the gateway asked for is not passed on
    assert gw.standin.seen[-1].body["stream_options"] == {"include_usage": True}
    after = gw.status(gw_key_scope(gw, "main"))
    assert after[1] - before[1] == _cost("gpt-4o-mini", "openai", {"prompt_tokens": INPUT, "completion_tokens": 5})
    assert after[2] == 0
    # A client that asks for usage gets it.
    asked = list(gw.openai().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}], max_tokens=50, stream=True,
        stream_options={"include_usage": True}))  # fmt: skip
    assert asked[-1].usage is not None and asked[-1].usage.completion_tokens == 5


def test_anthropic_stream_passes_through_and_settles(gw: Env) -> None:
    before = gw.status(gw_key_scope(gw, "main"))
    with gw.anthropic().messages.stream(model="claude-haiku-4-5", max_tokens=64,
                                        messages=[{"role": "user", "content": "hello"}]) as stream:  # fmt: skip
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "hi" and final.usage.output_tokens == 5
    after = gw.status(gw_key_scope(gw, "main"))
    cost = _cost("claude-haiku-4-5", "anthropic", {"input_tokens": INPUT, "output_tokens": 5})
    assert after[1] - before[1] == cost and after[2] == 0


def gw_key_scope(gw: Env, name: str) -> str:
    return f"key:{gw.keys[name].split('-')[2]}"


def test_over_budget_is_402_before_any_upstream_call(gw: Env) -> None:
    before = gw.standin.count()
    with pytest.raises(openai.APIStatusError) as oai:
        gw.openai("broke").chat.completions.create(model="gpt-4o-mini", max_tokens=50,
                                                   messages=[{"role": "user", "content": "hello"}])  # fmt: skip
    assert oai.value.status_code == 402
    err = oai.value.body
    assert isinstance(err, dict)
    assert err["code"] == "budget_exceeded" and err["scope"] == gw_key_scope(gw, "broke")
    assert err["window"] == "daily" and err["limit_micros"] == 1 and err["settled_micros"] == 0
    assert err["held_micros"] == 0 and err["requested_micros"] > 1
    with pytest.raises(anthropic.APIStatusError) as ant:
        gw.anthropic("broke").messages.create(model="claude-haiku-4-5", max_tokens=64,
                                              messages=[{"role": "user", "content": "hello"}])  # fmt: skip
    assert ant.value.status_code == 402
    body = ant.value.body
    assert isinstance(body, dict) and body["type"] == "error" and body["error"]["type"] == "budget_exceeded"
    assert gw.standin.count() == before


def test_refusals_in_each_providers_shape_never_reach_the_upstream(gw: Env) -> None:
    before = gw.standin.count()
    client = gw.openai()
    msgs = [{"role": "user", "content": "hello"}]
    with pytest.raises(openai.BadRequestError) as long:  # over max_input_tokens, by the count's bound
        client.chat.completions.create(model="gpt-4o-mini", max_tokens=5,
                                       messages=[{"role": "user", "content": "word " * 3000}])  # fmt: skip
    assert long.value.code == "context_length_exceeded"
    with pytest.raises(openai.BadRequestError) as nolimit:  # no max_tokens and no default for this key
        client.chat.completions.create(model="gpt-4o-mini", messages=msgs)  # type: ignore[call-overload]
    assert nolimit.value.code == "max_tokens_required"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-9-unknown", max_tokens=5, messages=msgs)  # type: ignore[arg-type]
    with pytest.raises(openai.PermissionDeniedError):
        gw.openai("narrow").chat.completions.create(model="claude-haiku-4-5", max_tokens=5, messages=msgs)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as wrong:
        client.chat.completions.create(model="claude-haiku-4-5", max_tokens=5, messages=msgs)  # type: ignore[arg-type]
    assert wrong.value.code == "wrong_endpoint"
    for name in ("revoked",):
        with pytest.raises(openai.AuthenticationError):
            gw.openai(name).chat.completions.create(model="gpt-4o-mini", max_tokens=5, messages=msgs)  # type: ignore[arg-type]
    with pytest.raises(anthropic.AuthenticationError) as bad:
        anthropic.Anthropic(base_url=gw.url, api_key="sk-litm-000000000000-" + "x" * 43, max_retries=0).messages.create(
            model="claude-haiku-4-5", max_tokens=5, messages=[{"role": "user", "content": "hi"}])  # fmt: skip
    body = bad.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "authentication_error"
    with pytest.raises(anthropic.BadRequestError) as too_long:
        gw.anthropic().messages.create(model="claude-haiku-4-5", max_tokens=5,
                                       messages=[{"role": "user", "content": "word " * 3000}])  # fmt: skip
    assert "prompt is too long" in str(too_long.value)
    auth = {"authorization": f"Bearer {gw.keys['main']}", "content-type": "application/json"}
    big = httpx.post(gw.url + "/v1/chat/completions", content=b"x" * 300_000, headers=auth)
    assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
    deep = b"[" * 50_000 + b"]" * 50_000  # deeper than the JSON parser goes
    for path in ("/v1/chat/completions", "/v1/messages/count_tokens"):
        got = httpx.post(gw.url + path, content=deep, headers=auth)
        assert got.status_code == 400 and got.json()["error"]["code"] == "invalid_json", path
    assert gw.standin.count() == before


def test_a_compacting_key_gets_its_agent_history_compacted_and_told_so(gw: Env) -> None:
    history = [{"role": "system", "content": "You are terse."}]
    for i in range(20):  # about 4,000 tokens of history, over the model's 2,000
        history += [{"role": "user", "content": f"step {i}: " + "observe the logs " * 50},
                    {"role": "assistant", "content": f"done {i}"}]  # fmt: skip
    history.append({"role": "user", "content": "What next?"})
    with pytest.raises(openai.BadRequestError):  # a key without the policy is refused
        gw.openai().chat.completions.create(model="gpt-4o-mini", max_tokens=20, messages=history)  # type: ignore[arg-type]
    raw = gw.openai("compact").chat.completions.with_raw_response.create(model="gpt-4o-mini", max_tokens=20,
                                                                         messages=history)  # type: ignore[arg-type]  # fmt: skip
    assert raw.headers["x-litm-compacted"] == "true"
    assert int(raw.headers["x-litm-input-tokens"]) <= 2000
    sent = gw.standin.seen[-1].body["messages"]
    assert len(sent) < len(history) and sent[0] == history[0] and sent[-1] == history[-1]


def test_default_output_cap_of_a_key_is_applied(gw: Env) -> None:
    gw.openai("default").chat.completions.create(model="gpt-4o-mini",  # type: ignore[call-overload]
                                                 messages=[{"role": "user", "content": "hello"}])  # fmt: skip
    assert gw.standin.seen[-1].body["max_completion_tokens"] == 7


def test_upstream_errors_refund_or_charge_by_the_spend_rule(gw: Env) -> None:
    scope = gw_key_scope(gw, "main")
    msgs = [{"role": "user", "content": "hello"}]
    before = gw.status(scope)
    with pytest.raises(openai.RateLimitError):  # refused upstream: refunded
        gw.openai().chat.completions.create(model="fail-429", max_tokens=10, messages=msgs)  # type: ignore[arg-type]
    assert gw.status(scope)[1:] == before[1:]
    with pytest.raises(openai.InternalServerError):  # may have run: charged its full hold (10 x $0.001)
        gw.openai().chat.completions.create(model="fail-500", max_tokens=10, messages=msgs)  # type: ignore[arg-type]
    after = gw.status(scope)
    assert after[1] - before[1] == 10_000 and after[2] == 0


def test_the_provider_secret_never_comes_back_in_an_upstream_error(gw: Env) -> None:
    msgs = [{"role": "user", "content": "hello"}]
    with pytest.raises(openai.APIStatusError) as denied:  # the provider refused the gateway's own key
        gw.openai().chat.completions.create(model="fail-401", max_tokens=10, messages=msgs)  # type: ignore[arg-type]
    assert denied.value.status_code == 502 and denied.value.code == "upstream_refused_credentials"
    assert OPENAI_SECRET not in denied.value.response.text
    with pytest.raises(openai.BadRequestError) as echoed:  # an error body that quotes the credential
        gw.openai().chat.completions.create(model="fail-400", max_tokens=10, messages=msgs)  # type: ignore[arg-type]
    assert OPENAI_SECRET not in echoed.value.response.text and "[redacted]" in echoed.value.response.text
    assert OPENAI_SECRET in json.dumps(gw.standin.seen[-1].headers)  # it was sent upstream, as it must be


def test_count_tokens_never_returns_the_provider_secret_either(gw: Env) -> None:
    """count_tokens is forwarded without a hold, but an upstream error is answered by the same rule."""
    auth = {"x-api-key": gw.keys["main"], "anthropic-version": "2023-06-01"}
    msgs = [{"role": "user", "content": "hello"}]
    denied = httpx.post(gw.url + "/v1/messages/count_tokens", json={"model": "fail-403", "messages": msgs},
                        headers=auth)  # fmt: skip
    assert denied.status_code == 502 and denied.json()["error"]["code"] == "upstream_refused_credentials"
    assert ANTHROPIC_SECRET not in denied.text and denied.json()["type"] == "error"
    echoed = httpx.post(gw.url + "/v1/messages/count_tokens", json={"model": "fail-422", "messages": msgs},
                        headers=auth)  # fmt: skip
    assert echoed.status_code == 422 and ANTHROPIC_SECRET not in echoed.text and "[redacted]" in echoed.text
    assert ANTHROPIC_SECRET in json.dumps(gw.standin.seen[-1].headers)  # it was sent upstream, as it must be


def test_curl_is_a_client_too(gw: Env) -> None:
    body = json.dumps({"model": "gpt-4o-mini", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]})
    out = subprocess.run(["curl", "-sS", "-D", "-", gw.url + "/v1/chat/completions", "-H",
                          f"Authorization: Bearer {gw.keys['main']}", "-H", "Content-Type: application/json",
                          "-d", body], capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    head, _, payload = out.stdout.partition("\n\n")  # text mode reads curl's CRLF as LF
    assert head.startswith("HTTP/1.1 200") and "x-litm-cost-micros" in head.lower()
    assert json.loads(payload)["choices"][0]["message"]["content"] == "hi"


def test_a_client_that_hangs_up_mid_body_is_an_info_line_not_a_500(gw: Env) -> None:
    # A client (or a load balancer's health probe) that closes before its body is read: nothing to reserve,
    # nothing upstream, and no "Exception in ASGI application" traceback in the gateway's log.
    before = gw.standin.count()
    host, port = gw.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + gw.keys["main"].encode() + b"\r\nContent-Length: 1000\r\n\r\n"
                     b'{"model": "gpt-4o-mini", ')  # fmt: skip
    deadline = time.monotonic() + 10
    while "client closed the connection" not in gw.log.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "the gateway did not log the client that hung up"
        time.sleep(0.05)
    text = gw.log.read_text(encoding="utf-8")
    assert "Exception in ASGI application" not in text and "ClientDisconnect" not in text
    assert gw.standin.count() == before
    assert httpx.get(gw.url + "/healthz").status_code == 200


def test_models_health_and_readiness(gw: Env) -> None:
    assert httpx.get(gw.url + "/healthz").json() == {"status": "ok"}
    assert httpx.get(gw.url + "/readyz").json() == {"status": "ready"}
    assert httpx.get(gw.url + "/v1/models").status_code == 401
    unknown = httpx.get(gw.url + "/v1/nothing-here")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_route"
    wrong = httpx.get(gw.url + "/v1/messages")
    assert wrong.status_code == 405 and wrong.json()["error"]["type"] == "invalid_request_error"
    names = [m.id for m in gw.openai("narrow").models.list()]
    assert names == ["gpt-4o-mini"]
    assert {m.id for m in gw.anthropic().models.list()} >= {"claude-haiku-4-5", "gpt-4o-mini"}


def test_fifty_concurrent_requests_on_a_cap_for_five(gw: Env) -> None:
    # Each call's worst case is $0.01 (10 output tokens at $1000/MTok, input free) and the stand-in reports
    # the full 10 tokens, so a $0.05 limit lets exactly five through, however the requests interleave.
    gw.standin.output = 1000
    before = gw.standin.count()
    headers = {"authorization": f"Bearer {gw.keys['tight']}"}
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}

    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=gw.url, timeout=30, limits=httpx.Limits(max_connections=50)) as c:
            answers = await asyncio.gather(*(c.post("/v1/chat/completions", json=body, headers=headers)
                                             for _ in range(50)))  # fmt: skip
        return [a.status_code for a in answers]

    try:
        statuses = asyncio.run(burst())
    finally:
        gw.standin.output = 5
    assert statuses.count(200) == 5 and statuses.count(402) == 45
    assert gw.standin.count() - before == 5
    limit, settled, held = gw.status(gw_key_scope(gw, "tight"))
    assert (limit, settled, held) == (50_000, 50_000, 0)


def test_metrics_behind_the_admin_key_summed_over_workers(gw: Env) -> None:
    assert httpx.get(gw.url + "/metrics").status_code == 401
    as_client = {"authorization": f"Bearer {gw.keys['main']}"}
    assert httpx.get(gw.url + "/metrics", headers=as_client).status_code == 401
    # Many requests, so that both workers answered some; the exposition sums every worker's values.
    no_limit = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]}
    for _ in range(6):
        httpx.post(
            gw.url + "/v1/chat/completions", json=no_limit, headers={"authorization": f"Bearer {gw.keys['broke']}"}
        )
    text = httpx.get(gw.url + "/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}).text
    lines = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
             if line and not line.startswith("#")}  # fmt: skip
    assert lines['litm_gateway_refusals_total{reason="max_tokens_required"}'] >= 6
    assert lines['litm_gateway_requests_total{route="/v1/chat/completions",status="400"}'] >= 6
    if len(gw.standin.seen) > 5:  # the rest of the module ran first: its calls are counted too
        assert lines['litm_gateway_refusals_total{reason="budget_exceeded"}'] >= 2
        assert lines['litm_gateway_settled_micros_total{model="gpt-4o-mini"}'] > 0
        assert lines['litm_gateway_ledger_seconds_count{op="reserve"}'] >= 5
        assert lines['litm_gateway_upstream_seconds_count{upstream="oai"}'] >= 5


def test_zz_no_key_or_secret_in_any_log_line(gw: Env) -> None:
    # Runs last in this module (after every other test has produced its access lines).
    text = gw.log.read_text(encoding="utf-8")
    access = [json.loads(line) for line in text.splitlines() if line]  # every line is one JSON object
    assert len(access) >= 20 and all("request_id" in a for a in access if a["msg"] == "request")
    for secret in (OPENAI_SECRET, ANTHROPIC_SECRET, ADMIN_KEY):
        assert secret not in text
    for key in gw.keys.values():
        assert key[len("sk-litm-") + 13 :] not in text  # not even the secret part of a virtual key
    assert "hello" not in text and "word word" not in text  # no prompt text by default


def test_sigterm_lets_a_stream_in_flight_finish_and_settle(gw: Env, tmp_path: Path) -> None:
    import os
    import signal

    port = free_port()
    env = {"TEST_OPENAI_SECRET": OPENAI_SECRET, "TEST_ANTHROPIC_SECRET": ANTHROPIC_SECRET, "TEST_ADMIN_KEY": ADMIN_KEY}
    scope = gw_key_scope(gw, "main")
    before = gw.status(scope)
    gw.standin.event_delay_s = 0.4
    body = {"model": "gpt-4o-mini", "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": "x"}]}
    try:
        # The command line's --port and --workers override the file (2 workers there).
        with GatewayProcess(gw.config, tmp_path / "one.log", env, port, ("--port", str(port), "--workers", "1")) as one:
            with httpx.stream("POST", one.url + "/v1/chat/completions", json=body, timeout=30,
                              headers={"authorization": f"Bearer {gw.keys['main']}"}) as resp:  # fmt: skip
                lines = resp.iter_lines()
                assert next(lines).startswith("data: ")
                assert one.proc is not None
                os.kill(one.proc.pid, signal.SIGTERM)  # mid-stream: stop accepting, finish what is in flight
                rest = [line for line in lines if line]
            assert rest[-1] == "data: [DONE]" and len(rest) == 2  # the second chunk and [DONE]; usage hidden
            # uvicorn re-raises the signal once it has shut down gracefully, so the exit reads as SIGTERM.
            assert one.proc.wait(timeout=20) in (0, -signal.SIGTERM)
            with pytest.raises(httpx.ConnectError):
                httpx.get(one.url + "/healthz")
        assert "Started parent process" not in (tmp_path / "one.log").read_text()  # one process: --workers 1
    finally:
        gw.standin.event_delay_s = 0.0
    after = gw.status(scope)
    # Settled at the stream's usage (not charged its full hold), nothing left held.
    assert after[1] - before[1] == _cost("gpt-4o-mini", "openai", {"prompt_tokens": INPUT, "completion_tokens": 5})
    assert after[2] == 0


def _get_twice(url: str, idle_s: float) -> bytes:
    """Two GET /healthz on one kept-alive connection, ``idle_s`` apart; what the server sent for the second."""
    host, port = url.removeprefix("http://").split(":")
    request = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        assert _response(sock).startswith(b"HTTP/1.1 200")
        time.sleep(idle_s)
        try:
            sock.sendall(request)
            return _response(sock)
        except ConnectionError:
            return b""


def _response(sock: socket.socket) -> bytes:
    """One whole response (head and Content-Length body) read off ``sock``; b'' when the server closed it."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    fields = dict(line.lower().split(b":", 1) for line in head.split(b"\r\n")[1:])
    while len(body) < int(fields[b"content-length"]):
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_an_idle_connection_outlives_the_5_s_a_client_pool_keeps_it(gw: Env, tmp_path: Path) -> None:
    # httpx (so the OpenAI and Anthropic SDKs) reuses a pooled connection for up to 5 s; a server closing it at
    # 5 s, uvicorn's default, races the client's next request, which is then lost (a ReadError, no answer).
    assert _get_twice(gw.url, 5.5).startswith(b"HTTP/1.1 200")  # the default, 75 s
    port = free_port()
    env = {"TEST_OPENAI_SECRET": OPENAI_SECRET, "TEST_ANTHROPIC_SECRET": ANTHROPIC_SECRET, "TEST_ADMIN_KEY": ADMIN_KEY,
           "LITM_SERVE__SERVER__KEEP_ALIVE_S": "1"}  # fmt: skip
    with GatewayProcess(gw.config, tmp_path / "short.log", env, port, ("--port", str(port), "--workers", "1")) as one:
        assert _get_twice(one.url, 0.2).startswith(b"HTTP/1.1 200")
        assert _get_twice(one.url, 2.0) == b""  # the option reaches uvicorn: closed after 1 s idle
