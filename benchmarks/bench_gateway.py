"""Gateway benchmark (issue 42): ``litm serve`` under load with faults, its added latency, and its peers side by side.

Everything runs on loopback. The upstream is a stand-in (this file with ``--stand-in``: uvicorn on asyncio, a
listen backlog of 4096, TCP_NODELAY, as asyncio sets it on every TCP socket) answering OpenAI Chat Completions,
OpenAI Responses and Anthropic Messages, plain and streamed, with usage, after ``--upstream-latency-ms``. It
bills every request at its worst case (the whole output limit) and keeps that bill per budget scope: a request
whose bill would pass a scope's limit is counted as **over budget at the upstream** (it must never happen: the
gateway reserved it first). The client tells it whose request it is in the body's ``user`` /
``metadata.user_id`` field (the gateway forwards the body, never the client's key).

``--mode faults`` (the default): one redis-server (AOF on) holds the ledger and the keys of 2 ``litm serve``
instances x 2 workers. ``--clients`` concurrent clients send ``--requests`` requests of random sizes (prompt
length, output limit, the three request shapes, 30 % streamed, half of the streams dropped by the client
mid-way) on 8 keys under 2 teams under one org, every scope with a limit. A quarter of the way in one worker is
SIGKILLed, half-way Redis is shut down (its data saved) and started again. Checked:

* a monitor reads every scope's counters all along: settled + held <= limit at every read;
* the stand-in's count of requests over budget is 0 and its bill per scope is within the limit;
* every request got an answer (200) or a typed refusal (a status with the error ``code`` in the provider's
  shape), except requests in flight on the killed worker at the moment it died;
* after the leases expire and a sweep, nothing is held and the ledger's log sums to its counters (verify).

``--mode latency``: the added latency over a direct call (p50 / p99; non-streaming, a ~1k-token prompt),
sequentially (direct and gateway interleaved in rounds of 50) and at ``--concurrency`` clients (per-request
latency and requests per second), with the SQLite ledger (``synchronous`` NORMAL and FULL) and with Redis, one
gateway of ``--workers`` workers each; ``--profile`` also writes a cProfile of one in-process gateway under
load. ``--peers litellm,tensorzero`` adds LiteLLM proxy and TensorZero's embedded gateway on the same load
(their Python from ``--peers-python``; never LiteLLM 1.82.7 or 1.82.8).

Results: ``results.json`` and ``results.md`` in ``--out``. This machine is shared: run it alone for numbers::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gateway.py --mode faults --out docs/results/gateway-faults
    PYTHONPATH=src .venv/bin/python benchmarks/bench_gateway.py --mode latency --requests 2000 --concurrency 100 \
        --out docs/results/gateway-latency
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import platform
import pstats
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROMPT = " ".join(["lost in the middle"] * 250)  # about 1,000 tokens
WORDS = ("budget", "ledger", "gateway", "context", "token", "stream", "window", "scope", "answer", "model")
OUTPUT_PRICE = 1000  # $ per million output tokens (input free): a request's worst case is max_tokens x 1000 micros


# -- the stand-in upstream -------------------------------------------------------------------------------------


def stand_in(port: int, latency_ms: float, chains_file: str) -> None:
    """The upstream double (a process of its own). ``chains_file``: JSON ``{"chains": {user: [scope, ...]},
    "limits": {scope: micros}}`` for the over-budget tally; ``GET /stats`` reports it."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    book = json.loads(Path(chains_file).read_text()) if chains_file else {"chains": {}, "limits": {}}
    chains: dict[str, list[str]] = book["chains"]
    limits: dict[str, int] = {k: int(v) for k, v in book["limits"].items()}
    stats: dict[str, Any] = {"received": 0, "over_budget": 0, "by_model": {}, "bill": {s: 0 for s in limits}}

    def charge(user: str, cost: int) -> None:
        scopes = chains.get(user, [])
        if any(stats["bill"][s] + cost > limits[s] for s in scopes):
            stats["over_budget"] += 1
        for s in scopes:
            stats["bill"][s] += cost

    def sse(data: Any, event: str | None = None) -> bytes:
        return (f"event: {event}\n" if event else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n"

    async def handle(request: Request) -> Response:
        body = json.loads(await request.body())
        model, path = str(body.get("model")), request.url.path
        stats["received"] += 1
        stats["by_model"][model] = stats["by_model"].get(model, 0) + 1
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or body.get("max_output_tokens") or 16)
        user = str(body.get("user") or (body.get("metadata") or {}).get("user_id") or "")
        charge(user, out * OUTPUT_PRICE)  # billed at the worst case, whatever happens next
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)
        if body.get("stream"):
            return StreamingResponse(events(path, model, out, body), media_type="text/event-stream")
        if path.endswith("/chat/completions"):
            return JSONResponse({"id": "c", "object": "chat.completion", "created": 0, "model": model,
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": out,
                                           "total_tokens": 10 + out}})  # fmt: skip
        if path.endswith("/responses"):
            return JSONResponse({"id": "r", "object": "response", "created_at": 0, "model": model,
                                 "status": "completed", "output": [{"type": "message", "id": "m", "role": "assistant",
                                 "status": "completed", "content": [{"type": "output_text", "text": "ok",
                                                                     "annotations": []}]}],
                                 "usage": {"input_tokens": 10, "output_tokens": out,
                                           "total_tokens": 10 + out}})  # fmt: skip
        return JSONResponse({"id": "m", "type": "message", "role": "assistant", "model": model,
                             "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                             "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": out}})  # fmt: skip

    async def events(path: str, model: str, out: int, body: dict[str, Any]) -> Any:
        if path.endswith("/chat/completions"):
            for text in ("o", "k", "!"):
                yield sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})  # fmt: skip
                await asyncio.sleep(0.005)
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = {"prompt_tokens": 10, "completion_tokens": out, "total_tokens": 10 + out}
                yield sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
                           "usage": usage})  # fmt: skip
            yield b"data: [DONE]\n\n"
        elif path.endswith("/responses"):
            base = {"id": "r", "object": "response", "created_at": 0, "model": model, "output": []}
            yield sse({"type": "response.created", "response": {**base, "status": "in_progress"}}, "response.created")
            for text in ("o", "k"):
                yield sse({"type": "response.output_text.delta", "delta": text}, "response.output_text.delta")
                await asyncio.sleep(0.005)
            usage = {"input_tokens": 10, "output_tokens": out, "total_tokens": 10 + out}
            yield sse({"type": "response.completed", "response": {**base, "status": "completed", "usage": usage}},
                      "response.completed")  # fmt: skip
        else:
            yield sse({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                       "model": model, "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}},
                      "message_start")  # fmt: skip
            for text in ("o", "k"):
                yield sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                          "content_block_delta")  # fmt: skip
                await asyncio.sleep(0.005)
            yield sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": out}},
                      "message_delta")  # fmt: skip
            yield sse({"type": "message_stop"}, "message_stop")

    async def get_stats(request: Request) -> JSONResponse:
        return JSONResponse(stats)

    routes = [Route("/stats", get_stats), Route("/{path:path}", handle, methods=["POST"])]
    uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning", access_log=False,
                backlog=4096)  # fmt: skip


# -- parts ---------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, proc: subprocess.Popen[bytes] | None, what: str, timeout_s: float = 90) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{what} did not start in {timeout_s:.0f} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Redis:
    """A redis-server of the benchmark's own (AOF on, so a restart keeps the ledger)."""

    def __init__(self, workdir: Path) -> None:
        self.port, self.workdir = free_port(), workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (scripts/ensure-redis.sh)")
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                                      str(self.workdir), "--appendonly", "yes", "--appendfsync", "everysec",
                                      "--save", "", "--maxmemory-policy", "noeviction"],
                                     stdout=(self.workdir / "redis.log").open("ab"),
                                     stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def shutdown(self) -> None:
        """A clean stop that keeps the data (the AOF is flushed), as an operator's restart would."""
        import redis

        with contextlib.suppress(redis.ConnectionError):
            redis.Redis(port=self.port).shutdown()
        if self.proc is not None:
            self.proc.wait(timeout=20)

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)


def _workers(pid: int) -> list[int]:
    """The uvicorn worker processes under supervisor ``pid``."""
    try:
        kids = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return [k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]
    except OSError:
        return []


def _rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants, in KiB (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except (OSError, StopIteration):
            continue
    return total


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _gateway_config(path: Path, *, up_port: int, ledger: str, keys: str, namespace: str, lease_s: float,
                    workers: int, synchronous: str = "FULL", server: str = "") -> None:  # fmt: skip
    path.write_text(
        f'[server]\nworkers = {workers}\nlog_level = "warning"\naccess_log = false\n{server}'
        f'[ledger]\nurl = "{ledger}"\nnamespace = "{namespace}"\nlease_s = {lease_s}\nsynchronous = "{synchronous}"\n'
        f'socket_timeout_s = 1.0\n[keys]\nstore = "{keys}"\nnamespace = "{namespace}"\nsocket_timeout_s = 1.0\n'
        f'[upstreams.local]\nkind = "openai-compatible"\nbase_url = "http://127.0.0.1:{up_port}/v1"\n'
        f'[upstreams.ant]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:{up_port}"\n'
        '[models.bench-oai]\nupstream = "local"\nmax_input_tokens = 8000\n'
        f'price = {{ input = "0", output = "{OUTPUT_PRICE}" }}\n'
        '[models.bench-claude]\nupstream = "ant"\nmax_input_tokens = 8000\n'
        f'price = {{ input = "0", output = "{OUTPUT_PRICE}" }}\n'
        '[models.bench-model]\nupstream = "local"\nmax_input_tokens = 8000\n'
        'price = { input = "0.15", output = "0.60" }\n'
        f'[models.cap-model]\nupstream = "local"\nprice = {{ input = "0", output = "{OUTPUT_PRICE}" }}\n',
        encoding="utf-8",
    )  # fmt: skip


def _serve(config: Path, port: int, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "litm", "serve", "--config", str(config), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"),
                            env={**os.environ, **(env or {})})  # fmt: skip


# -- faults -------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    instance: int
    started: float
    ended: float
    status: int | None = None
    code: str | None = None
    aborted: bool = False
    error: str | None = None


@dataclass
class Monitor:
    """Reads every scope's counters until stopped; records the worst settled + held - limit per scope."""

    url: str
    namespace: str
    scopes: list[str]
    interval_s: float = 0.02
    reads: int = 0
    unavailable: int = 0
    worst: dict[str, int] = field(default_factory=dict)
    violations: list[dict[str, Any]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        from litm.errors import LedgerUnavailableError
        from litm.spend import RedisLedger

        ledger = RedisLedger(self.url, namespace=self.namespace, socket_timeout_s=0.5)
        try:
            while not self.stop.is_set():
                try:
                    rows = ledger.status(self.scopes)
                except LedgerUnavailableError:
                    self.unavailable += 1
                    time.sleep(0.05)
                    continue
                self.reads += 1
                for row in rows:
                    over = row.settled + row.held - row.limit
                    self.worst[row.scope] = max(self.worst.get(row.scope, over), over)
                    if over > 0 and len(self.violations) < 20:
                        self.violations.append({"scope": row.scope, "settled": row.settled, "held": row.held,
                                                "limit": row.limit})  # fmt: skip
                time.sleep(self.interval_s)
        finally:
            ledger.close()


def _request(rng: random.Random, user: str) -> tuple[str, dict[str, Any], str]:
    """A random request: (path, body, model) of one of the three shapes, prompt of 5-1,500 words."""
    words = " ".join(rng.choice(WORDS) for _ in range(rng.choice((5, 50, 300, 1500))))
    limit = rng.randint(1, 60)
    shape = rng.choice(("chat", "chat", "responses", "messages"))
    if shape == "chat":
        return "/v1/chat/completions", {"model": "bench-oai", "max_tokens": limit, "user": user,
                                        "messages": [{"role": "user", "content": words}]}, "bench-oai"  # fmt: skip
    if shape == "responses":
        return "/v1/responses", {"model": "bench-oai", "max_output_tokens": limit, "user": user,
                                 "input": words}, "bench-oai"  # fmt: skip
    return "/v1/messages", {"model": "bench-claude", "max_tokens": limit, "metadata": {"user_id": user},
                            "messages": [{"role": "user", "content": words}]}, "bench-claude"  # fmt: skip


async def _load(urls: list[str], keys: list[tuple[str, str]], args: argparse.Namespace, faults: dict[str, Any],
                kill: Any, restart: Any) -> list[Outcome]:  # fmt: skip
    import httpx

    rng = random.Random(args.seed)
    sem = asyncio.Semaphore(args.clients)
    outcomes: list[Outcome] = []

    async def one(i: int, client: httpx.AsyncClient) -> None:
        plain, user = keys[rng.randrange(len(keys))]
        path, body, _ = _request(rng, user)
        stream, drop = rng.random() < 0.3, rng.random() < 0.5
        instance = i % len(urls)
        headers = {"authorization": f"Bearer {plain}", "anthropic-version": "2023-06-01"}
        async with sem:
            o = Outcome(instance, time.monotonic(), 0.0)
            try:
                if not stream:
                    got = await client.post(urls[instance] + path, json=body, headers=headers)
                    o.status, o.code = got.status_code, _code(got.status_code, got.content)
                else:
                    async with client.stream("POST", urls[instance] + path, json={**body, "stream": True},
                                             headers=headers) as got:  # fmt: skip
                        o.status = got.status_code
                        if got.status_code != 200:
                            o.code = _code(got.status_code, await got.aread())
                        else:
                            async for _ in got.aiter_lines():
                                if drop:
                                    o.aborted = True
                                    break  # the client goes away mid-stream
            except httpx.HTTPError as exc:
                o.error = type(exc).__name__
            o.ended = time.monotonic()
            outcomes.append(o)

    async def faults_at(done_fraction: float, action: Any, name: str) -> None:
        while len(outcomes) < done_fraction * args.requests:
            await asyncio.sleep(0.01)
        faults[name] = {"at": time.monotonic(), "after_requests": len(outcomes)}
        faults[name].update(await asyncio.to_thread(action))

    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(faults_at(0.25, kill, "worker_killed"), faults_at(0.5, restart, "redis_restarted"),
                             *(one(i, client) for i in range(args.requests)))  # fmt: skip
    return outcomes


def _code(status: int, content: bytes) -> str | None:
    if status == 200:
        return None
    try:
        error = json.loads(content).get("error") or {}
    except (ValueError, AttributeError):
        return None
    code = error.get("code") if isinstance(error, dict) else None
    return str(code) if code else None


def run_faults(args: argparse.Namespace) -> dict[str, Any]:
    from litm.serve import create_key, load_config
    from litm.spend import RedisLedger

    tmp = Path(tempfile.mkdtemp(prefix="bench-gateway-faults-"))
    redis = Redis(tmp)
    redis.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        namespace = "bench"
        ports = [free_port() for _ in range(args.instances)]
        up_port = free_port()
        config = tmp / "gateway.toml"
        _gateway_config(config, up_port=up_port, ledger=redis.url, keys=redis.url, namespace=namespace,
                        lease_s=args.lease_s, workers=args.workers)  # fmt: skip
        cfg = load_config(config, env={})
        # The budget: one org over two teams over 8 keys. The limits are scaled to the run so that every
        # scope is still live when the faults hit (a quarter and half-way) and each is exhausted part-way:
        # four keys at about a third of the run, team a and the org at about 60 %, the rest near the end.
        # Each key carries 1/8 of the traffic, so 1/8 of ``total`` is what it would spend unchecked.
        mean_cost = 30 * OUTPUT_PRICE
        total = args.requests * mean_cost
        limits = {"org:bench": total * 45 // 100, "team:a": total // 4, "team:b": total * 28 // 100}
        ledger = RedisLedger(redis.url, namespace=namespace)
        for scope, micros in limits.items():
            ledger.set_limit(scope, "total", micros)
        keys: list[tuple[str, str]] = []
        chains: dict[str, list[str]] = {}
        for i in range(8):
            team = "team:a" if i < 4 else "team:b"
            key_limit = total * 11 // 100 if i % 2 else total // 25
            plain, key = create_key(cfg, name=f"k{i}", scopes=["org:bench", team], limit=f"{key_limit / 1e6:.6f}")
            keys.append((plain, key.id))
            chains[key.id] = list(key.chain)
            limits[key.scope] = ledger.status([key.scope])[0].limit
        (tmp / "chains.json").write_text(json.dumps({"chains": chains, "limits": limits}))
        upstream = subprocess.Popen([sys.executable, __file__, "--stand-in", str(up_port), "--upstream-latency-ms",
                                     str(args.upstream_latency_ms), "--chains", str(tmp / "chains.json")])  # fmt: skip
        procs.append(upstream)
        _wait_http(f"http://127.0.0.1:{up_port}/stats", upstream, "stand-in")
        gateways = [_serve(config, port, tmp / f"gateway-{n}.log") for n, port in enumerate(ports)]
        procs += gateways
        for port, proc in zip(ports, gateways, strict=True):
            _wait_http(f"http://127.0.0.1:{port}/readyz", proc, "litm serve")
        monitor = Monitor(redis.url, namespace, sorted(limits))
        watcher = threading.Thread(target=monitor.run, daemon=True)
        watcher.start()
        faults: dict[str, Any] = {}

        def kill() -> dict[str, Any]:
            workers = _workers(gateways[0].pid)
            if not workers:
                return {"pid": None}
            os.kill(workers[0], signal.SIGKILL)
            return {"pid": workers[0], "instance": 0}

        def restart() -> dict[str, Any]:
            down = time.monotonic()
            redis.shutdown()
            time.sleep(args.redis_down_s)
            redis.start()
            return {"down_s": round(time.monotonic() - down, 3)}

        started = time.monotonic()
        outcomes = asyncio.run(_load([f"http://127.0.0.1:{p}" for p in ports], keys, args, faults, kill, restart))
        wall = time.monotonic() - started
        monitor.stop.set()
        watcher.join(timeout=10)
        import httpx

        stand = httpx.get(f"http://127.0.0.1:{up_port}/stats", timeout=10).json()
        rss = [_rss_kib(p.pid) for p in gateways]
        for proc in gateways:
            _stop(proc)
        # Holds left by the killed worker (and by streams whose settle could not be written) expire with their
        # lease and are charged in full by the sweep.
        time.sleep(args.lease_s + 0.5)
        while ledger.sweep(256):
            pass
        rows = {row.scope: row for row in ledger.status(sorted(limits))}
        mismatches = ledger.verify()
        ledger.close()
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    report = _faults_report(args, outcomes, faults, monitor, stand, rows, limits, mismatches, wall, rss)
    # A 500 is a defect of the gateway's own: its log line (type and message) says where to look.
    report["gateway_defects"] = [line for n in range(args.instances) for line in _defects(tmp / f"gateway-{n}.log")]
    return report


def _defects(log: Path) -> list[str]:
    """The messages of a gateway log's ``request ... failed`` lines (the 500s), at most 10."""
    out = []
    for line in log.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError, AttributeError):
            msg = str(json.loads(line).get("msg", ""))
            if msg.startswith("request to ") and " failed: " in msg:
                out.append(msg)
    return out[:10]


def _faults_report(args: argparse.Namespace, outcomes: list[Outcome], faults: dict[str, Any], monitor: Monitor,
                   stand: dict[str, Any], rows: dict[str, Any], limits: dict[str, int], mismatches: list[Any],
                   wall: float, rss: list[int]) -> dict[str, Any]:  # fmt: skip
    killed_at = faults.get("worker_killed", {}).get("at")
    statuses: dict[str, int] = {}
    untyped, in_flight_on_killed = [], 0
    for o in outcomes:
        label = "aborted by client" if o.aborted else (f"{o.status} {o.code}" if o.code else str(o.status or o.error))
        statuses[label] = statuses.get(label, 0) + 1
        typed = o.status == 200 or (o.status is not None and o.code is not None)
        if typed:
            continue
        on_killed = killed_at is not None and o.instance == 0 and o.started <= killed_at + 0.5 and o.ended >= killed_at
        if on_killed:
            in_flight_on_killed += 1
        else:
            untyped.append({"instance": o.instance, "status": o.status, "error": o.error})
    # After a fault means after it is over (Redis back up); a short run may send nothing after that.
    over_at = {name: fault["at"] + fault.get("down_s", 0.0) for name, fault in faults.items()}
    served_after = {
        name: sum(1 for o in outcomes if o.status == 200 and not o.aborted and o.started > at)
        for name, at in over_at.items()
    }
    sent_after = {name: sum(1 for o in outcomes if o.started > at) for name, at in over_at.items()}
    scopes = {
        scope: {"limit": limits[scope], "settled": rows[scope].settled, "held": rows[scope].held,
                "worst_settled_plus_held_minus_limit": monitor.worst.get(scope),
                "upstream_bill": stand["bill"].get(scope, 0)}
        for scope in sorted(limits)
    }  # fmt: skip
    checks = {
        "never_over_limit": not monitor.violations and monitor.reads > 0,
        "zero_over_budget_at_upstream": stand["over_budget"] == 0,
        "upstream_bill_within_limits": all(s["upstream_bill"] <= s["limit"] for s in scopes.values()),
        "every_request_answered_or_typed": not untyped,
        "nothing_held_after_sweep": all(s["held"] == 0 for s in scopes.values()),
        "ledger_balances": not mismatches,
        "no_internal_errors": not any(o.status == 500 for o in outcomes),
        "worker_killed": bool(faults.get("worker_killed", {}).get("pid")),
        "redis_restarted": "redis_restarted" in faults,
        # A fault that hits after every budget is spent proves little: some requests must still be served
        # (200) after each fault.
        "budgets_live_after_each_fault": bool(faults)
        and all(served_after[name] > 0 or sent_after[name] == 0 for name in faults),
    }
    return {
        "mode": "faults",
        "machine": _machine(),
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "stand_in", "chains")},
        "checks": checks,
        "ok": all(checks.values()),
        "requests": len(outcomes),
        "wall_s": round(wall, 2),
        "answers": dict(sorted(statuses.items())),
        "untyped_outside_the_killed_worker": untyped[:20],
        "untyped_in_flight_on_the_killed_worker": in_flight_on_killed,
        "upstream": {"received": stand["received"], "over_budget": stand["over_budget"]},
        "served_after_fault": served_after,
        "monitor": {"reads": monitor.reads, "reads_while_redis_down": monitor.unavailable,
                    "violations": monitor.violations},
        "scopes": scopes,
        "faults": {k: {kk: vv for kk, vv in v.items() if kk != "at"} for k, v in faults.items()},
        "ledger_mismatches": [str(m) for m in mismatches[:20]],
        "gateway_rss_kib": rss,
    }  # fmt: skip


# -- latency ------------------------------------------------------------------------------------------------


async def _timed(url: str, headers: dict[str, str], body: dict[str, Any], n: int, conc: int
                 ) -> tuple[float, list[float], list[int]]:  # fmt: skip
    """``n`` requests at ``conc`` concurrent clients: (wall seconds, per-request ms, statuses).

    The clients are aiohttp's: on 2 cores the load generator shares the CPUs with what it measures, and httpx's
    pool scans every connection on each request (at 100 connections, most of the generator's time)."""
    import aiohttp

    sem = asyncio.Semaphore(conc)
    times: list[float] = []
    statuses: list[int] = []
    payload = json.dumps(body).encode()
    sent_headers = {**headers, "content-type": "application/json"}
    connector = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:

        async def one() -> None:
            async with sem:
                t0 = time.perf_counter()
                try:
                    async with client.post(url, data=payload, headers=sent_headers) as got:
                        await got.read()
                except (aiohttp.ClientError, TimeoutError):
                    statuses.append(0)  # a dropped connection is counted (non_200), not the end of the run
                    return
                times.append((time.perf_counter() - t0) * 1000)
                statuses.append(got.status)

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started, times, statuses


def _sequential(targets: dict[str, tuple[str, dict[str, str]]], body: dict[str, Any], n: int) -> dict[str, list[float]]:
    """Sequential latency of each target, interleaved in rounds of 50 (load that comes and goes lands on all)."""
    import httpx

    lat: dict[str, list[float]] = {name: [] for name in targets}
    with httpx.Client(timeout=60) as client:
        for url, headers in targets.values():
            for _ in range(10):
                client.post(url, json=body, headers=headers).raise_for_status()
        done = 0
        while done < n:
            batch = min(50, n - done)
            for name, (url, headers) in targets.items():
                for _ in range(batch):
                    t0 = time.perf_counter()
                    client.post(url, json=body, headers=headers).raise_for_status()
                    lat[name].append((time.perf_counter() - t0) * 1000)
            done += batch
    return lat


def _summary(times: list[float]) -> dict[str, float]:
    return {"p50_ms": round(_pct(times, 0.5), 3), "p99_ms": round(_pct(times, 0.99), 3),
            "mean_ms": round(statistics.fmean(times), 3) if times else float("nan")}  # fmt: skip


def run_latency(args: argparse.Namespace) -> dict[str, Any]:
    from litm.serve import create_key, load_config

    tmp = Path(tempfile.mkdtemp(prefix="bench-gateway-latency-"))
    up_port = free_port()
    upstream = subprocess.Popen([sys.executable, __file__, "--stand-in", str(up_port),
                                 "--upstream-latency-ms", str(args.upstream_latency_ms)])  # fmt: skip
    procs: list[subprocess.Popen[bytes]] = [upstream]
    redis = Redis(tmp)
    redis.start()
    body = {"model": "bench-model", "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]}
    direct = (f"http://127.0.0.1:{up_port}/v1/chat/completions", {})
    results: dict[str, Any] = {}
    try:
        _wait_http(f"http://127.0.0.1:{up_port}/stats", upstream, "stand-in")
        # ``-h11``: the same gateway on uvicorn's pure-Python parser and loop (h11, asyncio), what it ran on
        # before the serve extra brought httptools and uvloop: their share, measured in the same run.
        pure = 'http = "h11"\nloop = "asyncio"\n'
        ledgers = {"sqlite-normal": (str(tmp / "normal.db"), "NORMAL", ""),
                   "sqlite-normal-h11": (str(tmp / "normal-h11.db"), "NORMAL", pure),
                   "sqlite-full": (str(tmp / "full.db"), "FULL", ""), "redis": (redis.url, "FULL", "")}  # fmt: skip
        for name in args.ledgers.split(","):
            url, sync, server = ledgers[name]
            port = free_port()
            config = tmp / f"gateway-{name}.toml"
            keys = redis.url if name == "redis" else str(tmp / f"keys-{name}.db")
            _gateway_config(config, up_port=up_port, ledger=url, keys=keys, namespace=f"lat{name.replace('-', '')}",
                            lease_s=900, workers=args.workers, synchronous=sync, server=server)  # fmt: skip
            plain, _ = create_key(load_config(config, env={}), name="bench", limit="1000000")
            cap_plain, _ = create_key(load_config(config, env={}), name="cap", limit="0.05")  # 5 requests' worth
            gateway = _serve(config, port, tmp / f"gateway-{name}.log")
            procs.append(gateway)
            _wait_http(f"http://127.0.0.1:{port}/readyz", gateway, "litm serve")
            target = (f"http://127.0.0.1:{port}/v1/chat/completions", {"authorization": f"Bearer {plain}"})
            results[name] = _measure(args, {"direct": direct, "litm": target}, body)
            results[name]["rss_kib"] = _rss_kib(gateway.pid)
            results[name]["cap"] = _peer_cap("litm", target[0], {"authorization": f"Bearer {cap_plain}"}, up_port)
            _stop(gateway)
        if args.profile:
            results["profile"] = _profile(args, tmp, up_port, body)
        for peer in [p for p in args.peers.split(",") if p]:
            try:
                results[peer] = _peer(peer, args, tmp, up_port, body, direct, redis.url)
            except SystemExit as exc:  # a peer that does not start is reported, not the end of the run
                results[peer] = {"skipped": str(exc)}
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    return {"mode": "latency", "machine": _machine(),
            "settings": {k: v for k, v in vars(args).items() if k not in ("out", "stand_in", "chains")},
            "results": results}  # fmt: skip


def _measure(args: argparse.Namespace, targets: dict[str, tuple[str, dict[str, str]]],
             body: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    seq = {name: _summary(v) for name, v in _sequential(targets, body, args.requests).items()}
    conc: dict[str, Any] = {}
    for name, (url, headers) in targets.items():
        wall, times, statuses = asyncio.run(_timed(url, headers, body, args.requests, args.concurrency))
        conc[name] = {**_summary(times), "rps": round(len(statuses) / wall, 1),
                      "non_200": sum(1 for s in statuses if s != 200),
                      "connection_errors": statuses.count(0)}  # fmt: skip
    gw = next(n for n in targets if n != "direct")
    added = {
        "sequential": {q: round(seq[gw][f"{q}_ms"] - seq["direct"][f"{q}_ms"], 3) for q in ("p50", "p99")},
        f"at_{args.concurrency}": {q: round(conc[gw][f"{q}_ms"] - conc["direct"][f"{q}_ms"], 3)
                                   for q in ("p50", "p99")},
    }  # fmt: skip
    return {"sequential": seq, "concurrent": conc, "added_ms": added}


def _profile(args: argparse.Namespace, tmp: Path, up_port: int, body: dict[str, Any]) -> dict[str, Any]:
    """cProfile of one gateway worker in this process (SQLite NORMAL) under ``--concurrency`` clients."""
    import uvicorn

    from litm.serve import create_app, create_key, load_config

    config = tmp / "gateway-profile.toml"
    _gateway_config(config, up_port=up_port, ledger=str(tmp / "profile.db"), keys=str(tmp / "keys-profile.db"),
                    namespace="profile", lease_s=900, workers=1, synchronous="NORMAL")  # fmt: skip
    cfg = load_config(config, env={})
    plain, _ = create_key(cfg, name="bench", limit="1000000")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(cfg), host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False, backlog=4096))  # fmt: skip
    profiler = cProfile.Profile()

    def serve() -> None:
        profiler.enable()
        try:
            server.run()
        finally:
            profiler.disable()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    _wait_http(f"http://127.0.0.1:{port}/readyz", None, "in-process gateway")
    # The clients run in another process: in this one they would be profiled too.
    client = subprocess.run([sys.executable, __file__, "--load-only", f"http://127.0.0.1:{port}/v1/chat/completions",
                             "--key", plain, "--requests", str(args.requests), "--concurrency", str(args.concurrency)],
                            capture_output=True, text=True, check=True)  # fmt: skip
    server.should_exit = True
    thread.join(timeout=30)
    out = tmp / "profile.txt"
    with out.open("w") as f:
        pstats.Stats(profiler, stream=f).sort_stats("cumulative").print_stats(60)
    if args.out:
        shutil.copy(out, Path(args.out) / "profile.txt")
    return {"client": json.loads(client.stdout), "top": pstats_top(profiler, 25),
            "worker_steps_median_us": _steps(tmp)}  # fmt: skip


def _steps(tmp: Path, n: int = 300) -> dict[str, Any]:
    """Median microseconds of each step of the admission path per request, timed one by one outside the server
    (SQLite NORMAL, the latency body): the profile's totals say how much, these say which step."""
    from litm.budget._guard import Call
    from litm.serve import config_from_mapping, create_key
    from litm.serve._admit import _gate_and_reserve, _route
    from litm.serve._app import _settle
    from litm.serve._runtime import build_runtime

    cfg = config_from_mapping({
        "ledger": {"url": str(tmp / "steps.db"), "synchronous": "NORMAL"}, "keys": {"store": str(tmp / "steps-k.db")},
        "upstreams": {"local": {"kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}},
        "models": {"bench-model": {"upstream": "local", "max_input_tokens": 8000,
                                   "price": {"input": "0.15", "output": "0.60"}}},
    }, env={})  # fmt: skip
    plain, _ = create_key(cfg, name="steps", limit="1000000")
    rt = build_runtime(cfg)
    raw = json.dumps({"model": "bench-model", "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]})
    answer = {"usage": {"prompt_tokens": 1000, "completion_tokens": 16, "total_tokens": 1016}}
    gate = rt.gates.get(("bench-model", "raise"))
    times: dict[str, list[float]] = {"authenticate": [], "parse JSON": [], "count": [], "count + reserve": [],
                                     "settle + read what is left": []}  # fmt: skip
    try:
        for i in range(n + 20):
            t0 = time.perf_counter()
            key = rt.keys.authenticate(plain)
            t1 = time.perf_counter()
            body = json.loads(raw)
            t2 = time.perf_counter()
            assert key is not None
            route, upstream = _route(rt, "openai-chat", key, body)
            adm = _gate_and_reserve(rt, "openai-chat", key, route, upstream, body, f"steps-{i}")
            t3 = time.perf_counter()
            _settle(rt, adm, answer)
            t4 = time.perf_counter()
            gate = gate or rt.gates[("bench-model", "raise")]
            gate.before(Call("openai-chat", "", body))
            t5 = time.perf_counter()
            if i >= 20:
                for name, dt in zip(times, (t1 - t0, t2 - t1, t5 - t4, t3 - t2, t4 - t3), strict=True):
                    times[name].append(dt * 1e6)
    finally:
        rt.close()
    return {name: round(statistics.median(v), 1) for name, v in times.items()}


def pstats_top(profiler: cProfile.Profile, n: int) -> list[dict[str, Any]]:
    """The ``n`` functions with the most time of their own (tottime), as rows."""
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:n]
    return [{"function": f"{Path(k[0]).name}:{k[1]}({k[2]})", "calls": v[1], "tottime_s": round(v[2], 4),
             "cumtime_s": round(v[3], 4)} for k, v in rows]  # fmt: skip


def load_only(url: str, key: str, n: int, conc: int) -> None:
    body = {"model": "bench-model", "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]}
    wall, times, statuses = asyncio.run(_timed(url, {"authorization": f"Bearer {key}"}, body, n, conc))
    print(json.dumps({**_summary(times), "rps": round(len(statuses) / wall, 1),
                      "non_200": sum(1 for s in statuses if s != 200)}))  # fmt: skip


# -- peers --------------------------------------------------------------------------------------------------


def _peer(name: str, args: argparse.Namespace, tmp: Path, up_port: int, body: dict[str, Any],
          direct: tuple[str, dict[str, str]], redis_url: str) -> dict[str, Any]:  # fmt: skip
    """LiteLLM proxy or TensorZero's gateway on the same stand-in and load, and their own limit's count at the
    stand-in."""
    python = args.peers_python
    if not python or not Path(python).exists():
        return {"skipped": f"no Python with {name} (--peers-python)"}
    log = (tmp / f"{name}.log").open("wb")
    if name == "litellm":
        port, master = free_port(), "sk-bench-" + os.urandom(16).hex()
        config = tmp / "litellm.yaml"
        up = f"http://127.0.0.1:{up_port}/v1"
        config.write_text(
            "model_list:\n"
            "  - model_name: bench-model\n"
            f"    litellm_params: {{model: openai/bench-model, api_base: '{up}', api_key: x}}\n"
            "  - model_name: cap-model\n"
            f"    litellm_params: {{model: openai/cap-model, api_base: '{up}', api_key: x, max_budget: 0.05,\n"
            "                     budget_duration: 1d, input_cost_per_token: 0, output_cost_per_token: 0.001}\n",
            encoding="utf-8",
        )  # fmt: skip
        # One worker: with --num_workers 2 its worker processes die at start here, without a word in its log.
        cmd = [str(Path(python).parent / "litellm"), "--config", str(config), "--port", str(port),
               "--num_workers", "1"]  # fmt: skip
        env = {"LITELLM_MASTER_KEY": master, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
        base, headers = f"http://127.0.0.1:{port}", {"authorization": f"Bearer {master}"}
        ready, url, model = base + "/health/liveliness", base + "/v1/chat/completions", "bench-model"
    elif name == "tensorzero":
        started = _tz_start(python, tmp, "tensorzero", _tz_model("bench-model", up_port), log)
        if isinstance(started, str):
            return {"skipped": started}
        proc, base = started
        headers, ready = {}, ""  # it wrote its URL once it was serving (it has no health route to ask)
        url, model = base + "/openai/v1/chat/completions", "tensorzero::model_name::bench-model"
    else:
        return {"skipped": f"unknown peer {name!r}"}
    try:
        if ready:
            _wait_http(ready, proc, name, timeout_s=180)
        result = _measure(args, {"direct": direct, name: (url, headers)}, {**body, "model": model})
        result["rss_kib"] = _rss_kib(proc.pid)
        result["workers"] = 1
        if name != "tensorzero":
            result["cap"] = _peer_cap(name, url, headers, up_port)
    finally:
        _stop(proc)
    if name == "tensorzero":  # its limit lives in a second instance, on Redis (the latency run has none)
        capped = _tz_start(
            python, tmp, "tensorzero-cap", _tz_model("cap-model", up_port) + _TZ_CAP_RULE, log, redis_url
        )
        if isinstance(capped, str):
            result["cap"] = {"skipped": capped}
            return result
        try:
            cap_url = capped[1] + "/openai/v1/chat/completions"
            result["cap"] = _peer_cap(name, cap_url, {}, up_port, model="tensorzero::model_name::cap-model")
        finally:
            _stop(capped[0])
    return result


def _tz_start(python: str, tmp: Path, name: str, config_text: str, log: Any, redis_url: str = ""
              ) -> tuple[subprocess.Popen[bytes], str] | str:  # fmt: skip
    """TensorZero's gateway in a process of its own: (process, base URL), or why it did not start."""
    config = tmp / f"{name}.toml"
    config.write_text(config_text, encoding="utf-8")
    where = tmp / f"{name}.url"  # it picks its own port and says which here
    argv = [python, "-c", _TZ_SCRIPT, str(config), str(where)] + ([redis_url] if redis_url else [])
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not where.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not where.exists():
        _stop(proc)
        return f"{name} did not start (see {tmp / 'tensorzero.log'})"
    return proc, where.read_text().strip().removesuffix("/openai/v1")


# TensorZero's gateway over HTTP, started from its Python package (the embedded Rust gateway); no ClickHouse or
# Postgres (observability off), so no API keys and no budgets: token limits need its Valkey/Redis rate limiter.
def _tz_model(name: str, up_port: int) -> str:
    """A TensorZero model routed to the stand-in under the same name."""
    return (
        f'[models.{name}]\nrouting = ["standin"]\n\n[models.{name}.providers.standin]\ntype = "openai"\n'
        f'api_base = "http://127.0.0.1:{up_port}/v1"\nmodel_name = "{name}"\napi_key_location = "none"\n'
    )


# The cap test: its token rate limit on Redis (TensorZero's Valkey backend; redis-server serves it), set to 5
# requests' worth: the stand-in reports 10 input + 10 output tokens for each cap-model request.
_TZ_CAP_RULE = "\n[[rate_limiting.rules]]\ntokens_per_day = 100\nalways = true\n"
_TZ_SCRIPT = """
import os, sys, time
from tensorzero.tensorzero import _start_http_gateway
gateway = _start_http_gateway(config_file=sys.argv[1], clickhouse_url=None, postgres_url=None,
                              valkey_url=sys.argv[3] if len(sys.argv) > 3 else None, async_setup=False)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(gateway.base_url)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    time.sleep(3600)
"""


def _peer_cap(name: str, url: str, headers: dict[str, str], up_port: int, model: str = "cap-model"
              ) -> dict[str, Any]:  # fmt: skip
    """50 concurrent requests on a limit for 5 (litm: a key's dollars; LiteLLM: the deployment's dollar budget;
    TensorZero: a token rate limit on Redis, 100 tokens, 20 a request): how many reached the stand-in."""
    import httpx

    before = httpx.get(f"http://127.0.0.1:{up_port}/stats").json()["by_model"].get("cap-model", 0)
    body = {"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    _, _, statuses = asyncio.run(_timed(url, headers, body, 50, 50))
    after = httpx.get(f"http://127.0.0.1:{up_port}/stats").json()["by_model"].get("cap-model", 0)
    return {"allowed": 5, "reached_upstream": after - before, "over_budget_upstream": max(0, after - before - 5),
            "answers": {str(s): statuses.count(s) for s in sorted(set(statuses))}}  # fmt: skip


# -- output -------------------------------------------------------------------------------------------------


def _machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "loadavg_at_end": [round(x, 2) for x in load] if load else None}  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    """A short human summary of ``result``."""
    lines = [f"# Gateway benchmark ({result['mode']})", "", f"Settings: `{json.dumps(result['settings'])}`",
             f"Machine: `{json.dumps(result['machine'])}`", ""]  # fmt: skip
    if result["mode"] == "faults":
        lines += ["| check | passed |", "| --- | --- |"]
        lines += [f"| {name} | {'yes' if ok else '**NO**'} |" for name, ok in result["checks"].items()]
        lines += ["", f"{result['requests']} requests in {result['wall_s']} s; the stand-in received "
                  f"{result['upstream']['received']}, over budget {result['upstream']['over_budget']}.", "",
                  "| answer | requests |", "| --- | --- |"]  # fmt: skip
        lines += [f"| {label} | {n} |" for label, n in result["answers"].items()]
        lines += ["", "| scope | limit | settled | held at end | worst settled + held - limit | upstream bill |",
                  "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        lines += [f"| {scope} | {s['limit']} | {s['settled']} | {s['held']} | "
                  f"{s['worst_settled_plus_held_minus_limit']} | {s['upstream_bill']} |"
                  for scope, s in result["scopes"].items()]  # fmt: skip
        lines += ["", f"Faults: `{json.dumps(result['faults'])}`; answered 200 after each fault: "
                  f"`{json.dumps(result['served_after_fault'])}`"]  # fmt: skip
    else:
        lines += ["| gateway | added p50 (seq) | added p99 (seq) | added p50 (conc) | added p99 (conc) | req/s "
                  "(conc) | direct req/s | RSS MiB | over the limit at upstream (50 on a limit for 5) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for name, r in result["results"].items():
            if name == "profile":
                continue
            if "added_ms" not in r:
                lines.append(f"| {name} | {r.get('skipped', '')} | | | | | | | |")
                continue
            cap = r.get("cap", {})
            over = cap.get("over_budget_upstream", cap.get("skipped", ""))
            (seq, conc), gw = r["added_ms"].values(), next(k for k in r["concurrent"] if k != "direct")
            lines.append(f"| {name} | {seq['p50']} | {seq['p99']} | {conc['p50']} | {conc['p99']} | "
                         f"{r['concurrent'][gw]['rps']} | {r['concurrent']['direct']['rps']} | "
                         f"{r.get('rss_kib', 0) / 1024:.0f} | {over} |")  # fmt: skip
        if "profile" in result["results"]:
            steps = result["results"]["profile"]["worker_steps_median_us"]
            lines += ["", "Steps of the admission path per request, timed one by one outside the server (median "
                      "microseconds, SQLite NORMAL, which the gateway runs on the event loop): "
                      + ", ".join(f"{k} {v}" for k, v in steps.items())]  # fmt: skip
            lines += ["", "Profile of the event loop's thread (one in-process worker, SQLite NORMAL; most time of "
                      "their own):", "",
                      "| function | calls | own s | cumulative s |", "| --- | --- | --- | --- |"]  # fmt: skip
            lines += [f"| `{row['function']}` | {row['calls']} | {row['tottime_s']} | {row['cumtime_s']} |"
                      for row in result["results"]["profile"]["top"]]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mode", choices=("faults", "latency"), default="faults")
    parser.add_argument("--requests", type=int, default=0, help="default: 20000 (faults), 2000 (latency)")
    parser.add_argument("--clients", type=int, default=200, help="faults: concurrent clients")
    parser.add_argument("--concurrency", type=int, default=100, help="latency: concurrent clients")
    parser.add_argument("--instances", type=int, default=2, help="faults: litm serve instances")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lease-s", type=float, default=10.0, help="faults: the ledger's lease")
    parser.add_argument("--redis-down-s", type=float, default=1.0, help="faults: how long Redis stays down")
    parser.add_argument("--ledgers", default="sqlite-normal,sqlite-normal-h11,sqlite-full,redis",
                        help="latency: which ledgers (and sqlite-normal-h11: on h11 and asyncio)")  # fmt: skip
    parser.add_argument("--upstream-latency-ms", type=float, default=0.0)
    parser.add_argument("--profile", action="store_true", help="latency: cProfile one in-process gateway")
    parser.add_argument("--peers", default="", help="latency: litellm,tensorzero")
    parser.add_argument("--peers-python", default="/tmp/peers-venv/bin/python", help="Python with the peers")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default="", help="folder for results.json and results.md")
    parser.add_argument("--stand-in", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--chains", default="", help=argparse.SUPPRESS)
    parser.add_argument("--load-only", default="", help=argparse.SUPPRESS)
    parser.add_argument("--key", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stand_in:
        stand_in(args.stand_in, args.upstream_latency_ms, args.chains)
        return
    if args.load_only:
        load_only(args.load_only, args.key, args.requests, args.concurrency)
        return
    args.requests = args.requests or (20000 if args.mode == "faults" else 2000)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    result = run_faults(args) if args.mode == "faults" else run_latency(args)
    text = json.dumps(result, indent=2)
    print(markdown(result))
    if args.out:
        (Path(args.out) / "results.json").write_text(text + "\n", encoding="utf-8")
        (Path(args.out) / "results.md").write_text(markdown(result), encoding="utf-8")
    if result["mode"] == "faults" and not result["ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
