"""The on-disk index: survives a restart, re-reads nothing unchanged, refuses damaged files with typed errors."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from litm.errors import (
    CorruptIndexError,
    IndexMismatchError,
    IndexNotFoundError,
    IndexVersionError,
    LitmError,
    RetrievalError,
)
from litm.retrieve import BM25, Dense, Index, build_index
from litm.retrieve import _store as store_module
from litm.retrieve._embedder import MiniLM, MiniLMTokenizer
from litm.retrieve._store import MANIFEST, manifest_checksum
from test_retrieve_formats import make_pdf

FILES = {
    "keys.md": "# API keys\n\nRotate the API keys every 90 days in the admin console.\n\n"
    "Old keys stop working after a grace period of one week.",
    "food.txt": "The cafeteria opens at 8am and serves lunch until 2pm.",
    "vpn.html": "<html><head><title>VPN</title></head><body><p>Install the VPN client, then sign in.</p></body></html>",
    "kb/faq.jsonl": '{"id": "wifi", "text": "The guest wifi password is on the reception desk."}\n'
    '{"id": "parking", "text": "Parking permits are issued by facilities."}\n',
}


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch, corpus: Path) -> Counter[str]:
    """Counts every read of a corpus file (the index reads files only through Path.read_bytes)."""
    counts: Counter[str] = Counter()
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        if corpus in self.parents:
            counts[self.relative_to(corpus).as_posix()] += 1
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    return counts


def build(corpus: Path, model: MiniLM, **kwargs: object) -> Index:
    index, _ = build_index(corpus, corpus.parent / "index", embedder=model, **kwargs)  # type: ignore[arg-type]
    return index


def test_index_survives_a_restart(corpus: Path, model: MiniLM) -> None:
    index, report = build_index(corpus, corpus.parent / "index", embedder=model)
    assert report.added == ("food.txt", "kb/faq.jsonl", "keys.md", "vpn.html")
    assert report.read == 4 and report.embedded == len(index) == 5
    reopened = Index.open(index.path, embedder=model)
    assert [c.to_record() for c in reopened.chunks] == [c.to_record() for c in index.chunks]
    np.testing.assert_array_equal(reopened.vectors, index.vectors)
    assert reopened.keys == index.keys
    hits = Dense(reopened).search("how often do credentials change?", k=1)
    assert hits[0].chunk.source == "keys.md"


def test_chunks_keep_sources_titles_and_offsets(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    by_key = {c.key: c for c in index.chunks}
    keys = by_key["keys.md"]
    assert keys.title == "API keys" and keys.source == "keys.md"
    assert FILES["keys.md"][keys.start : keys.end] == keys.text
    wifi = by_key["kb/faq.jsonl#wifi"]
    assert (wifi.id, wifi.source, wifi.metadata["line"]) == ("kb/faq.jsonl#wifi#0", "kb/faq.jsonl", 1)
    assert by_key["vpn.html"].title == "VPN"
    # Titles are searched and embedded with every chunk, never shown as part of its text.
    assert keys.prefix == "API keys\n\n" and keys.indexed_text == "API keys\n\n" + keys.text
    assert by_key["kb/faq.jsonl#wifi"].prefix == ""  # a record without a title
    assert by_key["food.txt"].prefix == "food\n\n"  # a text file is titled by its name
    assert Dense(index).search("API keys", 1)[0].doc.text == keys.text


def test_title_prefix_fits_in_the_chunk_limit(tmp_path: Path) -> None:
    long_text = " ".join(f"Sentence {i} explains one more detail of the procedure." for i in range(60))
    index = Index.create(tmp_path / "i", dense=False, max_tokens=64, overlap=8)
    index.add_texts(
        [
            {"id": "short", "title": "Key rotation procedure", "text": long_text},
            {"id": "long", "title": " ".join(["Very long title"] * 10), "text": long_text},
        ]
    )
    tok = MiniLMTokenizer()
    for chunk in index.chunks:
        assert chunk.tokens == tok.count(chunk.indexed_text) <= 64
    assert {c.prefix for c in index.chunks if c.key == "short"} == {"Key rotation procedure\n\n"}
    assert {c.prefix for c in index.chunks if c.key == "long"} == {""}  # over a quarter of the limit: left out


def test_reindexing_an_unchanged_folder_reads_no_file(corpus: Path, model: MiniLM, reads: Counter[str]) -> None:
    index = build(corpus, model)
    assert reads == Counter({rel: 1 for rel in FILES})  # the first build reads each file exactly once
    manifest_mtime = (index.path / MANIFEST).stat().st_mtime_ns
    reads.clear()
    report = build(corpus, model).sync(corpus)
    assert reads == Counter() and report.read == 0
    assert not report.changed and report.embedded == 0 and len(report.unchanged) == 4
    assert (index.path / MANIFEST).stat().st_mtime_ns == manifest_mtime  # nothing rewritten either


def test_touched_file_is_read_once_and_not_reembedded(corpus: Path, model: MiniLM, reads: Counter[str]) -> None:
    index = build(corpus, model)
    before = index.vectors.copy()
    reads.clear()
    st = (corpus / "food.txt").stat()
    os.utime(corpus / "food.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    report = index.sync(corpus)
    assert reads == Counter({"food.txt": 1})
    assert report.unchanged == tuple(sorted(FILES)) and report.embedded == 0
    np.testing.assert_array_equal(index.vectors, before)
    reads.clear()
    assert index.sync(corpus).read == 0 and reads == Counter()  # the new mtime was recorded


def test_changed_added_and_deleted_files(corpus: Path, model: MiniLM, reads: Counter[str]) -> None:
    index = build(corpus, model)
    old_rows = {c.id: index.vectors[i].copy() for i, c in enumerate(index.chunks)}
    reads.clear()
    (corpus / "food.txt").write_text("The cafeteria now opens at 7am. Breakfast is free on Fridays.")
    (corpus / "new.rst").write_text("Badges\n======\n\nLost badges are replaced at the security office.\n")
    (corpus / "vpn.html").unlink()
    report = index.sync(corpus)
    assert (report.added, report.updated, report.removed) == (("new.rst",), ("food.txt",), ("vpn.html",))
    assert reads == Counter({"food.txt": 1, "new.rst": 1})
    assert report.embedded == 2 and len(index) == 6 - 1
    assert "vpn.html" not in {c.source for c in index.chunks}
    for i, chunk in enumerate(index.chunks):  # kept chunks keep their exact vectors; new ones are embedded
        if chunk.key in ("keys.md", "kb/faq.jsonl#wifi", "kb/faq.jsonl#parking"):
            np.testing.assert_array_equal(index.vectors[i], old_rows[chunk.id])
    np.testing.assert_allclose(index.vectors, model.embed([c.indexed_text for c in index.chunks]), atol=1e-6)
    assert BM25(index).search("free breakfast", k=1)[0].chunk.key == "food.txt"
    assert Index.open(index.path).keys == ("food.txt", "kb/faq.jsonl", "keys.md", "new.rst")


def test_texts_from_python_are_added_replaced_removed_and_survive_a_sync(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    report = index.add_texts([{"id": "memo", "text": "The office closes early on Friday.", "title": "Memo"}])
    assert report.added == ("memo",) and report.embedded == 1
    same = {"id": "memo", "text": "The office closes early on Friday.", "title": "Memo"}
    assert index.add_texts([same]).changed is False
    assert index.add_texts([{**same, "title": "Notice"}]).updated == ("memo",)  # a new title is an update
    assert {c.key: c.title for c in index.chunks}["memo"] == "Notice"
    assert index.add_texts([{"id": "memo", "text": "The office is closed on Monday."}]).updated == ("memo",)
    assert index.sync(corpus).removed == ()  # a sync mirrors the folder's files and keeps Python texts
    assert index.remove(["memo", "food.txt"]).removed == ("food.txt", "memo")
    assert "memo" not in Index.open(index.path).keys
    with pytest.raises(RetrievalError, match="no entries 'nope'"):
        index.remove(["nope"])


def test_pdf_chunks_know_their_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.pdf").write_bytes(make_pdf(["Keys are rotated yearly.", "Badges are blue."]))
    index, _ = build_index(docs, tmp_path / "index", dense=False, max_tokens=10, overlap=0)
    pages = {c.text: c.metadata["page"] for c in index.chunks}
    assert pages == {"Keys are rotated yearly.": 1, "Badges are blue.": 2}


def test_an_index_inside_the_corpus_does_not_index_itself(corpus: Path) -> None:
    index, _ = build_index(corpus, corpus / "my-index", dense=False)
    again = index.sync(corpus)
    assert not again.changed and not any(k.startswith("my-index") for k in index.keys)


def test_settings_must_match_to_update(corpus: Path, model: MiniLM) -> None:
    build(corpus, model)
    with pytest.raises(IndexMismatchError, match="chunks of 256 tokens"):
        build(corpus, model, max_tokens=128)
    with pytest.raises(IndexMismatchError, match="vectors"):
        build(corpus, model, dense=False)


def test_custom_tokenizer_is_required_again_for_updates(corpus: Path, tmp_path: Path) -> None:
    def words(text: str) -> int:
        return len(text.split())

    index, _ = build_index(corpus, tmp_path / "w", dense=False, tokenizer=words, max_tokens=5, overlap=0)
    assert index.settings.tokenizer == "test_custom_tokenizer_is_required_again_for_updates.<locals>.words"
    assert all(words(c.text) <= 5 for c in index.chunks)
    (corpus / "food.txt").write_text("Changed text here.")
    with pytest.raises(IndexMismatchError, match="pass the same one"):
        Index.open(index.path).sync(corpus)
    assert Index.open(index.path, tokenizer=words).sync(corpus).updated == ("food.txt",)


def test_a_folder_that_is_not_an_index_is_not_overwritten(corpus: Path) -> None:
    with pytest.raises(RetrievalError, match="not an index"):
        build_index(corpus, corpus / "kb", dense=False)
    with pytest.raises(RetrievalError, match="already exists"):
        Index.create(build_index(corpus, corpus.parent / "i", dense=False)[0].path)


# -- damage: every case is a typed error, never a result ------------------------------------------------


def data_file(index: Index, prefix: str) -> Path:
    [path] = index.path.glob(f"{prefix}-*")
    return path


def assert_typed(error: BaseException, builtin: type[BaseException] = ValueError) -> None:
    assert isinstance(error, LitmError) and isinstance(error, builtin)


def test_missing_index_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError) as info:
        Index.open(tmp_path / "nothing")
    assert_typed(info.value, FileNotFoundError)


def test_truncated_vectors_are_refused_on_open(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    path = data_file(index, "vectors")
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(CorruptIndexError, match="truncated") as info:
        Index.open(index.path, embedder=model)  # the size is checked on open, the hash on first use
    assert_typed(info.value)
    assert info.value.file == path.name


def test_vectors_swapped_for_another_valid_matrix_are_refused(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    path = data_file(index, "vectors")
    size = path.stat().st_size
    rolled = np.roll(index.vectors, 1, axis=0)  # same shape and dtype, every row now belongs to another chunk
    with path.open("wb") as fh:
        np.save(fh, rolled)
    assert path.stat().st_size == size
    with pytest.raises(CorruptIndexError, match="SHA-256"):
        _ = Index.open(index.path).vectors


def test_edited_chunk_text_is_refused(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    path = data_file(index, "chunks")
    path.write_bytes(path.read_bytes().replace(b"90 days", b"10 days"))
    with pytest.raises(CorruptIndexError, match="SHA-256"):
        Index.open(index.path)


def test_missing_data_file_is_refused(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    data_file(index, "chunks").unlink()
    with pytest.raises(CorruptIndexError, match="missing"):
        Index.open(index.path)


@pytest.mark.parametrize(
    ("damage", "error", "message"),
    [
        (lambda m: "{not json", CorruptIndexError, "not valid JSON"),
        (lambda m: m[: len(m) // 2], CorruptIndexError, "not valid JSON"),
        (lambda m: json.dumps({**json.loads(m), "format": "other"}), CorruptIndexError, "not a litm"),
        (lambda m: json.dumps({**json.loads(m), "version": 99}), IndexVersionError, "version 99"),
        (lambda m: json.dumps({k: v for k, v in json.loads(m).items() if k != "settings"}), CorruptIndexError, "lacks"),
        (
            lambda m: json.dumps({**json.loads(m), "settings": {**json.loads(m)["settings"], "dim": "384"}}),
            CorruptIndexError,
            "wrong type",
        ),
        (
            lambda m: json.dumps({**json.loads(m), "chunks": {**json.loads(m)["chunks"], "rows": 4}}),
            CorruptIndexError,
            "counts 4 chunks",
        ),
        (
            lambda m: json.dumps({**json.loads(m), "chunks": {**json.loads(m)["chunks"], "file": "../x.jsonl"}}),
            CorruptIndexError,
            "unexpected data file",
        ),
    ],
)
def test_damaged_manifest_is_refused(corpus: Path, model: MiniLM, damage, error, message) -> None:  # type: ignore[no-untyped-def]
    index = build(corpus, model)
    manifest = index.path / MANIFEST
    manifest.write_text(with_checksum(damage(manifest.read_text())))
    with pytest.raises(error, match=message) as info:
        Index.open(index.path)
    assert_typed(info.value)


def with_checksum(text: str) -> str:
    """The manifest with its checksum made to match again: what the checks behind the checksum must catch."""
    try:
        raw = json.loads(text)
    except ValueError:
        return text
    if isinstance(raw, dict) and "checksum" in raw:
        raw["checksum"] = manifest_checksum(raw)
    return json.dumps(raw)


def test_an_edit_the_checksum_does_not_match_is_refused(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    manifest = index.path / MANIFEST
    raw = json.loads(manifest.read_text())
    raw["entries"]["food.txt"]["mtime_ns"] += 1  # valid in every other way: only the checksum can tell
    manifest.write_text(json.dumps(raw))
    with pytest.raises(CorruptIndexError, match="checksum") as info:
        Index.open(index.path)
    assert info.value.file == MANIFEST


def test_a_manifest_without_checksum_from_an_earlier_litm_is_read(corpus: Path, model: MiniLM) -> None:
    index = build(corpus, model)
    manifest = index.path / MANIFEST
    raw = json.loads(manifest.read_text())
    del raw["checksum"]
    manifest.write_text(json.dumps(raw))
    assert len(Index.open(index.path)) == len(index)


def test_a_failed_write_leaves_the_previous_snapshot_whole(
    corpus: Path, model: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = build(corpus, model)
    before = [c.to_record() for c in index.chunks]
    (corpus / "food.txt").write_text("Entirely new cafeteria hours.")
    real = store_module.atomic_write

    def fail_on_manifest(target: str | Path, data: bytes | str) -> None:
        if Path(target).name == MANIFEST:
            raise OSError("disk full")
        real(target, data)

    monkeypatch.setattr(store_module, "atomic_write", fail_on_manifest)
    with pytest.raises(OSError, match="disk full"):
        index.sync(corpus)
    monkeypatch.undo()
    reopened = Index.open(index.path)
    assert [c.to_record() for c in reopened.chunks] == before
    assert len(reopened.vectors) == len(before)  # the old vectors file was not removed either
