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

from litm.cli import app, main
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


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``litm probe ARGS`` through the console entry point (the one-line error and exit 2 of a LitmError)."""
    monkeypatch.setattr(sys, "argv", ["litm", "probe", *args])
    with pytest.raises(SystemExit) as stopped:
        main()
    return int(stopped.value.code or 0), capsys.readouterr().err


def test_existing_results_need_resume_or_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")
    assert invoke("--model", "probefake:m", *GRID, "--out", out).exit_code == 0
    code, err = run_main(monkeypatch, capsys, "--model", "probefake:m", *GRID, "--out", out)
    assert code == 2 and "--resume" in err and len(err.strip().splitlines()) == 1
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


def test_a_config_file_drives_the_run_and_flags_override_it(tmp_path: Path) -> None:
    # The keys are the Python API's names (ProbeConfig's fields, the run's options), not the flags.
    config = tmp_path / "probe.toml"
    config.write_text(
        'model = "probefake:m"\nlengths = [256, 512]\ndepths = "0,0.5,1"\ntrials = 3\ntasks = ["needle"]\n'
        f'progress = false\nplots = false\ntarget_half_width = 0.2\nout = "{(tmp_path / "run").as_posix()}"\n'
    )
    res = invoke("--config", str(config), "--trials", "2")
    assert res.exit_code == 0, res.output
    settings = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert settings["lengths"] == [256, 512] and settings["depths"] == [0.0, 0.5, 1.0]
    assert settings["trials"] == 2, "the flag overrides the file"
    assert settings["target_half_width"] == 0.2
    assert not list((tmp_path / "run").glob("*.png")), "plots = false came from the file"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("trails = 4", "unknown key 'trails'"),
        ('trials = "ten"', "trials must be an integer, got 'ten'"),
        ("trials = 0", "trials must be at least 1"),
        ('order = "random"', "order must be one of prefix, grid"),
        ("lengths = [256, true]", "lengths must be a list of integers or a string"),
        ("model = ", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_is_one_typed_line(
    text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "probe.toml"
    config.write_text(text + "\n")
    code, err = run_main(monkeypatch, capsys, "--config", str(config), "--model", "probefake:m", "--dry-run",
                         "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_bad_config_error_is_typed() -> None:
    from litm import CommandConfigError, InvalidOptionError, LitmError

    assert issubclass(CommandConfigError, InvalidOptionError) and issubclass(CommandConfigError, ValueError)
    assert issubclass(CommandConfigError, LitmError)


def test_help_groups_the_options() -> None:
    res = invoke("--help")
    assert res.exit_code == 0
    sections = [line for line in res.output.splitlines() if line and not line.startswith(" ")]
    for panel in ("Configuration file:", "Model:", "Grid:", "Tasks and prompts:", "Adaptive stopping:", "Run:",
                  "Output:", "Commands:"):  # fmt: skip
        assert panel in sections, (panel, sections)
