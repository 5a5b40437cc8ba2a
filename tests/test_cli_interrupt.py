"""Stopping a long run by hand: ``kill`` or Ctrl-C ends ``litm bench`` / ``litm probe`` with one line.

The line says how many rows were kept and that ``--resume`` continues; the exit code is 130, and the
resumed run adds exactly the missing rows. Real runs on the embedded model, about 30 s on 2 cores.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

pytest.importorskip("bm25s")


def _rows_on_disk(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _stop_after_first_row(cmd: list[str], rows: Path, signum: int) -> subprocess.CompletedProcess[str]:
    # A suite started as a background job (`make test &`, nohup, a CI script) inherits SIGINT ignored, and
    # the child would too (litm keeps an ignored SIGINT on purpose). Ctrl-C at a terminal is what this models,
    # so the child starts with SIGINT handled whatever launched pytest: exec resets a handled signal to default.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.time() + 120
        while _rows_on_disk(rows) < 1 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        if proc.poll() is None:
            os.killpg(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _bench(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "litm", "bench", "--model", "local", "--k", "3", "--questions", "4",
        "--strategies", "none", "--direct", "0", "--ablation", "0", "--max-tokens", "4",
        "--threads", "1", "--no-progress", "--no-plots", "--out", str(out), *extra,
    ]  # fmt: skip


def test_bench_stopped_by_kill_says_what_it_kept_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    rows = out / "bench.jsonl"
    stopped = _stop_after_first_row(_bench(out), rows, signal.SIGTERM)
    assert stopped.returncode == 130, (stopped.returncode, stopped.stderr)
    assert "Traceback" not in stopped.stderr
    line = stopped.stderr.strip().splitlines()[-1]
    kept = re.fullmatch(
        r"litm: interrupted; (\d+) rows are kept in (.+); run the same command with --resume to continue", line
    )
    assert kept, line
    assert kept.group(2) == str(rows) and int(kept.group(1)) == _rows_on_disk(rows) >= 1
    before = [json.loads(x) for x in rows.read_text(encoding="utf-8").splitlines()]

    done = subprocess.run(_bench(out, "--resume"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = [json.loads(x) for x in rows.read_text(encoding="utf-8").splitlines()]
    keys = [r["key"] for r in after]
    assert after[: len(before)] == before and len(keys) == len(set(keys)) > len(before)
    # 4 questions: gold in each of the 3 slots, plus the closed-book and oracle controls.
    assert len(after) == 4 * (3 + 2)


def test_probe_stopped_by_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    rows = out / "results.jsonl"
    cmd = [
        sys.executable, "-m", "litm", "probe", "--model", "local", "--lengths", "192,384", "--depths", "0,0.5,1",
        "--trials", "2", "--threads", "1", "--no-progress", "--no-plots", "--out", str(out),
    ]  # fmt: skip
    stopped = _stop_after_first_row(cmd, rows, signal.SIGINT)
    assert stopped.returncode == 130, (stopped.returncode, stopped.stderr)
    assert "Traceback" not in stopped.stderr and "Aborted" not in stopped.stderr
    assert f"rows are kept in {rows}; run the same command with --resume" in stopped.stderr
