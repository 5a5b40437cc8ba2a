"""Where code context looks for callers: never nowhere in silence.

A target's own file is always searched, wherever the file lies (outside the root, in a ``site-packages`` or
hidden folder the walk of the root skips). A target outside the root is searched under its repository root,
or, with none above it, in its own file only, and the result says which.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from code_fixtures import DATA, STDLIB
from litm.code import CodeOptions, code_context
from litm.code._context import REPOSITORY_MARKERS, repository_root
from litm.tokens import Tokenizer

TARGET = "JSONDecoder.raw_decode"
SAME_FILE_CALLER = "JSONDecoder.decode"


def place_decoder(folder: Path, package: str = "json") -> Path:
    """A copy of the standard library's json/decoder.py at ``folder/package/decoder.py``."""
    (folder / package).mkdir(parents=True)
    return Path(shutil.copy2(STDLIB / "json" / "decoder.py", folder / package / "decoder.py"))


def callers(ctx: object) -> set[str | None]:
    return {p.qualname for p in ctx.pieces if p.kind == "caller"}  # type: ignore[attr-defined]


def test_a_target_outside_the_root_with_no_repository_searches_its_own_file(tmp_path: Path, gpt4: Tokenizer) -> None:
    target = place_decoder(tmp_path / "copy")
    assert repository_root(target) is None  # nothing above the temporary folder marks a repository
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ctx = code_context(elsewhere, f"{target}::{TARGET}", budget=3000, counter=gpt4)
    assert SAME_FILE_CALLER in callers(ctx) and ctx.resolution == "exact"
    assert ctx.searched == target.resolve().as_posix()
    [note] = ctx.notes
    assert "lies outside the root" in note and "searched in its own file only" in note


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git", "setup.py", "package.json"])
def test_a_target_outside_the_root_is_searched_under_its_repository(
    tmp_path: Path, gpt4: Tokenizer, marker: str
) -> None:
    repo = tmp_path / "repo"
    target = place_decoder(repo, "mylib")
    if marker == ".git":
        (repo / marker).mkdir()
    else:
        (repo / marker).write_text("")
    (repo / "use.py").write_text(
        "from mylib.decoder import JSONDecoder\n\n\ndef first(text):\n    return JSONDecoder().raw_decode(text)[0]\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ctx = code_context(elsewhere, f"{target}::{TARGET}", budget=3000, counter=gpt4)
    assert {SAME_FILE_CALLER, "first"} <= callers(ctx)
    assert ctx.searched == repo.resolve().as_posix() and str(repo.resolve()) in ctx.notes[0]
    assert marker in REPOSITORY_MARKERS


@pytest.mark.parametrize("folder", ["site-packages", "node_modules", ".venv/lib", ".hidden"])
def test_the_targets_own_file_is_searched_when_the_walk_skips_its_folder(
    tmp_path: Path, gpt4: Tokenizer, folder: str
) -> None:
    target = place_decoder(tmp_path / folder)
    ctx = code_context(tmp_path, f"{target.relative_to(tmp_path)}::{TARGET}", budget=3000, counter=gpt4)
    assert SAME_FILE_CALLER in callers(ctx) and ctx.notes == ()
    assert ctx.searched == tmp_path.resolve().as_posix()


def test_name_resolution_searches_the_targets_own_file_too(tmp_path: Path, gpt4: Tokenizer) -> None:
    source = DATA / "js" / "ms" / "index.js"
    target = Path(shutil.copy2(source, tmp_path / "index.js"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ctx = code_context(elsewhere, f"{target}::plural", budget=3000, counter=gpt4)
    inside = code_context(source.parent, "index.js::plural", budget=3000, counter=gpt4)
    assert callers(ctx) == callers(inside) and callers(ctx)  # the same callers as with the right root
    assert ctx.resolution == "name" and ctx.notes


def test_the_command_line_names_where_callers_were_searched(tmp_path: Path) -> None:
    target = place_decoder(tmp_path / "copy")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "code-context", f"{target}::{TARGET}", "--budget", "3000", "--format", "json",
         "--model", "openai:gpt-4"],
        capture_output=True, text=True, timeout=300, cwd=elsewhere,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert SAME_FILE_CALLER in {p["qualname"] for p in data["pieces"] if p["kind"] == "caller"}
    assert data["searched"] == target.resolve().as_posix() and data["notes"]
    assert proc.stderr.splitlines()[1].startswith(f"note: {target.resolve()} lies outside the root ")


@pytest.mark.parametrize("resolution", ["exact", "name"])
def test_files_that_name_the_target_but_do_not_parse_are_reported(
    tmp_path: Path, gpt4: Tokenizer, resolution: str
) -> None:
    place_decoder(tmp_path)
    (tmp_path / "old.py").write_text("print 'python 2'\nresult = decoder.raw_decode(text)\n")
    (tmp_path / "unrelated.py").write_text("def broken(:\n")  # does not name the target: not worth a note
    ctx = code_context(tmp_path, f"json/decoder.py::{TARGET}", budget=3000, counter=gpt4,
                       options=CodeOptions(resolution=resolution))
    assert SAME_FILE_CALLER in callers(ctx)
    assert ctx.notes == ("1 files that name 'raw_decode' could not be parsed, so they were not searched for "
                         "callers: old.py",)  # fmt: skip


def test_code_options_are_checked_before_any_file_is_read() -> None:
    from litm.errors import InvalidOptionError, InvalidOptionTypeError

    with pytest.raises(InvalidOptionError, match="max_sites must be a non-negative integer"):
        CodeOptions(max_sites=-1)
    with pytest.raises(InvalidOptionError, match="resolution must be"):
        CodeOptions(resolution="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionTypeError, match="options must be a CodeOptions, got dict"):
        code_context("/nonexistent", "x.py::f", budget=10, counter=len, options={"resolution": "name"})  # type: ignore[arg-type]
    assert isinstance(CodeOptions(max_sites=None), CodeOptions)
