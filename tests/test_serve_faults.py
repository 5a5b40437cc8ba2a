"""Load with faults at a small size (issue 42's benchmark scenario, scaled down): two ``litm serve`` instances with two
workers each on one redis-server, 30 concurrent clients sending 150 requests of random sizes (some streamed, some of
those dropped by the client), one worker SIGKILLed mid-run; and, on its own, a Redis restart mid-run.

A monitor reads the ledger throughout: settled + held never passes the limit. The stand-in upstream bills every
request it serves at its full output (the worst case), and that bill stays within the limit: no request over budget
reached it. Every request got an answer (200 or a typed 402) unless it was in flight on the killed worker; after
the leases expire and a sweep, nothing is held and the ledger's log sums to its counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from fixtures_redis import RedisServer
from fixtures_server import free_port
from litm.serve import create_key, load_config
from litm.spend import open_ledger
from serve_support import GatewayProcess, StandIn, ThreadedServer

pytestmark = pytest.mark.redis

LIMIT = 300_000  # $0.30: about 28 of the 150 requests (each holds 1-20 tokens at $1000/MTok)
CONFIG = """
[server]
workers = 2
[ledger]
url = "{redis}"
namespace = "{ns}"
lease_s = 2
[keys]
store = "{redis}"
namespace = "{ns}"
[upstreams.local]
kind = "openai-compatible"
base_url = "{upstream}/v1"
[models.cap-model]
upstream = "local"
price = {{ input = "0", output = "1000" }}
"""


def _workers(pid: int) -> list[int]:
    """The uvicorn worker processes under supervisor ``pid`` (not multiprocessing's resource tracker)."""
    try:
        kids = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return [k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]
    except OSError:
        return []


def test_two_gateways_under_load_with_a_killed_worker_never_overspend(
    tmp_path: Path, redis_server: RedisServer, redis_namespace: str
) -> None:
    double = StandIn(output=10**6)  # reports the full max_tokens: every served request costs its whole hold
    with ThreadedServer(double.app()) as upstream:
        config = tmp_path / "gateway.toml"
        config.write_text(CONFIG.format(redis=redis_server.url, ns=redis_namespace, upstream=upstream.url))
        cfg = load_config(config, env={})
        plain, key = create_key(cfg, name="load", limit=f"0.{LIMIT:06d}")
        ports = [free_port(), free_port()]
        ledger = open_ledger(redis_server.url, namespace=redis_namespace)
        peaks: list[int] = []
        stop = threading.Event()

        def monitor() -> None:
            while not stop.is_set():
                row = ledger.status([key.scope])[0]
                peaks.append(row.settled + row.held)
                time.sleep(0.01)

        with GatewayProcess(config, tmp_path / "a.log", {}, ports[0], ("--port", str(ports[0]))) as a, \
             GatewayProcess(config, tmp_path / "b.log", {}, ports[1], ("--port", str(ports[1]))):  # fmt: skip
            watcher = threading.Thread(target=monitor, daemon=True)
            watcher.start()
            assert a.proc is not None
            killed: list[int] = []
            outcomes = asyncio.run(_load([f"http://127.0.0.1:{p}" for p in ports], plain, a.proc.pid, killed))
            stop.set()
            watcher.join(timeout=5)
        time.sleep(2.5)  # every lease (2 s) has expired: a hold the killed worker left is charged by the sweep
        while ledger.sweep(64):
            pass
        row = ledger.status([key.scope])[0]
        mismatches = ledger.verify()
        ledger.close()
    assert killed, "no worker was killed"
    assert peaks and max(peaks) <= LIMIT, max(peaks)
    assert row.held == 0 and row.settled <= LIMIT and not mismatches
    billed = sum(int(s.body["max_tokens"]) * 1000 for s in double.seen)
    assert billed <= LIMIT, f"the upstream served {billed} micro-dollars of requests on a limit of {LIMIT}"
    answered = [o for o in outcomes if isinstance(o, int)]
    assert set(answered) <= {200, 402} and answered.count(200) >= 5 and answered.count(402) >= 50
    dropped = [o for o in outcomes if not isinstance(o, int)]
    assert len(dropped) <= 30, dropped  # at most what was in flight on the killed worker


async def _load(urls: list[str], key: str, parent: int, killed: list[int],
                extra: Callable[[list[int | str]], Awaitable[None]] | None = None) -> list[int | str]:  # fmt: skip
    """150 requests from 30 concurrent clients; with ``parent``, one of its workers is SIGKILLed mid-run; ``extra``
    runs beside them (a fault of its own) with the outcomes so far."""
    rng = random.Random(42)
    sem = asyncio.Semaphore(30)
    outcomes: list[int | str] = []

    async def one(i: int, client: httpx.AsyncClient) -> None:
        body = {"model": "cap-model", "max_tokens": rng.randint(1, 20), "messages": [{"role": "user", "content": "hi"}]}
        stream, drop = rng.random() < 0.3, rng.random() < 0.5
        async with sem:
            try:
                if not stream:
                    got = await client.post(urls[i % 2] + "/v1/chat/completions", json=body,
                                            headers={"authorization": f"Bearer {key}"})  # fmt: skip
                    outcomes.append(got.status_code)
                    return
                async with client.stream("POST", urls[i % 2] + "/v1/chat/completions", json={**body, "stream": True},
                                         headers={"authorization": f"Bearer {key}"}) as got:  # fmt: skip
                    async for _ in got.aiter_lines():
                        if drop:
                            break  # the client goes away mid-stream
                    outcomes.append(got.status_code)
            except httpx.HTTPError as exc:
                outcomes.append(type(exc).__name__)

    async def kill_a_worker() -> None:
        if not parent:
            return
        while len(outcomes) < 20:  # mid-run: after the first answers, with requests in flight
            await asyncio.sleep(0.01)
        workers = _workers(parent)
        if workers:
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=30)) as client:
        faults = [kill_a_worker(), *([extra(outcomes)] if extra else [])]
        await asyncio.gather(*faults, *(one(i, client) for i in range(150)))
    return outcomes


def test_a_redis_restart_mid_run_refuses_while_down_and_never_overspends(
    tmp_path: Path, private_redis: RedisServer
) -> None:
    import redis

    from litm.errors import LedgerUnavailableError

    double = StandIn(output=10**6, delay_s=0.02)
    with ThreadedServer(double.app()) as upstream:
        config = tmp_path / "gateway.toml"
        config.write_text(CONFIG.format(redis=private_redis.url, ns="restart", upstream=upstream.url))
        cfg = load_config(config, env={})
        plain, key = create_key(cfg, name="load", limit=f"0.{LIMIT:06d}")
        port = free_port()
        ledger = open_ledger(private_redis.url, namespace="restart")
        peaks: list[int] = []
        stop = threading.Event()

        def monitor() -> None:
            while not stop.is_set():
                try:
                    row = ledger.status([key.scope])[0]
                    peaks.append(row.settled + row.held)
                except LedgerUnavailableError:
                    pass  # the server is down: nothing to read
                time.sleep(0.01)

        async def restart(outcomes: list[int | str]) -> None:
            while len(outcomes) < 15:
                await asyncio.sleep(0.01)
            # A clean restart that keeps the data (SHUTDOWN SAVE writes it; the server reloads it at start).
            with contextlib.suppress(redis.ConnectionError):
                redis.Redis.from_url(private_redis.url).shutdown(save=True)
            await asyncio.sleep(0.5)
            await asyncio.to_thread(private_redis.start)

        with GatewayProcess(config, tmp_path / "g.log", {}, port, ("--port", str(port))):
            watcher = threading.Thread(target=monitor, daemon=True)
            watcher.start()
            outcomes = asyncio.run(_load([f"http://127.0.0.1:{port}"] * 2, plain, 0, [], extra=restart))
            stop.set()
            watcher.join(timeout=5)
        time.sleep(2.5)
        while ledger.sweep(64):
            pass
        row = ledger.status([key.scope])[0]
        ledger.close()
    assert peaks and max(peaks) <= LIMIT
    assert row.held == 0 and row.settled <= LIMIT
    assert sum(int(s.body["max_tokens"]) * 1000 for s in double.seen) <= LIMIT
    answered = [o for o in outcomes if isinstance(o, int)]
    assert set(answered) <= {200, 402, 503} and 503 in answered, outcomes  # typed refusals while Redis was down
    assert len(answered) == len(outcomes), outcomes  # no worker died: every request got an answer
