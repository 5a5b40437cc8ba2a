"""The CLI fuzz harness at a small size: every ``litm`` command, generated argument lists and stdin, in process.

Each command (walked from the Typer app, so a new one is fuzzed without a line here) gets a fixed set of
generated cases; each case runs through ``litm.cli.main`` with a scripted model, no network and a fresh
workspace, and must exit 0 or 2, with one ``litm: error:`` line on a failure, no traceback and no partial
file (tests/cli_fuzz.py). ``scripts/fuzz_cli.py`` runs the same engine at a large size and writes the failing
cases to a folder; the failures found so far are kept in ``tests/data/cli-fuzz/`` and replayed here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from cli_fuzz import COMMANDS, Case, Outcome, commands, describe, draw_cases, prepare, run_case, sandbox
from litm.cli import app

#: Cases per command: about 20 commands at this size run in well under a minute on 2 cores.
CASES = 10
SEED = "suite-1"
CORPUS = sorted((Path(__file__).parent / "data" / "cli-fuzz").glob("*.json"))
#: Commands with a defect the fuzzer found in another engineer's area, expected to fail until it is fixed
#: (strict: once fixed, the entry has to go).
KNOWN: dict[str, str] = {}
KNOWN_CASES: dict[str, str] = {
}


@pytest.fixture(scope="module", name="sandboxed")
def sandboxed_fixture() -> Iterator[None]:
    with sandbox():
        yield


def _run(case: Case, folder: Path) -> Outcome:
    return run_case(case, prepare(folder, huge_bytes=50_000), timeout_s=30)


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[c.name])] if c.name in KNOWN else [])
     for c in COMMANDS],
    ids=[c.name for c in COMMANDS],
)  # fmt: skip
def test_generated_command_lines_keep_the_cli_contract(command: object, tmp_path: Path, sandboxed: None) -> None:
    outcomes = [_run(case, tmp_path / f"case{i}") for i, case in enumerate(draw_cases(command, CASES, SEED))]  # type: ignore[arg-type]
    assert all(o.ok for o in outcomes), describe(outcomes)


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_CASES[p.stem])] if p.stem in KNOWN_CASES
                  else []) for p in CORPUS],
    ids=[p.stem for p in CORPUS],
)  # fmt: skip
def test_failures_found_by_the_fuzzer_stay_fixed(path: Path, tmp_path: Path, sandboxed: None) -> None:
    outcome = _run(Case.from_json(json.loads(path.read_text(encoding="utf-8"))), tmp_path / "case")
    assert outcome.ok, outcome.report()


def test_every_command_is_fuzzed() -> None:
    names = {c.name for c in COMMANDS}
    assert {"place", "prompt", "fit", "count", "ask", "probe", "probe diff", "probe report", "bench", "chart",
            "report", "demo", "models", "index", "search", "rag", "code-context", "spend status"} <= names  # fmt: skip
    assert all(c.path for c in COMMANDS), "the bare group is not a command"


# -- the harness can fail: a command that breaks each rule is caught ------------------------------------------
def _broken(kind: str) -> None:
    if kind == "traceback":
        raise KeyError("task")
    if kind == "lines":
        typer.echo("Usage: litm broken\nError: two lines", err=True)
        raise typer.Exit(code=2)
    if kind == "partial":
        Path("out.jsonl").write_text('{"row": 1}\n{"row": 2', encoding="utf-8")
        return
    if kind == "status":
        raise typer.Exit(code=1)


@pytest.fixture(name="broken_command")
def broken_command_fixture() -> Iterator[str]:
    app.command("fuzz-broken")(lambda kind: _broken(kind))
    try:
        yield "fuzz-broken"
    finally:
        app.registered_commands[:] = [c for c in app.registered_commands if c.name != "fuzz-broken"]


@pytest.mark.parametrize(
    ("kind", "problem"),
    [("traceback", "traceback: KeyError"), ("lines", "stderr:"), ("partial", "partial file: out.jsonl"),
     ("status", "exit: status 1")],
)  # fmt: skip
def test_the_harness_reports_each_broken_rule(
    broken_command: str, kind: str, problem: str, tmp_path: Path, sandboxed: None
) -> None:
    assert broken_command in {c.name for c in commands()}, "a new command is picked up without listing it"
    outcome = _run(Case([broken_command, kind]), tmp_path / "case")
    assert not outcome.ok and any(p.startswith(problem) for p in outcome.problems), outcome.report()


def test_a_passing_case_passes(tmp_path: Path, sandboxed: None) -> None:
    outcome = _run(Case(["place", "docs.jsonl", "--strategy", "pyramid"]), tmp_path / "case")
    assert outcome.ok and outcome.exit_code == 0 and outcome.stdout.count("\n") == 6, outcome.report()


@pytest.mark.parametrize(
    ("argv", "stdin", "fragment"),
    [
        ([b"prompt", b"-q", b"caf\xe9?"], b'{"text": "a"}\n', "argument 3 is not UTF-8 text"),
        ([b"place"], b'{"text": "caf\xe9"}\n', "stdin: not UTF-8 text (byte 0xe9 at offset 13)"),
        ([b"place", b"--top-k", b"-1"], b"", "Invalid value for '--top-k'"),
    ],
    ids=["argv-bytes", "stdin-bytes", "usage-error"],
)
def test_a_real_process_keeps_the_contract_too(tmp_path: Path, argv: list[bytes], stdin: bytes, fragment: str) -> None:
    # The in-process runs stand in for undecodable argv with the surrogates Python makes of it: check one for real.
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"litm", *argv], input=stdin, capture_output=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )  # fmt: skip
    lines = proc.stderr.decode("utf-8", "replace").strip().split("\n")
    assert proc.returncode == 2 and len(lines) == 1 and fragment in lines[0], proc.stderr
