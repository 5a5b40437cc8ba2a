"""Fuzz every ``litm`` command at a large size and write the cases that break the CLI contract to a folder.

The engine is ``tests/cli_fuzz.py`` (the suite runs it small in ``tests/test_cli_fuzz.py``): generated
argument lists and stdin, run in process through ``litm.cli.main`` with a scripted model and no network;
a case fails when it exits other than 0 or 2, prints a traceback, prints more than one line on stderr when it
fails, or leaves a partial file. Each distinct failure is written once as ``FAILURES/<n>-<command>.json``
(argv, stdin, exit status, stderr, traceback) and summarised on stdout. A failure copied into
``tests/data/cli-fuzz/`` is replayed by the suite from then on.

    python scripts/fuzz_cli.py --cases 200 --out litm-out/fuzz-failures       # 200 cases per command
    python scripts/fuzz_cli.py --command place --command prompt --seed 7      # some commands only
    python scripts/fuzz_cli.py --replay litm-out/fuzz-failures                 # run a corpus again

Exit status: 0 when every case kept the contract, 1 when one did not.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cli_fuzz import COMMANDS, Case, HarnessLeak, Outcome, draw_cases, prepare, run_case, sandbox


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="Cases per command (default 200).")
    parser.add_argument("--seed", default=str(int(time.time())), help="Seed (default: the time).")
    parser.add_argument("--command", action="append", default=[], help="Only this command (repeatable).")
    parser.add_argument("--out", type=Path, default=Path("litm-out/fuzz-failures"), help="Folder for failures.")
    parser.add_argument("--huge-bytes", type=int, default=20_000_000, help="Size of the huge file and stdin.")
    parser.add_argument("--timeout", type=float, default=120.0, help="Seconds a case may run.")
    parser.add_argument("--replay", type=Path, help="Run the cases of this corpus folder instead of new ones.")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if args.replay is not None:
        files = sorted(args.replay.glob("*.json"))
        cases = [(path.stem, Case.from_json(json.loads(path.read_text(encoding="utf-8")))) for path in files]
    else:
        wanted = set(args.command)
        known = {c.name for c in COMMANDS}
        if wanted - known:
            print(f"unknown command(s) {sorted(wanted - known)}; known: {', '.join(sorted(known))}", file=sys.stderr)
            return 2
        chosen = [c for c in COMMANDS if not wanted or c.name in wanted]
        cases = [
            (c.name, case) for c in chosen for case in draw_cases(c, args.cases, args.seed, huge_stdin=args.huge_bytes)
        ]
    print(f"{len(cases)} cases (seed {args.seed})", flush=True)
    failures: dict[str, Outcome] = {}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="litm-fuzz-") as tmp, sandbox():
        for i, (label, case) in enumerate(cases, start=1):
            workspace = prepare(Path(tmp) / "ws", huge_bytes=args.huge_bytes)
            try:
                outcome = run_case(case, workspace, timeout_s=args.timeout)
            except HarnessLeak as leak:  # the generator let a real model or a connection through: its bug
                outcome = Outcome(case, None, "", "", traceback.format_exc(), [f"harness: {leak}"])
            if not outcome.ok and outcome.signature() not in failures:
                failures[outcome.signature()] = outcome
                print(f"\n[{i}/{len(cases)}] {label}: new failure\n{outcome.report()}", flush=True)
            if i % 100 == 0:
                print(f"[{i}/{len(cases)}] {time.perf_counter() - began:.0f} s, {len(failures)} distinct failures",
                      flush=True)  # fmt: skip
    if failures:
        args.out.mkdir(parents=True, exist_ok=True)
        for n, outcome in enumerate(failures.values(), start=1):
            name = re.sub(r"[^a-z0-9-]+", "-", "-".join(outcome.case.argv[:2]).lower()).strip("-") or "litm"
            path = args.out / f"{n:03d}-{name}.json"
            path.write_text(json.dumps(outcome.to_json(), indent=2) + "\n", encoding="utf-8")
    print(f"\n{len(cases)} cases in {time.perf_counter() - began:.0f} s: {len(failures)} distinct failures"
          + (f", written to {args.out}" if failures else ""))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
