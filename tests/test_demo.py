"""The demo command places the bundled NQ-Open sample and shows where the gold passage lands."""

from __future__ import annotations

import subprocess
import sys


def test_demo_places_bundled_sample() -> None:
    proc = subprocess.run([sys.executable, "-m", "litm", "demo"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "who got the first nobel prize in physics" in proc.stdout
    assert "gold passage nq-0 (rank 1) sits in slot 1/8" in proc.stdout  # rank order
    assert "gold passage nq-0 (rank 1) sits in slot 8/8" in proc.stdout  # pyramid: next to the question
