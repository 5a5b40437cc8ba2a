"""Damage to an index's files, and its repair: every damage is found with a typed error, `litm index` repairs it.

The corruption test truncates or flips bytes of each file of an index (manifest, chunks, vectors) at offsets
Hypothesis generates. Opening the damaged index must either raise :class:`CorruptIndexError` or read back
exactly what was written (a flip in the manifest's indentation changes nothing); then :func:`build_index`,
what `litm index` runs, must leave the index equal to one built from scratch, or name the file to delete.
The manifest parser gets property tests of its own: any JSON, and any well-formed manifest with one field
replaced, is a manifest or a typed error, never another exception.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from litm.errors import CorruptIndexError, IndexVersionError, LitmError
from litm.retrieve import Index, build_index, search
from litm.retrieve._store import MANIFEST, Entry, Settings, manifest_checksum, read_manifest, write_snapshot

FILES = {
    "keys.md": "# API keys\n\nRotate the API keys every 90 days in the admin console.",
    "food.txt": "The cafeteria opens at 8am and serves lunch until 2pm.",
    "kb/faq.jsonl": '{"id": "wifi", "text": "The guest wifi password is on the reception desk."}\n',
    # U+2028 and U+0085 stay unescaped in the chunks file's JSON: a reader splitting lines at them breaks.
    "web.txt": "Copied from a web page:\u2028the line separator\u0085and a next-line mark stay in the text.",
}


class HashEmbedder:
    """A small deterministic embedder (SHA-256 of the text): real vectors, fast enough for many examples."""

    name = "test-sha256-16"
    dim = 16

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        rows = np.array(
            [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) for t in texts], np.float32
        ).reshape(len(texts), self.dim)
        rows -= 127.5
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        out: NDArray[np.float32] = (rows / np.where(norms == 0, 1, norms)).astype(np.float32)
        return out


EMBEDDER = HashEmbedder()


def write_corpus(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A corpus and the index built from it, never changed: each example works on a copy of the index."""
    root = tmp_path_factory.mktemp("pristine")
    corpus = write_corpus(root / "docs")
    build_index(corpus, root / "index", embedder=EMBEDDER)
    yield corpus, root / "index"


def snapshot(index: Index) -> tuple[Any, ...]:
    """Everything an index holds, to compare two indexes."""
    vectors = index.vectors.tobytes() if index.has_vectors else None
    entries = {k: index._manifest.entries[k] for k in index.keys}
    return index.settings, entries, [c.to_record() for c in index.chunks], vectors


def data_file(folder: Path, prefix: str) -> Path:
    [path] = folder.glob(f"{prefix}-*")
    return path


def test_a_line_separator_inside_a_text_does_not_break_the_chunks_file(pristine: tuple[Path, Path]) -> None:
    _, index = pristine
    texts = [c.text for c in Index.open(index).chunks]
    assert any("\u2028" in t and "\u0085" in t for t in texts)


@st.composite
def damages(draw: st.DrawFn) -> tuple[str, str, float, int]:
    """Which file, how (truncate or flip), where (a fraction of the file's length), and the XOR mask."""
    which = draw(st.sampled_from([MANIFEST, "chunks", "vectors"]))
    how = draw(st.sampled_from(["truncate", "flip"]))
    where = draw(st.floats(min_value=0, max_value=1, exclude_max=True))
    mask = draw(st.integers(min_value=1, max_value=255))
    return which, how, where, mask


def damage(folder: Path, which: str, how: str, where: float, mask: int) -> Path:
    path = folder / MANIFEST if which == MANIFEST else data_file(folder, which)
    raw = bytearray(path.read_bytes())
    at = int(where * len(raw))
    if how == "truncate":
        del raw[at:]
    else:
        raw[at] ^= mask
    path.write_bytes(bytes(raw))
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hurt=damages())
def test_damage_to_any_file_is_found_and_litm_index_repairs_it(
    pristine: tuple[Path, Path], hurt: tuple[str, str, float, int]
) -> None:
    corpus, original = pristine
    expected = snapshot(Index.open(original))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "index"
        shutil.copytree(original, folder)
        damage(folder, *hurt)
        try:
            opened = Index.open(folder)
            opened.verify()
        except CorruptIndexError as exc:
            assert isinstance(exc, LitmError) and isinstance(exc, ValueError)
            assert exc.file is not None and exc.detail and f"--out {folder}" in str(exc)
            found = True
        else:
            # Undetected damage must be damage that changed nothing read (the manifest's whitespace).
            assert snapshot(opened) == expected
            found = False
        # The documented repair: run `litm index` again (what it runs is build_index).
        index, report = build_index(corpus, folder, embedder=EMBEDDER)
        assert bool(report.repairs) == found
        assert snapshot(Index.open(folder)) == snapshot(index) == expected
        assert [h.chunk.key for h in search(index, "API keys rotate", k=1, retriever="bm25")] == ["keys.md"]


@pytest.mark.parametrize(("which", "repair"), [("vectors", "embedded again"), ("chunks", "read and embedded again")])
def test_litm_index_no_longer_reports_success_over_a_damaged_file(tmp_path: Path, which: str, repair: str) -> None:
    corpus = write_corpus(tmp_path / "docs")
    build_index(corpus, tmp_path / "index", embedder=EMBEDDER)
    expected = snapshot(Index.open(tmp_path / "index"))
    damage(tmp_path / "index", which, "truncate", 0.5, 0)
    index, report = build_index(corpus, tmp_path / "index", embedder=EMBEDDER)
    [note] = report.repairs
    assert repair in note and report.summary().endswith("; 1 repaired")
    assert snapshot(index) == snapshot(Index.open(index.path)) == expected


def test_texts_added_from_python_lost_with_the_chunks_are_named(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    index, _ = build_index(corpus, tmp_path / "index", embedder=EMBEDDER)
    index.add_texts([{"id": "memo", "text": "A memo that only Python added."}])
    damage(index.path, "chunks", "flip", 0.3, 1)
    _, report = build_index(corpus, index.path, embedder=EMBEDDER)
    assert "1 texts added from Python were lost with it ('memo')" in report.repairs[0]


def test_a_damaged_manifest_among_foreign_files_names_the_file_to_delete(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    out = tmp_path / "index"
    build_index(corpus, out, embedder=EMBEDDER)
    (out / "notes-of-mine.txt").write_text("not litm's")
    (out / MANIFEST).write_text("{")
    with pytest.raises(CorruptIndexError, match=f"notes-of-mine.txt\\): move them out of {out} and run") as info:
        build_index(corpus, out, embedder=EMBEDDER)
    assert info.value.file == MANIFEST and (out / MANIFEST).read_text() == "{"
    (out / "notes-of-mine.txt").rename(tmp_path / "notes-of-mine.txt")
    index, report = build_index(corpus, out, embedder=EMBEDDER)
    assert report.repairs and snapshot(index)[2] == snapshot(Index.open(out))[2]


def test_a_damaged_manifest_alone_names_the_file_to_delete(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    out = tmp_path / "index"
    out.mkdir()
    (out / MANIFEST).write_text('{"some": "other tool"}')
    with pytest.raises(CorruptIndexError, match=f"delete {out / MANIFEST} and run `litm index` again"):
        build_index(corpus, out, embedder=EMBEDDER)
    (out / MANIFEST).unlink()
    _, report = build_index(corpus, out, embedder=EMBEDDER)
    assert len(report.added) == len(FILES)


def test_a_newer_format_version_is_not_overwritten(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    out = tmp_path / "index"
    build_index(corpus, out, embedder=EMBEDDER)
    raw = json.loads((out / MANIFEST).read_text())
    raw["version"] = 2
    raw["checksum"] = manifest_checksum(raw)
    (out / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(IndexVersionError, match="format version 2"):
        build_index(corpus, out, embedder=EMBEDDER)
    assert json.loads((out / MANIFEST).read_text())["version"] == 2


# -- the manifest parser ------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def parse(folder: Path, text: str | bytes) -> object:
    """read_manifest on ``text``: the Manifest, or the typed error it raised (anything else fails the test)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_bytes(text.encode() if isinstance(text, str) else text)
    try:
        return read_manifest(folder)
    except (CorruptIndexError, IndexVersionError) as exc:
        assert isinstance(exc, LitmError) and isinstance(exc, ValueError)
        assert str(folder) in str(exc) and "\n" not in str(exc)
        return exc


@settings(max_examples=150, deadline=None)
@given(value=json_values)
def test_any_json_is_a_manifest_or_a_typed_error(value: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        assert isinstance(parse(Path(tmp), json.dumps(value)), (CorruptIndexError, IndexVersionError))


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300))
def test_any_bytes_are_a_manifest_or_a_typed_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        assert isinstance(parse(Path(tmp), data), (CorruptIndexError, IndexVersionError))


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"format": Infinity, "checksum": "x"}', "\ufeff{}"])
def test_json_python_cannot_take_or_litm_never_writes_is_a_typed_error(tmp_path: Path, text: str) -> None:
    assert isinstance(parse(tmp_path, text), CorruptIndexError)


def valid_manifest(folder: Path) -> dict[str, Any]:
    settings_ = Settings(max_tokens=64, overlap=8, tokenizer="minilm-wordpiece", embedding="m", dim=4)
    entry = Entry("file", "a" * 64, 10, 1, 0)
    write_snapshot(folder, settings_, {"a.md": entry}, [], np.zeros((0, 4), np.float32))
    raw: dict[str, Any] = json.loads((folder / MANIFEST).read_text())
    return raw


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON object."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += paths(inner, (*prefix, key))
    return out


@settings(max_examples=150, deadline=None)
@given(data=st.data(), replacement=json_values)
def test_a_manifest_with_any_field_replaced_is_read_or_refused(data: st.DataObject, replacement: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        raw = valid_manifest(folder)
        where = data.draw(st.sampled_from([p for p in paths(raw) if p != ("checksum",)]))
        target = raw
        for key in where[:-1]:
            target = target[key]
        target[where[-1]] = replacement
        raw["checksum"] = manifest_checksum(raw)  # the checksum matches: the field checks must hold alone
        result = parse(folder, json.dumps(raw))
        if not isinstance(result, LitmError):
            # Accepted: then every field has the type and range the index relies on.
            manifest = read_manifest(folder)
            assert all(isinstance(v, int) and v >= 0 for v in (manifest.chunks.size, manifest.chunks.rows))
            assert all(e.kind in ("file", "text") and e.chunks >= 0 for e in manifest.entries.values())
            assert (manifest.vectors is None) == (manifest.settings.dim is None)


@settings(max_examples=60, deadline=None)
@given(
    entries=st.dictionaries(
        st.text(min_size=1, max_size=30),
        st.builds(
            Entry,
            kind=st.sampled_from(["file", "text"]),
            sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
            size=st.integers(0, 2**62),
            mtime_ns=st.integers(-(2**62), 2**62),
            chunks=st.just(0),
        ),
        max_size=5,
    ),
    max_tokens=st.integers(1, 10_000),
    dense=st.booleans(),
)
def test_a_written_manifest_reads_back_the_same(entries: dict[str, Entry], max_tokens: int, dense: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s = Settings(max_tokens, 0, "minilm-wordpiece", "m" if dense else None, 8 if dense else None)
        write_snapshot(Path(tmp), s, entries, [], np.zeros((0, 8), np.float32) if dense else None)
        manifest = read_manifest(tmp)
        assert manifest.settings == s and dict(manifest.entries) == entries


def test_data_files_left_by_a_deleted_manifest_do_not_block_a_new_build(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    out = tmp_path / "index"
    build_index(corpus, out, embedder=EMBEDDER)
    (out / MANIFEST).unlink()  # what the advice for an unrecognisable manifest leads to
    stale = {p.name for p in out.iterdir()}
    index, report = build_index(corpus, out, embedder=EMBEDDER)
    assert len(report.added) == len(FILES) and not report.repairs
    assert {p.name for p in out.iterdir()} == {MANIFEST, *stale}  # the same content, the same file names
    assert snapshot(Index.open(out)) == snapshot(index)
