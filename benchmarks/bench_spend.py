"""Spend-cap benchmark: reserve+settle throughput and overspend, litm's SQLite and Redis ledgers side by side
with baar-core's SQLite store running the same concurrent scenario.

The scenario, for every store: worker processes each make calls with a 1,000-token prompt and
``max_tokens=1000``; the "provider" returns a seeded random number of output tokens (``uniform``: any
length up to 1000; ``long``: 800 to 1000, as code or reports do) and bills them at gpt-4o-mini's rates.
Each call is: reserve the worst case, then settle the real cost. Phases:

* throughput: a limit that never binds; calls (reserve+settle pairs) and operations (a reserve or a
  settle) per second of wall time, all workers together, from a common start barrier to the end of the
  final checkpoint of a SQLite store's WAL (from commit b085dc2 on; earlier runs stopped the clock when
  the last worker finished);
* overspend: a limit of $0.50 that binds after about a thousand calls. Overspend is measured against the
  provider's bill (what the admitted calls cost), not against what a store believes it recorded, and
  ``overspend_calls`` counts calls that finished with the bill already past the limit. A third run uses a
  model no price table knows (a fine-tune billed like gpt-4o-mini).

baar-core's flow is the one its router runs (``estimate_cost`` with its default 500 expected output
tokens, ``check_and_reserve``, the call, ``record_manual``, ``cancel_reservation``) on its
``SQLiteBudgetStore``, in a separate interpreter that has baar-core installed (``--baar-python``).

With ``--rounds N`` the throughput phase runs N times, every store once a round (load that comes and goes
then lands on all of them alike), and ``results.md`` shows each column's median round and the range of
ops/s; the overspend phases run once. Run it alone on the machine (other load skews the numbers)::

    python -m venv /tmp/baar && /tmp/baar/bin/pip install baar-core
    PYTHONPATH=src .venv/bin/python benchmarks/bench_spend.py --baar-python /tmp/baar/bin/python \\
        --out docs/results/bench-spend
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROMPT, MAX_TOKENS = 1000, 1000
BINDING_LIMIT_USD = "0.50"
HUGE_LIMIT_USD = "1000000"
# gpt-4o-mini at $0.15 / $0.60 per MTok, in micro-dollars per token (baar prices with litellm's table)
IN_RATE, OUT_RATE = 0.15, 0.60


# Output lengths the "provider" returns: any length up to max_tokens, or long answers (code, reports)
# that run close to it. Both are ordinary under max_tokens=1000.
OUTPUTS = {"uniform": (0, MAX_TOKENS), "long": (800, MAX_TOKENS)}


def actual_output(rng: random.Random, dist: str) -> int:
    low, high = OUTPUTS[dist]
    return rng.randint(low, high)


# A fine-tune no price table knows; its provider bills it at gpt-4o-mini's rates.
UNKNOWN_MODEL = "acme-support-ft-7"


def bill(out_tokens: int) -> int:
    """What the provider bills one call, exactly, in pico-dollars (gpt-4o-mini's $0.15 / $0.60 per MTok):
    the truth that overspend is measured against, whatever a store believes it recorded."""
    return PROMPT * 150_000 + out_tokens * 600_000


# -- litm workers ---------------------------------------------------------------------------------------


def litm_worker(spec: dict[str, Any], index: int, calls: int, barrier: Any, out: Any) -> None:
    from litm.errors import PriceUnknownError, SpendBudgetExceeded
    from litm.spend import RedisLedger, SpendCap, SQLiteLedger

    if spec["store"] == "sqlite":
        ledger: Any = SQLiteLedger(spec["path"], synchronous=spec["synchronous"])
    else:
        ledger = RedisLedger(spec["url"], namespace=spec["namespace"])
    cap = SpendCap(ledger, scopes=["project:bench", f"worker:{index % 4}"])
    rng = random.Random(index)

    def call(j: int) -> int | None:
        try:
            r = cap.reserve(spec["model"], provider="openai", input_tokens=PROMPT, input_exact=True,
                            max_tokens=MAX_TOKENS, key=f"{spec['run']}-{index}-{j}")  # fmt: skip
        except (SpendBudgetExceeded, PriceUnknownError):
            return None
        out_tokens = actual_output(rng, spec["dist"])
        r.settle({"prompt_tokens": PROMPT, "completion_tokens": out_tokens})
        return bill(out_tokens)

    _drive(call, calls, barrier, out)


def _drive(call: Any, calls: int, barrier: Any, out: Any) -> None:
    """Run ``call(j)`` (the billed cost, or None when refused) ``calls`` times after the barrier; report."""
    done = refused = 0
    settles: list[tuple[float, int]] = []
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for j in range(calls):
        cost = call(j)
        if cost is None:
            refused += 1
            continue
        settles.append((time.time(), cost))
        done += 1
    out.put({"start": start, "end": time.perf_counter(), "cpu_s": time.process_time() - cpu, "done": done,
             "refused": refused, "settles": settles})  # fmt: skip


def _server_cpu(server: Any) -> float:
    """The Redis server's CPU seconds so far (user + system): its whole cost per operation, I/O included."""
    info = server.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def run_litm(spec: dict[str, Any], procs: int, calls: int, limit_usd: str) -> dict[str, Any]:
    from litm.spend import RedisLedger, SpendCap, SQLiteLedger, parse_usd

    spec = {**spec, "run": f"r{time.time_ns()}"}
    if spec["store"] == "sqlite":
        spec["path"] = os.path.join(tempfile.mkdtemp(prefix="bench-spend-"), "spend.db")
        setup: Any = SQLiteLedger(spec["path"])
    else:
        spec["namespace"] = spec["run"]
        setup = RedisLedger(spec["url"], namespace=spec["namespace"])
    cap = SpendCap(setup)
    cap.set_limit("project:bench", limit_usd)
    for w in range(4):
        cap.set_limit(f"worker:{w}", HUGE_LIMIT_USD)
    server = None
    if spec["store"] == "redis":
        import redis

        server = redis.Redis.from_url(spec["url"])
        server.config_resetstat()
        cpu_before = _server_cpu(server)
    result = _run_processes(litm_worker, spec, procs, calls, spec.get("path"))
    if server is not None:
        # Server time per script (reserve and settle alike): the ceiling with clients on other machines.
        per_call = server.info("commandstats").get("cmdstat_evalsha", {}).get("usec_per_call", 0.0)
        result["server_us_per_script"] = per_call
        result["server_ceiling_ops_per_s"] = round(1e6 / per_call) if per_call else None
        ops = 2 * result["calls"] + result["refused"]
        result["server_cpu_us_per_op"] = round(1e6 * (_server_cpu(server) - cpu_before) / ops, 1)
    result["final_settled_usd"] = sum(c.settled for c in setup.status(["project:bench"])) / 1e6
    result["limit_usd"] = parse_usd(limit_usd) / 1e6
    result["ledger_consistent"] = setup.verify() == []
    if spec["store"] == "redis":
        setup.drop()
    else:
        shutil.rmtree(os.path.dirname(spec["path"]), ignore_errors=True)
    return result


# -- baar-core worker (runs in the baar interpreter: stdlib and baar only) ------------------------------------


def baar_worker(spec: dict[str, Any], index: int, calls: int, barrier: Any, out: Any) -> None:
    import warnings

    from baar.core.budget import BudgetExceeded, BudgetTracker
    from baar.core.stores import SQLiteBudgetStore

    warnings.simplefilter("ignore")
    tracker = BudgetTracker(total_budget=float(spec["limit_usd"]), store=SQLiteBudgetStore(spec["path"]))
    rng = random.Random(index)

    def call(j: int) -> int | None:
        reserved = tracker.estimate_cost(spec["model"], PROMPT, 500)  # baar's default expected output
        try:
            tracker.check_and_reserve(reserved)
        except BudgetExceeded:
            return None
        out_tokens = actual_output(rng, spec["dist"])
        tracker.record_manual(spec["model"], PROMPT, out_tokens)
        tracker.cancel_reservation(reserved)
        return bill(out_tokens)

    _drive(call, calls, barrier, out)


def run_baar(procs: int, calls: int, limit_usd: str, dist: str, model: str) -> dict[str, Any]:
    from baar.core.stores import SQLiteBudgetStore

    path = os.path.join(tempfile.mkdtemp(prefix="bench-baar-"), "baar.db")
    spec = {"path": path, "limit_usd": limit_usd, "dist": dist, "model": model}
    result = _run_processes(baar_worker, spec, procs, calls, path)
    result["final_settled_usd"] = SQLiteBudgetStore(path).get_spent()
    result["limit_usd"] = float(limit_usd)
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    return result


# -- shared driver ----------------------------------------------------------------------------------------


def final_checkpoint(path: str) -> float:
    """Copy the WAL pages a run left back into the SQLite file (as its last connection would on closing);
    return the seconds it took. Counted in the run's wall time: a store checkpoints every few MiB of WAL,
    so leaving the last, partial interval out would flatter short runs."""
    import sqlite3

    t0 = time.perf_counter()
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return time.perf_counter() - t0


def _run_processes(
    target: Any, spec: dict[str, Any], procs: int, calls: int, sqlite_path: str | None = None
) -> dict[str, Any]:
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=target, args=(spec, i, calls, barrier, out)) for i in range(procs)]
    for w in workers:
        w.start()
    reports = [out.get(timeout=600) for _ in workers]
    for w in workers:
        w.join()
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    if sqlite_path is not None:
        wall += final_checkpoint(sqlite_path)
    done = sum(r["done"] for r in reports)
    refused = sum(r["refused"] for r in reports)
    settles = sorted(s for r in reports for s in r["settles"])
    ops = 2 * done + refused
    # CPU per operation, summed over the workers: unlike ops/s it hardly depends on what else the machine
    # runs, and (cores / CPU per operation) bounds the rate an idle machine of this size could reach.
    cpu = sum(r["cpu_s"] for r in reports)
    return {"procs": procs, "calls": done, "refused": refused, "wall_s": round(wall, 3),
            "calls_per_s": round(done / wall), "ops_per_s": round(ops / wall),
            "client_cpu_us_per_op": round(1e6 * cpu / ops, 1) if ops else None, "settles": settles}  # fmt: skip


def overspend(result: dict[str, Any]) -> dict[str, Any]:
    """Overspend against the provider's exact bill (pico-dollars), in the order the calls finished."""
    limit = round(result["limit_usd"] * 1e6) * 1_000_000
    total, over = 0, 0
    for _, cost in result.pop("settles"):
        total += cost
        over += total > limit
    result["billed_usd"] = total / 1e12
    result["overspend_usd"] = max(0, total - limit) / 1e12
    result["overspend_calls"] = over
    return result


def _start_redis() -> tuple[subprocess.Popen[bytes], str, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found (scripts/ensure-redis.sh installs it)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="bench-redis-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir], stdout=subprocess.DEVNULL)  # fmt: skip
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"redis://127.0.0.1:{port}/0", workdir
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def summary(results: dict[str, Any]) -> str:
    """The runs as two Markdown tables (throughput, then overspend)."""
    cores = os.cpu_count() or 1
    lines = ["| store | processes | calls/s | ops/s (range of rounds) | calls | wall s | client CPU µs/op | "
             f"Redis server µs/script (ceiling ops/s) | server CPU µs/op | ops/s bound of {cores} idle cores |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in results["runs"]:
        if r["phase"] == "throughput":
            groups.setdefault((r["store"], r["procs"]), []).append(r)
    for (store, procs), runs in groups.items():
        # With several rounds: the median round of each column, and the range of ops/s.
        def med(key: str, runs: list[dict[str, Any]] = runs) -> Any:
            values = [r[key] for r in runs if r.get(key) is not None]
            return statistics.median(values) if values else None

        ops = med("ops_per_s")
        spread = f" ({min(r['ops_per_s'] for r in runs)}-{max(r['ops_per_s'] for r in runs)})" if len(runs) > 1 else ""
        server = ""
        if med("server_us_per_script") is not None:
            server = f"{med('server_us_per_script'):g} ({round(med('server_ceiling_ops_per_s'))})"
        client = med("client_cpu_us_per_op") or 0
        server_cpu = med("server_cpu_us_per_op") or 0
        bound = round(cores * 1e6 / (client + server_cpu)) if client else ""
        lines.append(f"| {store} | {procs} | {round(med('calls_per_s'))} | {round(ops)}{spread} | {runs[0]['calls']} | "
                     f"{med('wall_s'):g} | {client:g} | {server} | {server_cpu or ''} | {bound} |")  # fmt: skip
    lines += ["", "| store | model | outputs | processes | admitted | refused | store says spent $ | billed $ | "
              "limit $ | overspend $ | calls past the limit |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for r in results["runs"]:
        if r["phase"] == "overspend":
            lines.append(f"| {r['store']} | {r['model']} | {r['outputs']} | {r['procs']} | {r['calls']} | "
                         f"{r['refused']} | {r['final_settled_usd']:.6f} | {r['billed_usd']:.6f} | "
                         f"{r['limit_usd']:.2f} | {r['overspend_usd']:.6f} | {r['overspend_calls']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="litm spend-cap benchmark")
    parser.add_argument("--calls", type=int, default=8000, help="calls per throughput run, split over the workers")
    parser.add_argument("--rounds", type=int, default=1, help="throughput rounds (every store once a round)")
    parser.add_argument("--baar-python", default="/tmp/baar/bin/python", help="an interpreter with baar-core")
    parser.add_argument("--out", type=Path, default=None, help="folder for results.json")
    parser.add_argument("--baar-run", default=None, help=argparse.SUPPRESS)  # internal: JSON args for a baar run
    args = parser.parse_args(argv)
    if args.baar_run:  # inside the baar interpreter
        job = json.loads(args.baar_run)
        print(json.dumps(run_baar(job["procs"], job["calls"], job["limit"], job["dist"], job["model"])))
        return 0

    results: dict[str, Any] = {
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_at_start": os.getloadavg(),
        "scenario": {"model": "gpt-4o-mini", "prompt_tokens": PROMPT, "max_tokens": MAX_TOKENS,
                     "binding_limit_usd": BINDING_LIMIT_USD, "outputs": OUTPUTS},
        "runs": [],
    }  # fmt: skip
    mini = "gpt-4o-mini"
    throughput = ("throughput", 0, HUGE_LIMIT_USD, "uniform", mini)
    overspends = [("overspend", 500, BINDING_LIMIT_USD, "uniform", mini),
                  ("overspend", 500, BINDING_LIMIT_USD, "long", mini),
                  ("overspend", 500, BINDING_LIMIT_USD, "uniform", UNKNOWN_MODEL)]  # fmt: skip

    def record(name: str, res: dict[str, Any], phase: str, dist: str, model: str, rnd: int = 0) -> None:
        res = overspend(res)
        res.update(store=name, phase=phase, outputs=dist, model=model, round=rnd)
        results["runs"].append(res)
        print(json.dumps(res), flush=True)

    baar = Path(args.baar_python)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": ""}
    if not baar.exists():
        results["baar_core"] = f"not run: no interpreter at {baar} (python -m venv /tmp/baar && pip install baar-core)"
    else:
        version = subprocess.run([str(baar), "-c", "import importlib.metadata as m; print(m.version('baar-core'))"],
                                 capture_output=True, text=True, env=env).stdout.strip()  # fmt: skip
        results["baar_core"] = f"baar-core {version}, SQLiteBudgetStore"

    def run_baar_job(procs: int, phase: tuple[str, int, str, str, str], rnd: int) -> bool:
        name, calls, limit, dist, model = phase
        job = json.dumps({"procs": procs, "calls": calls or args.calls // procs, "limit": limit, "dist": dist,
                          "model": model})  # fmt: skip
        got = subprocess.run([str(baar), __file__, "--baar-run", job], capture_output=True, text=True,
                             env=env, timeout=1200)  # fmt: skip
        if got.returncode != 0:
            results["baar_core"] += f"; run failed: {got.stderr.strip()[-500:]}"
            return False
        record("baar-core-sqlite", json.loads(got.stdout.strip().splitlines()[-1]), name, dist, model, rnd)
        return True

    def run_config(store: str, procs: int, phase: tuple[str, int, str, str, str], url: str, rnd: int = 0) -> bool:
        name, calls, limit, dist, model = phase
        if store == "baar-core-sqlite":
            return run_baar_job(procs, phase, rnd)
        if store == "litm-redis":
            spec: dict[str, Any] = {"store": "redis", "url": url, "dist": dist, "model": model}
        else:
            spec = {"store": "sqlite", "synchronous": store.rsplit("-", 1)[1], "dist": dist, "model": model}
        record(store, run_litm(spec, procs, calls or args.calls // procs, limit), name, dist, model, rnd)
        return True

    configs = [(f"litm-sqlite-{sync}", procs) for sync in ("FULL", "NORMAL") for procs in (1, 4, 8)]
    configs += [("litm-redis", procs) for procs in (1, 8, 16)]
    if baar.exists():
        configs += [("baar-core-sqlite", procs) for procs in (1, 4, 8)]
    failed: set[str] = set()  # a store whose run failed (baar-core's interpreter) is not run again
    proc, url, workdir = _start_redis()
    try:
        # Throughput in rounds, every store once a round: load that comes and goes on a shared machine then
        # lands on every store alike, and the median of the rounds is the figure.
        for rnd in range(args.rounds):
            for store, procs in configs:
                if store not in failed and not run_config(store, procs, throughput, url, rnd):
                    failed.add(store)
        for store, procs in configs:
            for phase in overspends:
                if store not in failed and not run_config(store, procs, phase, url):
                    failed.add(store)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    results["load_average_at_end"] = os.getloadavg()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
        (args.out / "results.md").write_text(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
