"""``litm demo``: measure the embedded model, place the bundled NQ-Open sample by the measured profile, answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_demo_places_bundled_sample_without_a_model() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "demo", "--no-probe", "--no-answer"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "who got the first nobel prize in physics" in proc.stdout
    assert "placing by the built-in pyramid profile" in proc.stdout
    assert "gold passage nq-0 (rank 1) sits in slot 1/8" in proc.stdout  # rank order
    assert "gold passage nq-0 (rank 1) sits in slot 8/8" in proc.stdout  # pyramid: next to the question
    assert "step 1/3" not in proc.stdout and "answer:" not in proc.stdout


def test_demo_places_by_a_given_profile(tmp_path: Path) -> None:
    profile = tmp_path / "p.json"
    # Best at the start: the gold passage (rank 1) must go first.
    profile.write_text(json.dumps({"format": "litm-position-profile", "version": 1, "weights": [1.0, 0.5, 0.2]}))
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "demo", "--profile", str(profile), "--no-answer"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("gold passage nq-0 (rank 1) sits in slot 1/8") == 2


@pytest.mark.model
def test_demo_measures_places_and_answers(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = subprocess.run(
        # One llama.cpp thread: robust on a shared 2-core machine (two spinning threads can stall).
        [sys.executable, "-m", "litm", "demo", "--quick", "--out", str(out), "--no-progress", "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "step 1/3: probing the embedded model" in text
    assert "accuracy [Wilson 95%]" in text and "recommended max_input_tokens" in text
    assert "step 2/3: placing by the measured profile" in text
    assert "strategy: profile (8 documents)" in text
    assert "step 3/3: asking gemma3-270m" in text and "\nanswer: " in text and "expected: Wilhelm Conrad" in text
    for name in ("results.jsonl", "profile.json", "report.html"):
        assert (out / "probe" / name).is_file()
