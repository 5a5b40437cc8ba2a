"""Race tests: 8 processes x 500 reservations on one SQLite file and on one real Redis server.

Some workers kill themselves with SIGKILL at a point the test chooses (after a reserve, inside the open
reserve or settle transaction, before a settle), counted in calls, never timed. A monitor thread reads
the counters throughout and checks settled + held <= limit. At the end, after every lease has expired
and been swept, nothing is held, every reservation is accounted for, and total settled <= limit.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from litm.errors import SpendBudgetExceeded
from litm.spend._ledger import HoldRequest, SQLiteLedger

WORKERS = 8
PER_WORKER = 500
# worker -> (point, at which call); the others run to the end. The killed workers each have a scope of
# their own whose limit never binds, so they reach their kill point whatever the others do; the other
# four share "user:pool", whose limit must refuse them (they would settle about 100,000 without it).
KILLS = {1: ("after_reserve", 40), 2: ("reserve_in_txn", 60), 3: ("before_settle", 80), 4: ("settle_in_txn", 100)}
POOL_LIMIT = 50_000
PROJECT_LIMIT = 1_000_000
OWN_LIMIT = 1_000_000
HOOK_POINT = {"sqlite": {"reserve_in_txn": "reserve:in_txn", "settle_in_txn": "settle:in_txn"},
              "redis": {"reserve_in_txn": "reserve:sent", "settle_in_txn": "settle:sent"}}  # fmt: skip


def open_store(store: str, where: str, *, hooks: Any = None, clock: Any = None) -> Any:
    if store == "sqlite":
        return SQLiteLedger(where, hooks=hooks, clock=clock or time.time)
    from litm.spend import RedisLedger

    url, namespace = where.split("#")
    return RedisLedger(url, namespace=namespace, hooks=hooks, clock=clock)


def user_scope(index: int) -> str:
    return f"user:own{index}" if index in KILLS else "user:pool"


def worker(store: str, where: str, index: int, log_dir: str) -> None:
    """One process: reserve, 'call', settle, PER_WORKER times; log every completed step before the next."""
    rng = random.Random(index)
    point, at = KILLS.get(index, ("", -1))
    calls = {"n": 0}

    def kill() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def hook() -> None:
        if calls["n"] == at:
            kill()

    hooks = {HOOK_POINT[store][point]: hook} if point in HOOK_POINT[store] else None
    ledger = open_store(store, where, hooks=hooks)
    with open(os.path.join(log_dir, f"w{index}.log"), "w", buffering=1) as log:
        for j in range(PER_WORKER):
            calls["n"] = j
            key, amount = f"w{index}-{j}", rng.randint(50, 150)
            try:
                ledger.reserve(HoldRequest(key, ("project:race", user_scope(index)), amount, lease_s=120.0))
            except SpendBudgetExceeded:
                log.write(f"refused {key}\n")
                continue
            log.write(f"held {key} {amount}\n")
            if point == "after_reserve" and j == at:
                kill()
            cost = rng.randint(0, amount)
            if point == "before_settle" and j == at:
                kill()
            ledger.settle(key, cost)
            log.write(f"settled {key} {cost}\n")


def read_logs(log_dir: Path) -> tuple[dict[str, int], dict[str, int], int]:
    held, settled, refused = {}, {}, 0
    for path in log_dir.glob("w*.log"):
        for line in path.read_text().splitlines():
            parts = line.split()
            if parts[0] == "held":
                held[parts[1]] = int(parts[2])
            elif parts[0] == "settled":
                settled[parts[1]] = int(parts[2])
            else:
                refused += 1
    return held, settled, refused


def run_race(store: str, where: str, tmp_path: Path) -> None:
    setup = open_store(store, where)
    setup.set_limit("project:race", "total", PROJECT_LIMIT)
    setup.set_limit("user:pool", "total", POOL_LIMIT)
    for i in KILLS:
        setup.set_limit(user_scope(i), "total", OWN_LIMIT)
    limits = {f"{lim.scope}|{lim.window}|total": lim.micros for lim in setup.limits()}
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=worker, args=(store, where, i, str(tmp_path))) for i in range(WORKERS)]
    violations: list[str] = []
    checks = {"n": 0}
    done = threading.Event()

    def monitor() -> None:
        # Not timed: the monitor reads as often as it can until the workers are done, then once more.
        while True:
            last = done.is_set()
            for name, (held, settled) in setup.counters().items():
                if held < 0 or settled + held > limits[name]:
                    violations.append(f"{name}: settled {settled} + held {held} > {limits[name]}")
            checks["n"] += 1
            if last:
                return

    watcher = threading.Thread(target=monitor)
    for p in procs:
        p.start()
    watcher.start()
    for p in procs:
        p.join(timeout=300)
    done.set()
    watcher.join()
    codes = {i: p.exitcode for i, p in enumerate(procs)}
    assert all(codes[i] == -signal.SIGKILL for i in KILLS), codes
    assert all(codes[i] == 0 for i in range(WORKERS) if i not in KILLS), codes
    assert checks["n"] >= 2 and violations == []

    # Every lease is past its deadline an hour later: sweep them all with a clock set there.
    later = open_store(store, where, clock=lambda: time.time() + 3600)
    while later.sweep(1000):
        pass
    counters = later.counters()
    assert all(held == 0 for held, _ in counters.values()), counters
    records = {r.key: r for r in later.reservations()}
    assert not [r for r in records.values() if r.state == "held"]

    held_log, settled_log, refused = read_logs(tmp_path)
    assert refused > 0, "the limit never refused anything: the race did not test the cap"
    for key, cost in settled_log.items():
        assert (records[key].state, records[key].charged) == ("settled", cost), key
    settle_kill = f"w4-{KILLS[4][1]}"
    killed_holds = set(held_log) - set(settled_log) - {settle_kill}
    assert killed_holds == {f"w1-{KILLS[1][1]}", f"w3-{KILLS[3][1]}"}
    for key in killed_holds:  # the process died between reserve and settle: charged in full
        assert (records[key].state, records[key].charged) == ("expired", held_log[key]), key
    in_txn_key = f"w2-{KILLS[2][1]}"
    if store == "sqlite":  # killed inside BEGIN IMMEDIATE ... COMMIT: rolled back, nothing booked
        assert in_txn_key not in records
    else:  # the script was sent: Redis ran it whole; the hold then expired and was charged in full
        assert records[in_txn_key].state == "expired"
    # SQLite rolled the settle back (the lease then charged the hold); Redis ran the settle it was sent.
    assert records[settle_kill].state == ("expired" if store == "sqlite" else "settled")
    assert set(records) - set(held_log) <= {in_txn_key}  # nothing booked that no worker reserved
    total = counters["project:race|total|total"][1]
    assert total == sum(r.charged for r in records.values())  # nothing lost, nothing counted twice
    assert total <= PROJECT_LIMIT
    for scope, limit in [("user:pool", POOL_LIMIT)] + [(user_scope(i), OWN_LIMIT) for i in KILLS]:
        settled = counters.get(f"{scope}|total|total", (0, 0))[1]
        assert settled == sum(r.charged for r in records.values() if scope in r.chain)
        assert settled <= limit
    assert later.verify() == []


def test_sqlite_race_with_killed_workers(tmp_path: Path) -> None:
    run_race("sqlite", str(tmp_path / "race.db"), tmp_path)


@pytest.mark.redis
def test_redis_race_with_killed_workers(tmp_path: Path, redis_server: Any, redis_namespace: str) -> None:
    run_race("redis", f"{redis_server.url}#{redis_namespace}", tmp_path)
