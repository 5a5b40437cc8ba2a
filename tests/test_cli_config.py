"""``--config FILE.toml`` of ``litm bench`` and ``litm prompt`` (``litm probe``'s is in test_probe_cli.py), and the
option groups of their help: keys are the Python API's names, flags override the file, a bad file is one line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from litm.cli import app, main
from litm.models import register_backend, unregister_backend
from litm.probe._testing import DeadZoneModel

runner = CliRunner()


@pytest.fixture()
def fake_backend() -> Iterator[None]:
    register_backend("cfgfake", lambda spec, **_: DeadZoneModel(name="m"), replace=True)
    yield
    unregister_backend("cfgfake")


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``litm ARGS`` through the console entry point; the exit code and stderr."""
    monkeypatch.setattr(sys, "argv", ["litm", *args])
    try:
        main()
    except SystemExit as stopped:
        return stopped.code if isinstance(stopped.code, int) else 1, capsys.readouterr().err
    return 0, capsys.readouterr().err


def test_a_bench_config_file_drives_a_tiny_run_and_flags_override_it(tmp_path: Path, fake_backend: None) -> None:
    pytest.importorskip("bm25s")
    out = tmp_path / "bench"
    config = tmp_path / "bench.toml"
    config.write_text(
        'model = "cfgfake:m"\nks = [3]\nquestions = 3\ndirect_questions = 0\nablation_questions = 0\n'
        f'controls = false\nprogress = false\nplots = false\nout = "{out.as_posix()}"\n'
    )
    res = runner.invoke(app, ["bench", "--config", str(config), "--questions", "2"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    settings = json.loads((out / "run.json").read_text(encoding="utf-8"))["config"]
    assert settings["ks"] == [3] and settings["direct_questions"] == 0 and settings["controls"] is False
    assert settings["questions"] == 2, "the flag overrides the file"
    assert not list(out.glob("*.png")), "plots = false came from the file"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k = [10]", "unknown key 'k'"),
        ("questions = 2.5", "questions must be an integer, got 2.5"),
        ("direct_questions = -1", "direct_questions must be at least 0"),
        ('reuse_prefix = "warm"', "reuse_prefix must be one of aligned, full, cold"),
        ("compress_ratios = [2, false]", "compress_ratios must be a list of numbers or a string"),
    ],
)
def test_a_bad_bench_config_is_one_typed_line(
    text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bench.toml"
    config.write_text(text + "\n")
    code, err = run_main(monkeypatch, capsys, "bench", "--config", str(config), "--out", str(tmp_path / "out"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_a_missing_config_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(monkeypatch, capsys, "bench", "--config", str(tmp_path / "none.toml"))
    assert code == 2 and "cannot read --config" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("command", "panels"),
    [
        ("bench", ["Configuration file:", "Model:", "Data and questions:", "Strategies and ablation:",
                   "Compression arms:", "Self-consistency arm:", "Run:"]),
        ("prompt", ["Arguments:", "Configuration file:", "Question and format:", "Placement:", "Anchors:",
                    "Wording:", "Escaping:"]),
    ],
)  # fmt: skip
def test_help_groups_the_options(command: str, panels: list[str]) -> None:
    res = runner.invoke(app, [command, "--help"])
    assert res.exit_code == 0
    sections = [line for line in res.output.splitlines() if line and not line.startswith(" ")]
    for panel in panels:
        assert panel in sections, (panel, sections)


DOCS = Path(__file__).parent / "data" / "prompt_docs.jsonl"


def test_a_prompt_config_file_sets_the_options_and_a_flag_overrides_it(tmp_path: Path) -> None:
    from litm.placement import PlacementOptions
    from litm.prompt import AnchorOptions, build_prompt
    from litm.util._records import read_records

    config = tmp_path / "prompt.toml"
    config.write_text('strategy = "pyramid"\nrank_by = "score"\nscores = false\nstyle = "bracket"\nformat = "openai"\n')
    res = runner.invoke(app, ["prompt", str(DOCS), "-q", "Who won?", "--config", str(config), "--format", "text"])
    assert res.exit_code == 0, res.output
    expected = build_prompt(
        read_records(DOCS), "Who won?", placement=PlacementOptions(strategy="pyramid", rank_by="score"),
        anchors=AnchorOptions(style="bracket", scores=False),
    )  # fmt: skip
    assert res.output == expected.text, "the file's options, with --format text from the command line"


def test_a_bad_prompt_config_is_one_typed_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "prompt.toml"
    config.write_text("no_scores = true\n")
    code, err = run_main(monkeypatch, capsys, "prompt", str(DOCS), "-q", "x", "--config", str(config))
    assert code == 2 and "unknown key 'no_scores'" in err and len(err.strip().splitlines()) == 1, err
    config.write_text('strategy = "sideways"\n')
    code, err = run_main(monkeypatch, capsys, "prompt", str(DOCS), "-q", "x", "--config", str(config))
    assert code == 2 and "'sideways' is not a placement strategy" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(("page", "module"), [("probe.md", "litm.cli._probe"), ("bench.md", "litm.cli._bench")])
def test_the_documented_config_files_use_only_known_keys(page: str, module: str, tmp_path: Path) -> None:
    import importlib
    import re

    from litm.cli._config import read_config

    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text(encoding="utf-8")
    section = text.split("## Options in a file (`--config`)", 1)[1]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block is not None
    config = tmp_path / "example.toml"
    config.write_text(block[1])
    assert read_config(config, importlib.import_module(module).KEYS)
