"""The gateway on each ledger (SQLite, and a real redis-server shared the way several gateways would share it):
concurrent requests on a small cap, a stream the client aborts, a ledger that stops answering.

The app runs in-process under real uvicorn (tests/serve_support.py), against the stand-in upstream.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fixtures_redis import RedisServer
from litm.serve import GatewayConfig, config_from_mapping, create_app, create_key
from litm.spend import open_ledger
from serve_support import StandIn, ThreadedServer

HOLD = 10_000  # 10 output tokens at $1000/MTok, input free: every call's worst case is exactly $0.01


def _config(tmp: Path, upstream: str, ledger: str, namespace: str = "default") -> GatewayConfig:
    return config_from_mapping({
        "ledger": {"url": ledger, "namespace": namespace}, "keys": {"store": str(tmp / "keys.db")},
        "upstreams": {"local": {"kind": "openai-compatible", "base_url": upstream + "/v1"}},
        "models": {"cap-model": {"upstream": "local", "price": {"input": "0", "output": "1000"}}},
    }, env={})  # fmt: skip


@pytest.fixture(params=["sqlite", "redis"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "sqlite":
        return str(tmp_path / "spend.db"), "default"
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url, request.getfixturevalue("redis_namespace")


def _held_and_settled(cfg: GatewayConfig, scope: str) -> tuple[int, int]:
    led = open_ledger(cfg.ledger.url, namespace=cfg.ledger.namespace)
    try:
        row = led.status([scope])[0]
        return row.held, row.settled
    finally:
        led.close()


@pytest.fixture
def standin() -> Iterator[tuple[StandIn, str]]:
    double = StandIn(output=1000)
    with ThreadedServer(double.app()) as server:
        yield double, server.url


def test_concurrent_requests_never_overspend(tmp_path: Path, ledger_url: tuple[str, str],
                                             standin: tuple[StandIn, str]) -> None:  # fmt: skip
    double, upstream = standin
    cfg = _config(tmp_path, upstream, *ledger_url)
    plain, key = create_key(cfg, name="t", limit="0.03")
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}

    async def burst(url: str) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            got = await asyncio.gather(*(client.post("/v1/chat/completions", json=body,
                                                     headers={"authorization": f"Bearer {plain}"})
                                         for _ in range(20)))  # fmt: skip
        return [r.status_code for r in got]

    with ThreadedServer(create_app(cfg)) as gw:
        statuses = asyncio.run(burst(gw.url))
    assert sorted(statuses) == [200] * 3 + [402] * 17
    assert double.count() == 3
    assert _held_and_settled(cfg, key.scope) == (0, 3 * HOLD)


def test_a_stream_the_client_aborts_is_charged_its_full_hold(tmp_path: Path, ledger_url: tuple[str, str],
                                                             standin: tuple[StandIn, str]) -> None:  # fmt: skip
    double, upstream = standin
    double.event_delay_s, double.output = 0.5, 2  # read to its end, the stream would settle 2 tokens, not 10
    cfg = _config(tmp_path, upstream, *ledger_url)
    plain, key = create_key(cfg, name="t", limit="1")
    body = {"model": "cap-model", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with ThreadedServer(create_app(cfg)) as gw:
        with httpx.stream("POST", gw.url + "/v1/chat/completions", json=body,
                          headers={"authorization": f"Bearer {plain}"}) as resp:  # fmt: skip
            assert resp.status_code == 200 and resp.headers["x-litm-held-micros"] == str(HOLD)
            first = next(resp.iter_lines())
            assert first.startswith("data: ")
        # The client went away before the usage: the provider may have generated up to max_tokens.
        deadline = time.monotonic() + 10
        while _held_and_settled(cfg, key.scope) != (0, HOLD) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _held_and_settled(cfg, key.scope) == (0, HOLD)


def test_a_stream_the_upstream_breaks_is_charged_its_full_hold(tmp_path: Path, standin: tuple[StandIn, str]) -> None:
    double, upstream = standin
    double.break_streams, double.output = True, 2
    cfg = _config(tmp_path, upstream, str(tmp_path / "spend.db"))
    plain, key = create_key(cfg, name="t", limit="1")
    body = {"model": "cap-model", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with ThreadedServer(create_app(cfg)) as gw:
        got: list[str] = []
        with (
            pytest.raises(httpx.HTTPError),
            httpx.stream(
                "POST", gw.url + "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {plain}"}
            ) as resp,
        ):
            got.extend(resp.iter_lines())
        assert got and got[0].startswith("data: ")  # the first event came through before the break
        deadline = time.monotonic() + 10
        while _held_and_settled(cfg, key.scope) != (0, HOLD) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _held_and_settled(cfg, key.scope) == (0, HOLD)


def test_a_ledger_that_stops_answering_fails_closed_and_recovers(tmp_path: Path, private_redis: RedisServer,
                                                                  standin: tuple[StandIn, str]) -> None:  # fmt: skip
    double, upstream = standin
    cfg = _config(tmp_path, upstream, private_redis.url)
    plain, key = create_key(cfg, name="t", limit="1")
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {plain}"}
    with ThreadedServer(create_app(cfg)) as gw:
        assert httpx.get(gw.url + "/readyz").status_code == 200
        assert httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers).status_code == 200
        private_redis.stop()
        down = httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=60)
        assert down.status_code == 503 and down.json()["error"]["code"] == "ledger_unavailable"
        assert httpx.get(gw.url + "/readyz", timeout=60).status_code == 503
        assert httpx.get(gw.url + "/healthz").status_code == 200
        assert double.count() == 1
        # Redis comes back (empty: this test server keeps nothing on disk, so the limit is set again).
        private_redis.start()
        led = open_ledger(cfg.ledger.url, namespace=cfg.ledger.namespace)
        led.set_limit(key.scope, "total", 1_000_000)
        led.close()
        assert httpx.get(gw.url + "/readyz", timeout=60).status_code == 200
        assert httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=60).status_code == 200
    assert double.count() == 2


def test_two_gateways_on_one_redis_share_one_budget(tmp_path: Path, redis_server: RedisServer, redis_namespace: str,
                                                    standin: tuple[StandIn, str]) -> None:  # fmt: skip
    double, upstream = standin
    cfg = _config(tmp_path, upstream, redis_server.url, redis_namespace)
    plain, key = create_key(cfg, name="t", limit="0.04")  # four worst cases, for both gateways together
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}

    async def burst(urls: list[str]) -> list[int]:
        async with httpx.AsyncClient(timeout=30) as client:
            got = await asyncio.gather(*(client.post(urls[i % 2] + "/v1/chat/completions", json=body,
                                                     headers={"authorization": f"Bearer {plain}"})
                                         for i in range(30)))  # fmt: skip
        return [r.status_code for r in got]

    with ThreadedServer(create_app(cfg)) as one, ThreadedServer(create_app(cfg)) as two:
        statuses = asyncio.run(burst([one.url, two.url]))
    assert sorted(statuses) == [200] * 4 + [402] * 26
    assert double.count() == 4
    assert _held_and_settled(cfg, key.scope) == (0, 4 * HOLD)
