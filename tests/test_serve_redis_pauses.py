"""The gateway when a real redis-server stops answering mid-request (paused with SIGSTOP: the kernel still accepts
what is sent, nothing answers, and the server runs it when it resumes).

* The ledger: a reservation sent and never answered may still be booked. The client gets a typed 503
  (``ledger_unavailable``) in its provider's shape, nothing goes upstream, and once Redis answers again the gateway
  releases that hold (its key is the one the error names), so nothing stays held until a lease charges it.
* The key store: a slow lookup does not hold up the worker's event loop; other requests are served meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from fixtures_redis import RedisServer
from litm.serve import GatewayConfig, config_from_mapping, create_app, create_key
from litm.serve._keys_redis import RedisKeyStore
from litm.spend import open_ledger
from serve_support import StandIn, ThreadedServer

pytestmark = pytest.mark.redis
TIMEOUT_S = 0.3
HOLD = 10_000  # 10 output tokens at $1000/MTok


@contextmanager
def paused(server: RedisServer) -> Iterator[None]:
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


@pytest.fixture
def standin() -> Iterator[tuple[StandIn, str]]:
    double = StandIn(output=1000)
    with ThreadedServer(double.app()) as server:
        yield double, server.url


def _config(tmp: Path, upstream: str, ledger: str, keys: str) -> GatewayConfig:
    return config_from_mapping({
        "ledger": {"url": ledger, "namespace": "pause", "socket_timeout_s": TIMEOUT_S, "lease_s": 600},
        "keys": {"store": keys, "namespace": "pause", "socket_timeout_s": 1.0},
        "upstreams": {"local": {"kind": "openai-compatible", "base_url": upstream + "/v1"}},
        "models": {"cap-model": {"upstream": "local", "price": {"input": "0", "output": "1000"}},
                   "claude-haiku-4-5": {"upstream": "local", "price": {"input": "0", "output": "1000"}}},
    }, env={})  # fmt: skip


def test_a_reserve_redis_never_answered_is_a_typed_503_and_its_hold_is_released(
    tmp_path: Path, private_redis: RedisServer, standin: tuple[StandIn, str]
) -> None:
    double, upstream = standin
    cfg = _config(tmp_path, upstream, private_redis.url, str(tmp_path / "keys.db"))
    plain, key = create_key(cfg, name="t", limit="1")
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {plain}"}
    ledger = open_ledger(private_redis.url, namespace="pause")
    with ThreadedServer(create_app(cfg)) as gw:
        # One request first: the worker thread's connection is open and the reserve script loaded, as in any
        # running gateway, so the paused server receives the reserve itself.
        assert httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers).status_code == 200
        with paused(private_redis):
            started = time.monotonic()
            got = httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=30)
            waited = time.monotonic() - started
        assert got.status_code == 503, got.text
        error = got.json()["error"]
        assert error["code"] == "ledger_unavailable" and error["type"] == "server_error"
        assert "nothing was sent" in error["message"] and "released" in error["message"]
        assert waited < 2 * TIMEOUT_S + 5
        assert double.count() == 1  # only the first request reached the upstream
        hold = f"gw-{got.headers['x-request-id']}"
        # Redis resumes and runs the buffered reserve; the gateway then releases it (well before its 600 s lease).
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            record = ledger.get(hold)
            if record is not None and record.state != "held":
                break
            time.sleep(0.05)
        assert record is not None, "the buffered reserve should have been booked when Redis resumed"
        assert record.state == "refunded", record
        row = ledger.status([key.scope])[0]
        assert (row.held, row.settled) == (0, HOLD)
        assert ledger.verify() == []
        # The gateway goes on: the next request reserves, is sent and settles.
        assert httpx.post(gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=30).status_code == 200
    ledger.close()
    assert double.count() == 2


def test_a_slow_key_lookup_does_not_hold_up_other_requests(
    tmp_path: Path, private_redis: RedisServer, standin: tuple[StandIn, str]
) -> None:
    """While one request waits for its key from a Redis that does not answer, the same worker answers others: the
    health check, a request with a malformed key (no lookup), a model list of an Anthropic client refused at once."""
    _, upstream = standin
    cfg = _config(tmp_path, upstream, str(tmp_path / "spend.db"), private_redis.url)
    store = RedisKeyStore(private_redis.url, namespace="pause")
    plain, _ = store.create(name="t")
    store.close()
    body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}

    async def scenario(url: str) -> tuple[int, str, list[float], float]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            assert (await client.get("/v1/models", headers={"authorization": f"Bearer {plain}"})).status_code == 200
            with paused(private_redis):
                started = time.monotonic()
                slow = asyncio.create_task(client.post("/v1/chat/completions", json=body,
                                                       headers={"authorization": f"Bearer {plain}"}))  # fmt: skip
                await asyncio.sleep(0.2)  # the lookup is waiting on the paused server
                quick: list[float] = []
                for request in (client.get("/healthz"),
                                client.post("/v1/chat/completions", json=body,
                                            headers={"authorization": "Bearer sk-not-a-litm-key"})):  # fmt: skip
                    t0 = time.monotonic()
                    answer = await request
                    quick.append(time.monotonic() - t0)
                    assert answer.status_code in (200, 401)
                refused = await slow
                slow_s = time.monotonic() - started
        return refused.status_code, refused.json()["error"]["code"], quick, slow_s

    with ThreadedServer(create_app(cfg)) as gw:
        status, code, quick, slow_s = asyncio.run(scenario(gw.url))
    assert (status, code) == (503, "key_store_unavailable")
    assert slow_s >= 1.0  # the lookup waited at least one socket timeout (two tries: about 2 s) ...
    assert max(quick) < 1.0, quick  # ... and the other requests were answered meanwhile, not after it
