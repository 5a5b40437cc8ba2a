"""Load with faults at a small size: issue 42's benchmark scenario, run by the benchmark itself
(``benchmarks/bench_gateway.py --mode faults``, 300 requests from 30 clients instead of 20,000 from 200).

Two ``litm serve`` instances x 2 workers share one redis-server (ledger and keys, AOF on); the requests take the three
request shapes with random prompt sizes and output limits, 30 % streamed and half of those dropped by the client,
on 8 keys under 2 teams under one org, every scope limited. A quarter of the way in a worker is SIGKILLed, half-way
Redis is shut down and started again (its data kept). The stand-in upstream bills every request it receives at its
worst case, per scope. Checked from the run's own results: settled + held never passed a limit at any read of the
monitor; the stand-in received nothing over budget and its bill stays within every limit; every request got a 200
or a typed refusal (the error ``code`` in the provider's shape), except those in flight on the killed worker; after
the leases and a sweep nothing is held and the ledger's log sums to its counters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures_redis import require_redis
from script_support import load_script

pytestmark = pytest.mark.redis
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_gateway.py"


def test_two_gateways_under_load_with_a_killed_worker_and_a_redis_restart_never_overspend(tmp_path: Path) -> None:
    require_redis()
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(BENCH), "--mode", "faults", "--requests", "300", "--clients", "30",
                          "--lease-s", "2", "--redis-down-s", "0.5", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=240)  # fmt: skip
    result = json.loads((tmp_path / "results.json").read_text()) if (tmp_path / "results.json").exists() else None
    assert result is not None, run.stdout[-3000:] + run.stderr[-3000:]
    failed = [name for name, ok in result["checks"].items() if not ok]
    why = {"failed": failed, "answers": result["answers"], "gateway_defects": result["gateway_defects"]}
    assert not failed and result["ok"] and run.returncode == 0, (why, json.dumps(result, indent=1)[:4000])
    # The same facts, read from the raw numbers rather than the summary flags:
    assert result["requests"] == 300 and result["monitor"]["reads"] > 10 and not result["monitor"]["violations"]
    assert result["upstream"]["over_budget"] == 0 and result["upstream"]["received"] > 0
    for scope, row in result["scopes"].items():
        assert row["worst_settled_plus_held_minus_limit"] <= 0, scope
        assert row["held"] == 0 and row["upstream_bill"] <= row["settled"] <= row["limit"], (scope, row)
    answers = result["answers"]
    assert answers.get("200", 0) > 0 and answers.get("402 budget_exceeded", 0) > 0, answers
    # While Redis was down requests were refused with a typed 503 (never let through).
    assert {label for label in answers if label.startswith("503")} <= {"503 ledger_unavailable",
                                                                       "503 key_store_unavailable"}, answers
    assert any(label.startswith("503") for label in answers), answers
    assert not result["untyped_outside_the_killed_worker"] and not result["ledger_mismatches"]
    assert result["faults"]["worker_killed"]["pid"] and "redis_restarted" in result["faults"]
    assert result["gateway_defects"] == []
    assert (tmp_path / "results.md").read_text().startswith("# Gateway benchmark (faults)")


def test_the_faults_report_quotes_the_gateways_500_lines(tmp_path: Path) -> None:
    # A failed faults run must say which defect answered 500: the report quotes the gateway log's lines.
    bench = load_script("benchmarks/bench_gateway.py")
    log = tmp_path / "gateway-0.log"
    defect = "request to /v1/responses failed: RuntimeError: the handler is closed"
    log.write_text("\n".join([
        json.dumps({"level": "warning", "logger": "litm.spend", "msg": "call gw-1 stream client closed"}),
        json.dumps({"level": "error", "logger": "litm.serve", "msg": defect}),
        "not json",
    ]))  # fmt: skip
    assert bench._defects(log) == [defect]
