"""``litm index`` and ``litm search``: a fresh process per call, so the index is read back after a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def litm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "litm", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env=env,
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cli")
    docs = root / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text("# API keys\n\nRotate the API keys every 90 days in the admin console.\n")
    (docs / "food.txt").write_text("The cafeteria serves lunch until 2pm.\n")
    record = {"id": "wifi", "title": "Wifi", "text": "The guest wifi password is at reception."}
    (docs / "kb.jsonl").write_text(json.dumps(record) + "\n")
    out = litm("index", str(docs), "--out", str(root / "index"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("3 added, 0 updated, 0 removed, 0 unchanged; 3 chunks (3 embedded)")
    # Not a terminal: progress comes as plain lines on stderr.
    assert "index files: 3/3 (100%)" in out.stderr and "index embed: 3/3 (100%)" in out.stderr
    return docs, root / "index"


def test_reindexing_reports_everything_unchanged(indexed: tuple[Path, Path]) -> None:
    docs, index = indexed
    out = litm("index", str(docs), "--out", str(index), "--no-progress")
    assert out.returncode == 0 and out.stderr == ""
    assert "0 added, 0 updated, 0 removed, 3 unchanged; 3 chunks (0 embedded)" in out.stdout


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_search_prints_ranked_hits_with_their_source_and_offsets(indexed: tuple[Path, Path], retriever: str) -> None:
    _, index = indexed
    out = litm("search", str(index), "how often do API keys change?", "--k", "2", "--retriever", retriever)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("  1. ") and "keys.md [0:" in lines[0] and "API keys" in lines[0]
    assert lines[1].strip().startswith("# API keys Rotate the API keys")
    # BM25 returns only chunks sharing a word with the query; here that is keys.md alone.
    assert sum(line.startswith("  2. ") for line in lines) == (0 if retriever == "bm25" else 1)


def test_search_json_pipes_into_place(indexed: tuple[Path, Path]) -> None:
    _, index = indexed
    out = litm("search", str(index), "guest wifi password", "--json", "-k", "3", "--rerank")
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert records[0]["id"] == "kb.jsonl#wifi#0" and records[0]["source"] == "kb.jsonl"
    assert records[0]["metadata"]["retriever"] == "hybrid+dense-rerank"
    assert records[0]["metadata"]["higher_is_better"] is True
    placed = litm("place", "--strategy", "edges", "--rank-by", "score", stdin=out.stdout)
    assert placed.returncode == 0, placed.stderr
    assert json.loads(placed.stdout.splitlines()[0])["id"] == "kb.jsonl#wifi#0"


def test_errors_exit_2_with_one_line(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    docs, _ = indexed
    missing = litm("search", str(tmp_path / "nothing"), "q")
    assert missing.returncode == 2 and missing.stderr.startswith("litm: error: no index at")
    assert len(missing.stderr.strip().splitlines()) == 1
    lexical = tmp_path / "lexical"
    assert litm("index", str(docs), "--out", str(lexical), "--no-dense", "--no-progress").returncode == 0
    dense = litm("search", str(lexical), "q", "--retriever", "dense")
    assert dense.returncode == 2 and "no dense vectors" in dense.stderr
    mismatch = litm("index", str(docs), "--out", str(lexical), "--max-tokens", "64", "--no-progress")
    assert mismatch.returncode == 2 and "was built with chunks of 256 tokens" in mismatch.stderr
    (lexical / "manifest.json").write_text("{")
    corrupt = litm("search", str(lexical), "q")
    assert corrupt.returncode == 2 and "not valid JSON" in corrupt.stderr
