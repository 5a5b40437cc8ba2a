"""The SQLite ledger's page size, A/B in one run: SQLite's 4 KiB default (the ledger before commit 2107649)
against the 1 KiB pages new ledger files use now.

The scenario and the counting are ``bench_spend.py``'s throughput phase (``synchronous=NORMAL``, a limit
that never binds, calls split over 1, 4 and 8 processes). The two page sizes alternate, round after round,
so both see the same machine; the figure is the ratio of medians, not the rates. Run it alone::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_spend_page_size.py [--rounds 3] [--calls 8000]
"""

from __future__ import annotations

import argparse
import os
import statistics

import bench_spend  # the sibling script (its folder is on sys.path when run as a script): same scenario
import litm.spend._ledger.sqlite as sqlite_ledger

PROCESSES = (1, 4, 8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=8000)
    args = ap.parse_args()
    print("load average at start:", os.getloadavg())
    rates: dict[tuple[int, int], list[int]] = {}
    spec = {"store": "sqlite", "synchronous": "NORMAL", "dist": "uniform", "model": "gpt-4o-mini"}
    for rnd in range(args.rounds):
        for page in (4096, 1024):
            sqlite_ledger.PAGE_SIZE = page  # read when a new ledger file is first opened
            for procs in PROCESSES:
                res = bench_spend.run_litm(spec, procs, args.calls // procs, bench_spend.HUGE_LIMIT_USD)
                rates.setdefault((page, procs), []).append(res["ops_per_s"])
                print(f"round {rnd}  page {page}  processes {procs}  {res['ops_per_s']} ops/s  "
                      f"{res['client_cpu_us_per_op']} client CPU µs/op", flush=True)  # fmt: skip
    print("load average at end:", os.getloadavg())
    for procs in PROCESSES:
        old, new = (statistics.median(rates[(page, procs)]) for page in (4096, 1024))
        print(f"processes {procs}: 4 KiB {old:.0f} ops/s, 1 KiB {new:.0f} ops/s (medians of "
              f"{args.rounds}): {new / old:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
