"""Progress for long runs: plain, rate-limited log lines when there is no terminal; nothing when disabled."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from litm.util._progress import LineProgress, Progress, format_duration, progress


def test_lines_are_rate_limited_but_the_last_step_is_always_reported() -> None:
    out = io.StringIO()
    bar = progress("probe", stream=out, interval=3600)
    assert isinstance(bar, LineProgress)
    with bar:
        task = bar.add_task("needle", total=5)
        for _ in range(5):
            bar.advance(task)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # the start and the finish; the steps between fall inside the interval
    assert lines[0].startswith("probe needle: 0/5 (0%), elapsed ")
    assert lines[1].startswith("probe needle: 5/5 (100%), elapsed ") and "ETA" not in lines[1]


def test_every_step_is_reported_with_an_eta_when_the_interval_is_zero() -> None:
    out = io.StringIO()
    bar = progress("bench", stream=out, interval=0)
    task = bar.add_task("direct", total=4)
    bar.advance(task)
    bar.set_total(task, 2)  # work dropped on the way (an adaptive probe)
    bar.advance(task)
    lines = out.getvalue().splitlines()
    assert lines[1].startswith("bench direct: 1/4 (25%)") and ", ETA " in lines[1]
    assert lines[2].startswith("bench direct: 2/2 (100%)") and bar.done(task) == 2


def test_disabled_progress_writes_nothing_but_still_counts() -> None:
    bar = progress("bench", enabled=False)
    assert type(bar) is Progress
    task = bar.add_task("x", total=0)
    bar.advance(task, 3)
    assert bar.done(task) == 3 and bar.total(task) == 0


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0, 59.6, 60, 3599, 3600, 7325)] == [
        "0s",
        "1m00s",
        "1m00s",
        "59m59s",
        "1h00m",
        "2h02m",
    ]


def test_probe_progress_lines_name_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from litm.probe._grid import ProbeConfig
    from litm.probe._runner import run_probe
    from litm.probe._testing import DeadZoneModel

    config = ProbeConfig(lengths=(256,), depths=(0.0, 1.0), trials=2)
    run_probe(DeadZoneModel(), config, tmp_path, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("probe trials: 0/") and lines[-1].startswith("probe trials: ")
    assert "(100%)" in lines[-1]
