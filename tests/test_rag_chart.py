"""The before/after chart: the accuracy of the slot each rank lands in, from the committed measured profile."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from litm.errors import InvalidOptionError, InvalidProfileError
from litm.placement import PositionProfile
from litm.probe._chart import bundled_profile
from litm.rag import rank_chart

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = json.loads((ROOT / "docs/results/bench-nq-gemma3-270m/bench-summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("strategy", ["none", "pyramid", "edges"])
def test_the_bundled_profile_reproduces_the_benchmarks_per_rank_accuracy(strategy: str) -> None:
    # The benchmark derives accuracy by retrieval rank from the slot runs; the chart must give the same numbers.
    chart = rank_chart(bundled_profile(), 10, strategy)
    derived = [c["acc"] for c in SUMMARY["by_k"]["10"]["derived"][strategy]]
    assert chart.after == pytest.approx(derived)
    assert chart.before == pytest.approx([c["acc"] for c in SUMMARY["by_k"]["10"]["slot_accuracy"]])


def test_expected_accuracy_matches_the_committed_headline() -> None:
    chart = rank_chart(bundled_profile(), 10, "pyramid")
    head = SUMMARY["by_k"]["10"]["headline"]["decaying"]
    assert round(chart.expected_before, 4) == head["none"]["expected_acc"]
    assert round(chart.expected_after, 4) == head["pyramid"]["expected_acc"]
    assert chart.measured and chart.intervals is not None and len(chart.intervals) == 10
    assert chart.after_slots == (10, 1, 9, 2, 8, 3, 7, 4, 6, 5)


def test_a_builtin_shape_is_labelled_assumed_everywhere() -> None:
    chart = rank_chart(PositionProfile.pyramid(), 6, "pyramid")
    assert not chart.measured and chart.intervals is None
    assert "assumed" in chart.label and "not a measurement" in chart.table()
    assert chart.to_dict()["measured"] is False


def test_a_probe_profile_is_interpolated_to_n_slots_without_intervals() -> None:
    probe = PositionProfile.from_weights([1.0, 0.5, 0.9], metadata={"source": "litm probe"})
    chart = rank_chart(probe, 5, "none")
    assert chart.slot_values == pytest.approx((1.0, 0.75, 0.5, 0.7, 0.9))
    assert chart.intervals is None and chart.measured


def test_bad_input_is_a_typed_error() -> None:
    with pytest.raises(InvalidOptionError):
        rank_chart(bundled_profile(), 0)
    with pytest.raises(InvalidProfileError):
        rank_chart([0.1, 0.2], 2)  # type: ignore[arg-type]
    broken = PositionProfile.from_weights([0.1, 0.2], metadata={"source": "x", "slot_intervals": [[0, 1], "ab"]})
    with pytest.raises(InvalidProfileError, match="slot_intervals"):
        rank_chart(broken, 2)


def _litm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "litm", *args], capture_output=True, text=True, timeout=120)


def test_chart_command_writes_png_and_inline_html(tmp_path: Path) -> None:
    proc = _litm("chart", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "measured accuracy of the slot each rank lands in" in proc.stdout
    # The default, auto, places by the measured profile it is charting: each rank to the best slot left.
    assert "rank order 0.1315, auto 0.1632 (+0.0317)" in proc.stdout
    png = (tmp_path / "chart.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    html = (tmp_path / "chart.html").read_text(encoding="utf-8")
    assert base64.b64encode(png).decode("ascii") in html  # the same picture, inline
    assert "bench-summary.json" in html  # the provenance travels with the picture
    assert "<td>10</td><td>0.210</td>" in html  # rank 1 lands in slot 10 (accuracy 0.21)


def test_chart_command_labels_a_builtin_shape_and_refuses_both_sources(tmp_path: Path) -> None:
    proc = _litm("chart", "--builtin", "edges", "--n", "5", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "assumed weight (a built-in shape, not a measurement)" in proc.stdout
    assert "ASSUMED" not in proc.stdout and "assumed" in (tmp_path / "chart.html").read_text(encoding="utf-8")
    profile = tmp_path / "p.json"
    bundled_profile().save(profile)
    both = _litm("chart", str(profile), "--builtin", "edges", "--out", str(tmp_path))
    assert both.returncode == 2 and "not both" in both.stderr
    missing = _litm("chart", str(tmp_path / "nope.json"), "--out", str(tmp_path))
    assert missing.returncode == 2 and "profile file not found" in missing.stderr


def test_a_measured_profile_read_for_another_number_of_slots_says_interpolated() -> None:
    chart = rank_chart(bundled_profile(), 9, "pyramid")
    assert chart.label == "measured accuracy, interpolated from 10 points to 9 slots"
    assert chart.intervals is None and chart.slot_values[0] == pytest.approx(0.16)
    assert rank_chart(bundled_profile(), 10, "pyramid").label == "measured accuracy"
