"""End to end on the embedded model: a tiny grid through the CLI, killed midway and resumed.

Checks the files, the profile schema, and that the killed run, restarted with ``--resume``, neither loses
nor duplicates a row. About 20-40 s on 2 CPU cores.
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

from litm.eval._results import read_rows
from litm.placement._profile import PositionProfile
from litm.probe import ProbeConfig
from litm.probe._grid import plan
from litm.probe._recipe import verify_row

pytestmark = pytest.mark.model

LENGTHS, DEPTHS, TRIALS = (192, 384), (0.0, 0.5, 1.0), 2


def _command(out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "litm",
        "probe",
        "--model",
        "local",
        "--lengths",
        ",".join(map(str, LENGTHS)),
        "--depths",
        ",".join(map(str, DEPTHS)),
        "--trials",
        str(TRIALS),
        "--out",
        str(out),
        "--no-progress",
        "--resume",
        # One llama.cpp thread: two spinning threads on a shared 2-core machine can stall for seconds.
        "--threads",
        "1",
    ]


def _rows_on_disk(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_tiny_grid_killed_midway_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    results = out / "results.jsonl"
    expected = {s.key for s in plan(ProbeConfig(lengths=LENGTHS, depths=DEPTHS, trials=TRIALS))}

    proc = subprocess.Popen(_command(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.time() + 90
        while _rows_on_disk(results) < 4 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # as hard as a crash: no cleanup, no flush
    finally:
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    killed_rows = read_rows(results)
    assert 4 <= len(killed_rows) < len(expected)

    done = subprocess.run(_command(out), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = re.search(r"(\d+) new rows \((\d+) already done\) in [\d.]+ s; (\d+) of (\d+) prompt tokens", done.stdout)
    assert counts, done.stdout
    new, skipped, prefill, prompt_tokens = map(int, counts.groups())
    assert (new, skipped) == (len(expected) - len(killed_rows), len(killed_rows))

    rows = read_rows(results)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)), "a row was duplicated"
    assert set(keys) == expected, "a row was lost"
    assert rows[: len(killed_rows)] == killed_rows
    assert all(r["mode"] == "aligned" and r["model"] == "gemma3-270m" for r in rows)
    trials = [r for r in rows if r["kind"] == "trial"]
    assert all(r["exact_length"] and r["prompt_tokens"] == r["length"] for r in trials)
    assert all(verify_row(r) for r in rows)
    # The resumed run evaluated exactly the prompts of the rows it added, nothing of the killed run's work:
    # its token counts are those rows' input tokens, less what each reused from the KV cache.
    added = rows[len(killed_rows) :]
    assert prompt_tokens == sum(r["input_tokens"] for r in added)
    assert prefill == sum(r["input_tokens"] - r["cached_tokens"] for r in added)
    assert all(0 <= r["cached_tokens"] < r["input_tokens"] for r in rows)

    files = ("run.json", "profile.json", "summary.json", "report.html", "needle-accuracy.png", "needle-heatmap.png")
    for name in files:
        assert (out / name).is_file(), name
    data = json.loads((out / "profile.json").read_text())
    assert data["format"] == "litm-position-profile" and data["version"] == 1
    assert [p["position"] for p in data["points"]] == list(DEPTHS)
    assert all(0.0 <= p["weight"] <= 1.001 for p in data["points"])
    meta = data["metadata"]
    assert meta["recommended_max_input_tokens"] in (*LENGTHS, None)
    assert meta["probe"]["settings"]["mode"] == "aligned"
    assert sum(c["n"] for c in meta["probe"]["pooled"]) == len(LENGTHS) * len(DEPTHS) * TRIALS
    assert PositionProfile.load(out / "profile.json").model == "gemma3-270m"
