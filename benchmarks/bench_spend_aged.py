"""The SQLite ledger when it is no longer new: throughput of a ledger file that already holds many past calls,
against a new, empty file, with 1 KiB pages (what new ledger files use) and SQLite's 4 KiB default, A/B in one run.

``bench_spend.py`` and ``bench_spend_page_size.py`` time an empty file, but a ledger keeps every reservation
(its idempotency key answers a retried call) and every event (the audit log), so a team's ledger only grows:
its b-trees get deeper, and each worker process re-reads them from the OS after any other process writes
(a SQLite page cache does not survive another connection's commit). This benchmark builds, once per page
size, a ledger holding ``--aged`` settled calls through the ledger's own API, then times the throughput
scenario of ``bench_spend.py`` (``synchronous=NORMAL``, a limit that never binds) on a fresh copy of it and
on an empty file, for 1, 4 and 8 processes. Page sizes and ages alternate round after round, so all of them
see the same machine; the figures are medians of the rounds, and the time of the final checkpoint (the WAL
pages a run leaves for SQLite to copy back) is counted in each run's wall time. Run it alone::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_spend_aged.py [--aged 200000] [--calls 8000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_spend  # the sibling script (its folder is on sys.path when run as a script): same scenario
import litm.spend._ledger.sqlite as sqlite_ledger
from litm.spend import SpendCap, SQLiteLedger

PROCESSES = (1, 4, 8)
PAGES = (1024, 4096)


def new_ledger(path: Path, page: int) -> SQLiteLedger:
    """A ledger file with ``page``-byte pages and the benchmark's limits (none of which binds)."""
    sqlite_ledger.PAGE_SIZE = page  # read when a new ledger file is first opened
    ledger = SQLiteLedger(path, synchronous="NORMAL")
    cap = SpendCap(ledger)
    cap.set_limit("project:bench", bench_spend.HUGE_LIMIT_USD)
    for w in range(4):
        cap.set_limit(f"worker:{w}", bench_spend.HUGE_LIMIT_USD)
    return ledger


def age(path: Path, page: int, calls: int) -> dict[str, Any]:
    """Fill a new ledger at ``path`` with ``calls`` settled calls of the benchmark's shape, through the API."""
    ledger = new_ledger(path, page)
    caps = [SpendCap(ledger, scopes=["project:bench", f"worker:{w}"]) for w in range(4)]
    t0 = time.perf_counter()
    for j in range(calls):
        r = caps[j % 4].reserve("gpt-4o-mini", provider="openai", input_tokens=bench_spend.PROMPT, input_exact=True,
                        max_tokens=bench_spend.MAX_TOKENS, key=f"aged-{j}")  # fmt: skip
        r.settle({"prompt_tokens": bench_spend.PROMPT, "completion_tokens": j % bench_spend.MAX_TOKENS})
    assert ledger.verify() == [], "the aged ledger's counters differ from its events"
    ledger.close()
    seconds = time.perf_counter() - t0
    bench_spend.final_checkpoint(str(path))
    return {"page": page, "calls": calls, "seconds": round(seconds, 1), "bytes": path.stat().st_size}


def timed_run(template: Path | None, page: int, procs: int, calls: int) -> float:
    """Ops per second of one throughput run on a copy of ``template`` (an empty file when None)."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-spend-aged-"))
    try:
        path = workdir / "spend.db"
        if template is None:
            new_ledger(path, page).close()
        else:
            shutil.copyfile(template, path)
        spec = {"store": "sqlite", "synchronous": "NORMAL", "dist": "uniform", "model": "gpt-4o-mini",
                "run": f"r{time.time_ns()}", "path": str(path)}  # fmt: skip
        res = bench_spend._run_processes(bench_spend.litm_worker, spec, procs, calls // procs, str(path))
        return (2 * res["calls"] + res["refused"]) / res["wall_s"]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aged", type=int, default=200_000, help="settled calls already in the aged ledger")
    ap.add_argument("--calls", type=int, default=8000, help="calls per timed run, split over the processes")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    store = Path(tempfile.mkdtemp(prefix="bench-spend-templates-"))
    try:
        templates = {}
        for page in PAGES:
            templates[page] = store / f"aged-{page}.db"
            built = age(templates[page], page, args.aged)
            print(f"aged ledger, {page}-byte pages: {built['calls']} calls in {built['seconds']} s, "
                  f"{built['bytes'] / 2**20:.1f} MiB", flush=True)  # fmt: skip
        print("load average at start:", os.getloadavg(), flush=True)
        rates: dict[tuple[str, int, int], list[float]] = {}
        for rnd in range(args.rounds):
            for ledger_age in ("empty", "aged"):
                for page in PAGES:
                    for procs in PROCESSES:
                        template = templates[page] if ledger_age == "aged" else None
                        rate = timed_run(template, page, procs, args.calls)
                        rates.setdefault((ledger_age, page, procs), []).append(rate)
                        print(f"round {rnd}  {ledger_age:5}  page {page}  processes {procs}  {rate:.0f} ops/s",
                              flush=True)  # fmt: skip
        print("load average at end:", os.getloadavg())
        print(f"\nmedians of {args.rounds} rounds, ops/s (reserve or settle), final checkpoint included;"
              f" aged = {args.aged} settled calls already in the file")  # fmt: skip
        print("| processes | empty, 1 KiB | empty, 4 KiB | aged, 1 KiB | aged, 4 KiB | aged 1 KiB / 4 KiB |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for procs in PROCESSES:
            med = {(a, p): statistics.median(rates[(a, p, procs)]) for a in ("empty", "aged") for p in PAGES}
            print(f"| {procs} | {med[('empty', 1024)]:.0f} | {med[('empty', 4096)]:.0f} | {med[('aged', 1024)]:.0f} |"
                  f" {med[('aged', 4096)]:.0f} | {med[('aged', 1024)] / med[('aged', 4096)]:.2f}x |")  # fmt: skip
    finally:
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
