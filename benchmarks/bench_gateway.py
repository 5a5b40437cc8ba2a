"""Gateway benchmark: what ``litm serve`` adds to a call, how many calls a second it passes, its memory, and how many
requests over budget reach the upstream (must be 0).

Parts, all on loopback: a stand-in upstream (this file with ``--stand-in PORT``: uvicorn answering OpenAI Chat
Completions with usage after ``--upstream-latency-ms``, counting what it receives per model), and ``litm serve``
as a child process with ``--workers`` workers on an SQLite ledger (or ``--ledger redis://...``). Phases:

* latency: ``--requests`` sequential non-streaming requests with a ~1k-token prompt, direct to the stand-in and
  through the gateway, interleaved in rounds of 50 (load that comes and goes lands on both alike); the added
  latency is the gateway's percentile minus the direct one;
* throughput: the same requests at ``--concurrency`` concurrent clients, direct and through the gateway;
* cap: 50 concurrent requests on a key whose limit holds exactly 5 worst cases: the stand-in counts how many it
  received (5 may, more is overspend) and the ledger must show settled <= limit;
* memory: the resident set of the gateway's processes (parent and workers) at the end.

LiteLLM proxy and TensorZero side by side, 2 gateway instances sharing Redis, aborted streams, a worker SIGKILLed
and Redis restarted mid-run (issue 42) are not in this version. Run it alone on the machine; for a smoke run::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gateway.py --requests 100 --concurrency 8 --out /tmp/bg
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROMPT = " ".join(["lost in the middle"] * 250)  # about 1,000 tokens


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stand_in(port: int, latency_ms: float) -> None:
    """The upstream double: OpenAI Chat Completions with usage; ``GET /stats`` says what it received."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    received: dict[str, int] = {}

    async def chat(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        model = str(body.get("model"))
        received[model] = received.get(model, 0) + 1
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
        return JSONResponse({"id": "c", "object": "chat.completion", "created": 0, "model": model,
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                          "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 1000, "completion_tokens": out,
                                       "total_tokens": 1000 + out}})  # fmt: skip

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(received)

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/stats", stats)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, backlog=4096)


def _wait(url: str, proc: subprocess.Popen[bytes], what: str) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not start")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and its children, in KiB (Linux /proc)."""
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


async def _concurrent(
    url: str, headers: dict[str, str], body: dict[str, Any], n: int, conc: int
) -> tuple[float, list[int]]:
    import httpx

    statuses: list[int] = []
    sem = asyncio.Semaphore(conc)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=conc)) as client:

        async def one() -> None:
            async with sem:
                statuses.append((await client.post(url, json=body, headers=headers)).status_code)

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started, statuses


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    from litm.serve import create_key, load_config
    from litm.spend import open_ledger

    tmp = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    up_port, gw_port = free_port(), free_port()
    upstream = subprocess.Popen([sys.executable, __file__, "--stand-in", str(up_port),
                                 "--upstream-latency-ms", str(args.upstream_latency_ms)])  # fmt: skip
    procs = [upstream]
    try:
        _wait(f"http://127.0.0.1:{up_port}/stats", upstream, "stand-in")
        config = tmp / "gateway.toml"
        config.write_text(
            f'[server]\nport = {gw_port}\nworkers = {args.workers}\n'
            f'[ledger]\nurl = "{args.ledger or tmp / "spend.db"}"\n'
            f'namespace = "bench{os.getpid()}"\nsynchronous = "{args.synchronous}"\n[keys]\nstore = "keys.db"\n'
            f'[upstreams.local]\nkind = "openai-compatible"\nbase_url = "http://127.0.0.1:{up_port}/v1"\n'
            '[models.bench-model]\nupstream = "local"\nmax_input_tokens = 8000\n'
            'price = { input = "0.15", output = "0.60" }\n'
            '[models.cap-model]\nupstream = "local"\nprice = { input = "0", output = "1000" }\n',
            encoding="utf-8",
        )  # fmt: skip
        cfg = load_config(config, env={})
        plain, _ = create_key(cfg, name="bench", limit="1000000")
        cap_plain, cap_key = create_key(cfg, name="cap", limit="0.05")
        gateway = subprocess.Popen([sys.executable, "-m", "litm", "serve", "--config", str(config)],
                                   stdout=subprocess.DEVNULL, stderr=(tmp / "gateway.log").open("wb"))  # fmt: skip
        procs.append(gateway)
        _wait(f"http://127.0.0.1:{gw_port}/readyz", gateway, "litm serve")
        body = {"model": "bench-model", "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]}
        direct_url = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        gw_url = f"http://127.0.0.1:{gw_port}/v1/chat/completions"
        auth = {"authorization": f"Bearer {plain}"}
        lat: dict[str, list[float]] = {"direct": [], "gateway": []}
        with httpx.Client(timeout=60) as client:
            for url, headers in ((direct_url, {}), (gw_url, auth)):  # warm both paths
                for _ in range(5):
                    client.post(url, json=body, headers=headers).raise_for_status()
            done = 0
            while done < args.requests:
                batch = min(50, args.requests - done)
                for name, url, headers in (("direct", direct_url, {}), ("gateway", gw_url, auth)):
                    for _ in range(batch):
                        t0 = time.perf_counter()
                        client.post(url, json=body, headers=headers).raise_for_status()
                        lat[name].append((time.perf_counter() - t0) * 1000)
                done += batch
        seq = {name: {"p50_ms": _pct(v, 0.5), "p99_ms": _pct(v, 0.99), "mean_ms": statistics.fmean(v)}
               for name, v in lat.items()}  # fmt: skip
        added = {q: seq["gateway"][f"{q}_ms"] - seq["direct"][f"{q}_ms"] for q in ("p50", "p99")}
        conc = {}
        for name, url, headers in (("direct", direct_url, {}), ("gateway", gw_url, auth)):
            wall, statuses = asyncio.run(_concurrent(url, headers, body, args.requests, args.concurrency))
            conc[name] = {"rps": len(statuses) / wall, "non_200": sum(1 for s in statuses if s != 200)}
        cap_body = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        _, cap_statuses = asyncio.run(_concurrent(gw_url, {"authorization": f"Bearer {cap_plain}"}, cap_body, 50, 50))
        received = httpx.get(f"http://127.0.0.1:{up_port}/stats").json().get("cap-model", 0)
        ledger = open_ledger(cfg.ledger.url, namespace=cfg.ledger.namespace)
        row = ledger.status([cap_key.scope])[0]
        ledger.close()
        memory = _rss_kib(gateway.pid)
        return {
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
            "settings": {k: v for k, v in vars(args).items() if k != "out"},
            "sequential": seq, "added_ms": added, "concurrent": conc,
            "cap": {"allowed": 5, "reached_upstream": received, "over_budget_upstream": max(0, received - 5),
                    "answers": {str(s): cap_statuses.count(s) for s in sorted(set(cap_statuses))},
                    "limit_micros": row.limit, "settled_micros": row.settled, "held_micros": row.held},
            "gateway_rss_kib": memory,
        }  # fmt: skip
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ledger", default="", help="redis://... (default: an SQLite file)")
    parser.add_argument("--synchronous", default="FULL", help="SQLite ledger: FULL (fsync) or NORMAL")
    parser.add_argument("--upstream-latency-ms", type=float, default=0.0)
    parser.add_argument("--out", default="", help="folder for results.json (default: print only)")
    parser.add_argument("--stand-in", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stand_in:
        stand_in(args.stand_in, args.upstream_latency_ms)
        return
    result = run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "results.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
