"""``litm spend status|history|set-limit|reset`` over an SQLite file and a real Redis server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.cli import app
from litm.spend import SpendCap
from litm.spend._ledger import open_ledger

runner = CliRunner()


def cli(*args: str) -> Any:
    return runner.invoke(app, ["spend", *args], catch_exceptions=False)


def exercise(spec: str, extra: list[str]) -> None:
    assert cli("set-limit", spec, "project:acme", "100", "--window", "monthly", *extra).exit_code == 0
    out = cli("set-limit", spec, "user:42", "2.50", *extra)
    assert out.exit_code == 0 and "user:42 total limit = $2.50" in out.output
    cap = SpendCap(open_ledger(spec, namespace=extra[1] if extra else "default"), scopes=["project:acme", "user:42"])
    cap.reserve("gpt-4o-mini", provider="openai", input_tokens=1_000_000, input_exact=True, max_tokens=1000).settle(
        {"prompt_tokens": 1_000_000, "completion_tokens": 1000}
    )
    cap.reserve("gpt-4o-mini", provider="openai", input_tokens=1000, input_exact=True, max_tokens=1000, key="open-call")
    table = cli("status", spec, *extra).output.splitlines()
    assert table[0].split() == ["scope", "window", "limit", "settled", "held", "available"]
    assert "$0.1506" in table[2] and "$0.00075" in table[2] and "$2.50" in table[2]
    rows = json.loads(cli("status", spec, "--json", "--scope", "user:42", *extra).output)
    assert rows == [{"scope": "user:42", "window": "total", "window_id": "total", "limit": 2_500_000,
                     "settled": 150_600, "held": 750, "available": 2_348_650}]  # fmt: skip
    events = json.loads(cli("history", spec, "--json", "-n", "3", *extra).output)
    assert [e["kind"] for e in events] == ["reserve", "settle", "reserve"] and events[0]["key"] == "open-call"
    assert "reserve" in cli("history", spec, "--scope", "user:42", *extra).output
    assert "would clear $0.1506" in cli("reset", spec, "user:42", *extra).output
    assert "cleared $0.1506" in cli("reset", spec, "user:42", "--yes", *extra).output
    assert json.loads(cli("status", spec, "--json", "--scope", "user:42", *extra).output)[0]["settled"] == 0
    assert "removed" in cli("set-limit", spec, "user:42", "0", "--remove", *extra).output


def test_cli_over_sqlite(tmp_path: Path) -> None:
    exercise(str(tmp_path / "spend.db"), [])


@pytest.mark.redis
def test_cli_over_redis(redis_server: Any, redis_namespace: str) -> None:
    exercise(redis_server.url, ["--namespace", redis_namespace])


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "litm", "spend", "set-limit", str(tmp_path / "s.db"), "user:1", "0.1x"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("litm: error: limit '0.1x' is not a plain decimal number of dollars")
