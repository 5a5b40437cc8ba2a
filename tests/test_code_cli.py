"""``litm code-context`` end to end, and every bad input as a typed error in Python and exit 2 in the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from code_fixtures import DATA
from litm import errors
from litm.code import code_context
from litm.tokens import Tokenizer


def cli(*args: str, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "litm", "code-context", *args, "--model", "openai:gpt-4", "--root", str(root)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_cli_text_and_json(json_root: Path, gpt4: Tokenizer) -> None:
    proc = cli("json/decoder.py::JSONDecoder.raw_decode", "--budget", "700", root=json_root)
    assert proc.returncode == 0, proc.stderr
    tokens = gpt4.count(proc.stdout[:-1])  # stdout ends with one newline
    assert tokens <= 700 and "def raw_decode(self, s, idx=0):" in proc.stdout
    summary = proc.stderr.splitlines()[0]
    assert summary.startswith(f"litm code-context: {tokens}/700 tokens, exact resolution, kept ")
    proc = cli("json/decoder.py::JSONDecoder.raw_decode", "--budget", "700", "--format", "json", root=json_root)
    data = json.loads(proc.stdout)
    assert data["tokens"] == tokens and data["pieces"][0]["kind"] == "target" and data["resolution"] == "exact"
    assert {p["qualname"] for p in data["pieces"] if p["kind"] == "caller"} == {"JSONDecoder.decode"}


def test_cli_markdown_for_go() -> None:
    proc = cli("go/persistent-https/client.go::Client.connect", "--budget", "2000", "--format", "markdown",
               root=DATA)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "```go\nfunc (c *Client) connect()" in proc.stdout and "name resolution" in proc.stderr


# (target, root, budget, exception class, built-in it also is, message fragment)
BAD = [
    ("json/nope.py::f", "json", 100, errors.CodeFileNotFoundError, FileNotFoundError, "no such file: json/nope.py"),
    ("json/decoder.py::raw_decod", "json", 100, errors.CodeTargetNotFoundError, LookupError,
     "did you mean JSONDecoder.raw_decode"),
    ("json/decoder.py::__init__", "json", 100, errors.AmbiguousCodeTargetError, LookupError, "matches 2 definitions"),
    ("locale.py::setlocale", "json", 100, errors.AmbiguousCodeTargetError, LookupError, "matches 2 definitions"),
    ("json/decoder.py:2", "json", 100, errors.CodeTargetNotFoundError, LookupError, "outside every function"),
    ("json/decoder.py:99999", "json", 100, errors.CodeTargetNotFoundError, LookupError, "is not in it"),
    ("json/decoder.py::JSONDecoder", "json", 50, errors.CodeTargetTooLargeError, ValueError, "alone needs"),
    ("json/decoder.py", "json", 100, errors.InvalidOptionError, ValueError, "names no function"),
    ("js/ms/license.md::x", "data", 100, errors.UnsupportedLanguageError, ValueError, "no parser for '.md'"),
]  # fmt: skip


@pytest.mark.parametrize(("target", "where", "budget", "cls", "builtin", "fragment"), BAD,
                         ids=[b[0] for b in BAD])  # fmt: skip
def test_bad_input(json_root: Path, gpt4: Tokenizer, target: str, where: str, budget: int,
                   cls: type[Exception], builtin: type[Exception], fragment: str) -> None:  # fmt: skip
    root = json_root if where == "json" else DATA
    with pytest.raises(cls, match=fragment.replace("(", r"\(").replace(".", r"\.")) as info:
        code_context(root, target, budget=budget, counter=gpt4)
    assert isinstance(info.value, builtin) and isinstance(info.value, errors.LitmError)
    proc = cli(target, "--budget", str(budget), root=root)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr


def test_syntax_error_and_missing_root(tmp_path: Path, gpt4: Tokenizer) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    with pytest.raises(errors.CodeParseError, match=r"broken\.py: line 1 cannot be parsed"):
        code_context(tmp_path, "broken.py::f", budget=100, counter=gpt4)
    with pytest.raises(errors.CodeFileNotFoundError, match="is not a directory"):
        code_context(tmp_path / "absent", "a.py::f", budget=100, counter=gpt4)
    with pytest.raises(errors.LitmError, match="budget must be a positive number"):
        code_context(DATA, "js/ms/index.js::plural", budget=0, counter=gpt4)
