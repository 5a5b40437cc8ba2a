"""Input that is not what it claims: binary files with text names, folders with nothing to index, blank queries,
fewer hits than asked for. Each is refused or reported, never indexed or answered as if it were fine."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litm.errors import InputFormatError, LitmError, RetrievalError
from litm.models import load_model
from litm.rag import Pipeline
from litm.retrieve import BM25, Dense, Hybrid, Index, build_index
from litm.retrieve._formats import EXTENSIONS, UnreadableFileError, not_text, read_bytes
from litm.retrieve._rerank import DenseReranker, Reranked
from litm.retrieve._retrievers import make_retriever, shortfall

TEXT_FORMATS = sorted(set(EXTENSIONS) - {".pdf"})


def litm(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "litm", *args], capture_output=True, text=True, encoding="utf-8", timeout=120, env=env
    )


# -- what counts as text ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(256, 8192), suffix=st.sampled_from(TEXT_FORMATS))
def test_random_bytes_are_never_text(seed: int, size: int, suffix: str) -> None:
    data = random.Random(seed).randbytes(size)
    assert not_text(data) is not None
    assert not_text(data.replace(b"\x00", b"")) is not None  # without NUL bytes too
    with pytest.raises(UnreadableFileError, match=f"^data{suffix}: not text: ") as info:
        read_bytes(data, f"data{suffix}")
    assert isinstance(info.value, InputFormatError) and isinstance(info.value, ValueError)


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cc", "Cs")) | st.sampled_from("\t\n\r\f\x1b")))
def test_any_utf8_text_is_text(text: str) -> None:
    assert not_text(text.encode("utf-8")) is None
    assert not_text(("\ufeff" + text).encode("utf-8")) is None  # a BOM too


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x7fELF\x02\x01\x01" + bytes(200), "NUL bytes"),  # a program's header
        ("UTF-16 text".encode("utf-16"), "UTF-16"),
        (b"\x1f\x8b\x08\x08\x01\x02\x03\x04\x05\x06\x07" * 20, "control characters"),
        ("Ελληνικά κείμενα εδώ".encode("iso-8859-7"), "not valid UTF-8"),
    ],
)
def test_binary_and_undecodable_bytes_say_why(data: bytes, reason: str) -> None:
    assert reason in (not_text(data) or "")


def test_a_few_stray_bytes_in_text_are_still_text() -> None:
    assert not_text("Un café crème, s'il vous plaît.".encode("latin-1")) is None
    assert not_text("Literal \ufffd replacement characters \ufffd\ufffd\ufffd stay text.".encode()) is None


def test_the_program_and_the_random_bytes_of_the_issue_are_skipped_with_a_warning(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copyfile(sys.executable, docs / "notes.txt")
    (docs / "data.md").write_bytes(random.Random(7).randbytes(4000))
    (docs / "keys.md").write_text("# Keys\n\nRotate the API keys every 90 days.\n")
    index, report = build_index(docs, tmp_path / "index", dense=False)
    assert index.keys == ("keys.md",) and len(index) == 1
    assert [key for key, _ in report.unreadable] == ["data.md", "notes.txt"]
    assert report.summary().endswith("; 2 skipped as not text")
    out = litm("index", str(docs), "--out", str(tmp_path / "cli-index"), "--no-dense", "--no-progress")
    assert out.returncode == 0, out.stderr
    warnings = out.stderr.splitlines()
    assert warnings[0].startswith("litm: warning: skipped data.md: not text: ")
    assert warnings[1].startswith("litm: warning: skipped notes.txt: not text: it contains NUL bytes")


def test_a_file_that_turns_binary_is_dropped_from_the_index(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha text.")
    (docs / "b.txt").write_text("Beta text.")
    index, _ = build_index(docs, tmp_path / "index", dense=False)
    (docs / "b.txt").write_bytes(bytes(range(256)))
    report = index.sync(docs)
    assert report.removed == ("b.txt",) and index.keys == ("a.txt",) and report.unreadable[0][0] == "b.txt"


# -- nothing to index ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "is empty: nothing to index"),
        ({"image.png": b"\x89PNG", "data.csv": b"a,b\n"}, "holds no file litm can index (2 files of other types"),
        ({"notes.txt": bytes(range(256))}, "nothing to index: none of its 1 files is text (notes.txt: not text"),
        ({"empty.md": b"", "blank.txt": b"\n\n"}, "holds no text to index: its 2 files are empty"),
    ],
)
def test_a_folder_with_nothing_to_index_is_an_error_and_leaves_no_index(
    tmp_path: Path, files: dict[str, bytes], message: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, data in files.items():
        (docs / name).write_bytes(data)
    with pytest.raises(InputFormatError, match=re.escape(message)):
        build_index(docs, tmp_path / "index", dense=False)
    assert not (tmp_path / "index").exists()
    out = litm("index", str(docs), "--out", str(tmp_path / "index"), "--no-progress")
    assert out.returncode == 2 and out.stdout == "" and message in out.stderr
    assert out.stderr.startswith("litm: error: ") and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "index").exists()


def test_an_existing_index_is_kept_when_its_folder_empties(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha text.")
    build_index(docs, tmp_path / "index", dense=False)
    (docs / "a.txt").unlink()
    with pytest.raises(InputFormatError, match="is empty"):
        build_index(docs, tmp_path / "index", dense=False)
    assert Index.open(tmp_path / "index").keys == ("a.txt",)


# -- searching ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = tmp_path_factory.mktemp("three")
    docs = root / "docs"
    docs.mkdir()
    for name, text in [("keys", "Rotate the API keys."), ("food", "Lunch is at noon."), ("vpn", "Install the VPN.")]:
        (docs / f"{name}.txt").write_text(text)
    index, _ = build_index(docs, root / "index")
    return index


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_is_refused_by_every_retriever(three: Index, query: str) -> None:
    retrievers: list[Any] = [BM25(three), Dense(three), Hybrid([BM25(three), Dense(three)])]
    retrievers.append(Reranked(BM25(three), DenseReranker(three)))
    for retriever in retrievers:
        with pytest.raises(RetrievalError, match="the query is empty"):
            retriever.search(query, 5)
    out = litm("search", str(three.path), query)
    assert out.returncode == 2 and out.stdout == "" and "the query is empty" in out.stderr


def test_fewer_hits_than_k_say_why(three: Index) -> None:
    out = litm("search", str(three.path), "rotate keys", "--k", "5")
    assert out.returncode == 0 and out.stdout.count("\n     ") == 3
    assert out.stderr.strip() == "3 of 5 hits: the index holds only 3 chunks"
    lexical = litm("search", str(three.path), "rotate keys", "--k", "2", "--retriever", "bm25", "--json")
    assert len(lexical.stdout.splitlines()) == 1
    assert lexical.stderr.strip() == (
        "1 of 2 hits: only 1 of the index's 3 chunks share a word with the query (bm25 skips chunks that score 0)"
    )
    assert shortfall(make_retriever(three), 3, 3) is None


def test_rag_on_an_empty_index_says_the_index_is_empty(tmp_path: Path) -> None:
    empty = Index.create(tmp_path / "empty", dense=False)
    model = load_model("openai:gpt-4o-mini", api_key="sk-test")  # no request is sent: retrieval fails first
    with pytest.raises(RetrievalError, match=f"the index {empty.path} is empty: nothing to answer from") as info:
        Pipeline.from_index(empty, model=model).prepare("What is the capital of France?")
    assert isinstance(info.value, LitmError)
    assert shortfall(make_retriever(empty), 5, 0) == f"the index {empty.path} is empty"
    assert json.dumps(str(info.value))  # one line
