"""``litm probe`` on the command line, with a scripted model registered as a backend (in process)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.cli import app
from litm.models import register_backend, unregister_backend
from litm.probe._testing import DeadZoneModel

runner = CliRunner()
GRID = ["--lengths", "256,512", "--depths", "0,0.5,1", "--trials", "4", "--no-progress"]


@pytest.fixture(autouse=True)
def fake_backend() -> Iterator[None]:
    def factory(spec: Any, **options: Any) -> DeadZoneModel:
        return DeadZoneModel(remote=spec.target == "remote", name=spec.target or "fake")

    register_backend("probefake", factory, replace=True)
    yield
    unregister_backend("probefake")


def invoke(*args: str) -> Any:
    return runner.invoke(app, ["probe", *args], catch_exceptions=False)


def test_probe_writes_results_profile_plots_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = invoke("--model", "probefake:m", *GRID, "--out", str(out))
    assert res.exit_code == 0, res.output
    for name in ("results.jsonl", "run.json", "profile.json", "summary.json", "report.html", "needle-accuracy.png"):
        assert (out / name).exists(), name
    assert "accuracy [Wilson 95%]" in res.output and "dead zone (pooled over lengths): depths 0.5" in res.output
    assert "recommended max_input_tokens" in res.output
    profile = json.loads((out / "profile.json").read_text())
    assert profile["format"] == "litm-position-profile" and profile["model"] == "m"


def test_existing_results_need_resume_or_fresh(tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    assert invoke("--model", "probefake:m", *GRID, "--out", out).exit_code == 0
    again = runner.invoke(app, ["probe", "--model", "probefake:m", *GRID, "--out", out])
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = invoke("--model", "probefake:m", *GRID, "--out", out, "--resume")
    assert resumed.exit_code == 0 and "0 new rows (28 already done)" in resumed.output
    fresh = invoke("--model", "probefake:m", *GRID, "--out", out, "--fresh")
    assert "28 new rows (0 already done)" in fresh.output


def test_dry_run_estimates_and_runs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "dry"
    prices = ["--price-in", "2.5", "--price-out", "10"]
    res = invoke("--model", "probefake:m", *GRID, "--out", str(out), "--dry-run", *prices)
    assert res.exit_code == 0
    assert "calls to run: 28" in res.output and "estimated cost: $" in res.output
    assert not (out / "results.jsonl").exists()


def test_remote_models_print_the_estimate_before_the_sweep(tmp_path: Path) -> None:
    res = invoke("--model", "probefake:remote", *GRID, "--out", str(tmp_path / "r"), "--concurrency", "3")
    assert res.exit_code == 0
    assert res.output.index("calls to run") < res.output.index("new rows")


def test_diff_and_report_subcommands(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    invoke("--model", "probefake:m", *GRID, "--out", str(a))
    invoke("--model", "probefake:m", *GRID, "--out", str(b), "--seed", "5")
    res = invoke("diff", str(a / "profile.json"), str(b / "profile.json"))
    assert res.exit_code == 0 and "B-A" in res.output and "dead zone: A 0.5  B 0.5" in res.output
    as_json = json.loads(invoke("diff", str(a / "profile.json"), str(b / "profile.json"), "--json").output)
    assert [row["depth"] for row in as_json["depths"]] == [0.0, 0.5, 1.0]
    (a / "report.html").unlink()
    res = invoke("report", str(a))
    assert res.exit_code == 0 and (a / "report.html").exists()
    res = invoke("report", str(a), "--rescore")
    assert "rescored 28 rows; 0 changed hit or miss class" in res.output


def test_tasks_layouts_and_template_options(tmp_path: Path) -> None:
    template = tmp_path / "layout.txt"
    template.write_text("Context follows.\n{document}\nEnd of context.\n{question}\n{answer_prefix}")
    options = ["--task", "needle,kv", "--template", str(template)]
    res = invoke("--model", "probefake:m", *GRID, "--out", str(tmp_path / "t"), *options)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert {r["task"] for r in rows} == {"needle", "kv"}
    assert {r["layout"] for r in rows if r["kind"] == "trial"} == {"custom"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lengths", "8"], "too short"),
        (["--depths", "0,1.5"], "outside [0, 1]"),
        (["--task", "nope"], "unknown probe task"),
        (["--layouts", "fancy"], "unknown layout"),
        ([], "--model is required"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    model = [] if not args else ["--model", "local"]
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "probe", *model, *args, "--out", str(tmp_path), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
