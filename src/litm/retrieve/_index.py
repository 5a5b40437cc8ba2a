"""A persistent retrieval index: chunks of a folder (or of texts from Python) and their dense vectors.

The index mirrors a folder: :meth:`Index.sync` adds new files, re-chunks changed ones, drops deleted ones,
and leaves the rest alone. A file whose size and modification time match the manifest is not opened at all;
one whose stat changed is read once, and if its SHA-256 still matches (a ``touch``, a checkout) its chunks
and vectors are kept. Only new chunks are embedded. Every change is written as a new snapshot
(:mod:`litm.retrieve._store`), so the index on disk is always whole.

A file that is not text (a program renamed ``notes.txt``) is skipped and reported, never indexed; a folder
with nothing to index is an error, not an empty index. :func:`build_index` (``litm index``) checks every file
of an existing index in full and repairs what is damaged: vectors are embedded again, lost chunks are made
again from the folder, a damaged manifest is replaced by a rebuild; what it cannot repair, it names.

Example:
    >>> import tempfile, pathlib
    >>> docs = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (docs / "paris.md").write_text("# Paris\\n\\nParis is the capital of France.")
    >>> index, report = build_index(docs, docs.parent / (docs.name + "-index"), dense=False)
    >>> report.added, len(index)
    (('paris.md',), 1)
    >>> Index.open(index.path).chunks[0].title
    'Paris'
    >>> index.sync(docs).unchanged
    ('paris.md',)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from litm.errors import CorruptIndexError, IndexMismatchError, InputFormatError, RetrievalError
from litm.placement._documents import to_doc
from litm.retrieve._chunking import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_OVERLAP,
    CountsTokens,
    check_sizes,
    make_chunks,
    token_counter,
)
from litm.retrieve._corpus import read_file, scan
from litm.retrieve._deps import LazyModule
from litm.retrieve._embedder import Embedder, MiniLM
from litm.retrieve._formats import EXTENSIONS, SourceText, UnreadableFileError
from litm.retrieve._hits import Chunk
from litm.retrieve._store import (
    MANIFEST,
    Entry,
    Manifest,
    Settings,
    check_vectors_file,
    is_data_file,
    read_chunks,
    read_manifest,
    read_vectors,
    write_snapshot,
)
from litm.util._progress import Progress

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "index vectors")

__all__ = ["Index", "SyncReport", "build_index"]

Tokenizer = CountsTokens | Callable[[str], int]
_EMBED_BATCH = 256  # texts per embed() call: one progress step each


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What an update did, by entry key; ``read`` counts the files opened, ``embedded`` the chunks embedded.

    ``skipped`` counts the files of unsupported types; ``unreadable`` lists the files of a supported type that
    were left out because they are not text, each as ``(key, reason)``; ``repairs`` says what
    :func:`build_index` found damaged in the index and did about it.
    """

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    skipped: int = 0
    read: int = 0
    embedded: int = 0
    chunks: int = 0
    unreadable: tuple[tuple[str, str], ...] = ()
    repairs: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when the index content changed."""
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        """``3 added, 1 updated, 0 removed, 12 unchanged; 240 chunks (31 embedded)``, then what was left out."""
        text = (
            f"{len(self.added)} added, {len(self.updated)} updated, {len(self.removed)} removed, "
            f"{len(self.unchanged)} unchanged; {self.chunks} chunks ({self.embedded} embedded)"
        )
        if self.unreadable:
            text += f"; {len(self.unreadable)} skipped as not text"
        if self.repairs:
            text += f"; {len(self.repairs)} repaired"
        return text


class Index:
    """A retrieval index in a folder. Open one with :meth:`open`, make one with :meth:`create`.

    ``tokenizer`` (for updates) must be the one the index was chunked with; the default MiniLM tokenizer
    needs nothing. ``embedder`` replaces the default MiniLM model (its ``name`` must match the manifest's).
    """

    def __init__(
        self,
        path: str | Path,
        manifest: Manifest,
        chunks: list[Chunk],
        *,
        tokenizer: Tokenizer | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.path = Path(path)
        self._manifest = manifest
        self._chunks = chunks
        self._tokenizer = tokenizer
        self._counter: Callable[[str], int] | None = None
        self._embedder = embedder
        self._vectors: NDArray[np.float32] | None = None
        self._rows: dict[str, int] | None = None
        #: Bumped on every change, so retrievers built on this index know to rebuild what they derived.
        self.generation = 0

    # -- opening ---------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, *, tokenizer: Tokenizer | None = None, embedder: Embedder | None = None) -> Index:
        """Open an existing index, checking every file: the manifest (its checksum and counts) and the chunks
        (size, SHA-256, count) in full, the vectors file's size now and its SHA-256 and shape on first use
        (:meth:`verify` checks them now). Damage is a :class:`~litm.errors.CorruptIndexError`."""
        manifest = read_manifest(path)
        chunks = read_chunks(path, manifest)
        check_vectors_file(path, manifest)
        return cls(path, manifest, chunks, tokenizer=tokenizer, embedder=embedder)

    def verify(self) -> None:
        """Check what :meth:`open` left for first use (the vectors' SHA-256 and shape) now.

        >>> import tempfile
        >>> Index.create(tempfile.mkdtemp() + "/i", dense=False).verify()
        """
        if self.has_vectors:
            _ = self.vectors

    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        overlap: int = DEFAULT_OVERLAP,
        tokenizer: Tokenizer | None = None,
        dense: bool = True,
        embedder: Embedder | None = None,
        exist_ok: bool = False,
    ) -> Index:
        """A new empty index at ``path``, or (``exist_ok``) the index there if its settings are these."""
        folder = Path(path)
        settings = _settings(max_tokens, overlap, tokenizer, dense, embedder)
        if (folder / MANIFEST).is_file():
            if not exist_ok:
                raise RetrievalError(f"an index already exists at {folder}")
            index = cls.open(folder, tokenizer=tokenizer, embedder=embedder)
            if index.settings != settings:
                raise IndexMismatchError(
                    f"index {folder} was built with {_describe(index.settings)}, not {_describe(settings)}; "
                    "use another --out or delete it"
                )
            return index
        # Data files without a manifest are what deleting a damaged manifest leaves: the new snapshot replaces them.
        if folder.exists() and (not folder.is_dir() or any(not is_data_file(p.name) for p in folder.iterdir())):
            raise RetrievalError(f"{folder} exists and is not an index; choose an empty or new folder")
        write_snapshot(folder, settings, {}, [], _no_vectors(settings))
        return cls.open(folder, tokenizer=tokenizer, embedder=embedder)

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """Chunk size, overlap, tokenizer and embedding model of this index."""
        return self._manifest.settings

    @property
    def chunks(self) -> Sequence[Chunk]:
        """Every chunk, grouped by entry in key order; row ``i`` of :attr:`vectors` belongs to chunk ``i``."""
        return self._chunks

    @property
    def keys(self) -> tuple[str, ...]:
        """The indexed files' keys (relative paths) and the keys of texts added from Python."""
        return tuple(self._manifest.entries)

    @property
    def has_vectors(self) -> bool:
        """True when the index was built with dense vectors."""
        return self._manifest.vectors is not None

    @property
    def vectors(self) -> NDArray[np.float32]:
        """The ``(len(index), dim)`` float32 matrix of unit vectors, read and verified on first use."""
        if self._manifest.vectors is None:
            raise RetrievalError(f"index {self.path} has no dense vectors; rebuild it without --no-dense")
        if self._vectors is None:
            self._vectors = read_vectors(self.path, self._manifest)
        return self._vectors

    @property
    def embedder(self) -> Embedder:
        """The embedding model of this index (MiniLM by default), loaded on first use."""
        if self._embedder is None:
            self._embedder = MiniLM()
        if self.settings.embedding is not None and self._embedder.name != self.settings.embedding:
            raise IndexMismatchError(
                f"index {self.path} holds {self.settings.embedding} vectors; the embedder is {self._embedder.name}"
            )
        return self._embedder

    def row(self, chunk_id: str) -> int:
        """The row of a chunk (its position in :attr:`chunks` and :attr:`vectors`); ``KeyError`` if unknown."""
        if self._rows is None:
            self._rows = {c.id: i for i, c in enumerate(self._chunks)}
        return self._rows[chunk_id]

    def __len__(self) -> int:
        return len(self._chunks)

    def __repr__(self) -> str:
        return f"Index({str(self.path)!r}, {len(self.keys)} entries, {len(self)} chunks)"

    # -- changing --------------------------------------------------------------------------------------

    def sync(self, folder: str | Path, *, rehash: bool = False, progress: Progress | None = None) -> SyncReport:
        """Make the index mirror ``folder``: add new files, re-chunk changed ones, drop deleted ones.

        ``rehash`` reads every file to compare hashes even when its size and mtime are unchanged (for file
        systems whose mtimes cannot be trusted); unchanged files are still not re-chunked or re-embedded.
        Texts added with :meth:`add_texts` are kept.
        """
        found = scan(folder, exclude=[self.path])
        bar = progress.add_task("files", len(found.files)) if progress is not None else None
        old = self._manifest.entries
        fresh: dict[str, tuple[Entry, list[SourceText] | None]] = {}
        unreadable: list[tuple[str, str]] = []
        read = 0
        for file in found.files:
            before = old.get(file.key)
            same_stat = before is not None and (before.size, before.mtime_ns) == (file.size, file.mtime_ns)
            if before is not None and before.kind == "file" and same_stat and not rehash:
                fresh[file.key] = (before, None)
            else:
                read += 1
                try:
                    digest, texts = read_file(file)
                except UnreadableFileError as exc:
                    # Left out (and dropped, if it was indexed while it was text), and reported.
                    unreadable.append((file.key, str(exc).removeprefix(f"{file.key}: ")))
                else:
                    entry = Entry("file", digest, file.size, file.mtime_ns, 0)
                    unchanged = before is not None and before.kind == "file" and before.sha256 == digest
                    fresh[file.key] = (entry, None if unchanged else texts)
            if progress is not None and bar is not None:
                progress.advance(bar)
        # Texts added from Python are not part of the folder: keep them.
        for key, entry in old.items():
            if entry.kind != "file" and key not in fresh:
                fresh[key] = (entry, None)
        if not fresh:
            raise InputFormatError(_nothing_to_index(folder, found.skipped, unreadable))
        return self._commit(
            fresh, skipped=found.skipped, read=read, progress=progress, unreadable=tuple(unreadable),
            folder=Path(folder),
        )  # fmt: skip

    def add_texts(self, items: Iterable[object], *, progress: Progress | None = None) -> SyncReport:
        """Add or replace texts given from Python: strings, dicts, :class:`Doc` values, framework documents.

        Each item's id is its key (``doc-1``, ``doc-2``, ... for items without one); an item whose text is
        unchanged is kept as it is.
        """
        fresh: dict[str, tuple[Entry, list[SourceText] | None]] = {
            k: (e, None) for k, e in self._manifest.entries.items()
        }
        for i, item in enumerate(items):
            doc = to_doc(item, index=i)
            meta = {k: v for k, v in doc.metadata.items() if isinstance(v, (str, int, float, bool, type(None)))}
            # The hash covers everything a chunk carries, so a new title or source is an update too.
            raw = json.dumps([doc.text, doc.title, doc.source, meta], sort_keys=True, ensure_ascii=False).encode()
            entry = Entry("text", hashlib.sha256(raw).hexdigest(), len(doc.text.encode("utf-8")), 0, 0)
            before = self._manifest.entries.get(doc.id)
            if before is not None and before.sha256 == entry.sha256:
                continue
            fresh[doc.id] = (entry, [SourceText(doc.id, doc.source or doc.id, doc.title, doc.text, meta)])
        return self._commit(fresh, progress=progress)

    def remove(self, keys: Iterable[str]) -> SyncReport:
        """Drop entries by key (a file's relative path, a text's id); unknown keys are an error."""
        drop = set(keys)
        unknown = sorted(drop - set(self._manifest.entries))
        if unknown:
            raise RetrievalError(f"index {self.path} has no entries {', '.join(map(repr, unknown))}")
        fresh = {k: (e, None) for k, e in self._manifest.entries.items() if k not in drop}
        return self._commit(fresh)

    def _commit(
        self,
        fresh: Mapping[str, tuple[Entry, list[SourceText] | None]],
        *,
        skipped: int = 0,
        read: int = 0,
        progress: Progress | None = None,
        unreadable: tuple[tuple[str, str], ...] = (),
        folder: Path | None = None,
    ) -> SyncReport:
        """Assemble the new snapshot from kept and new entries, embed what is new, write it if it changed.

        With ``folder`` (a sync), a result without a single chunk is refused: the folder holds no text.
        """
        old = self._manifest.entries
        starts = _starts(old)
        chunks: list[Chunk] = []
        kept_rows: list[int] = []  # old vector row of each chunk, -1 for a new chunk
        entries: dict[str, Entry] = {}
        added: list[str] = []
        updated: list[str] = []
        unchanged: list[str] = []
        for key in sorted(fresh):
            entry, texts = fresh[key]
            if texts is None:  # kept: reuse its chunks (and rows) from the current snapshot
                lo = starts[key]
                n = old[key].chunks
                chunks.extend(self._chunks[lo : lo + n])
                kept_rows.extend(range(lo, lo + n))
                entries[key] = Entry(entry.kind, entry.sha256, entry.size, entry.mtime_ns, n)
                unchanged.append(key)
                continue
            size, overlap = self.settings.max_tokens, self.settings.overlap
            new = [c for text in texts for c in make_chunks(text, self._count(), size, overlap)]
            chunks.extend(new)
            kept_rows.extend([-1] * len(new))
            entries[key] = Entry(entry.kind, entry.sha256, entry.size, entry.mtime_ns, len(new))
            (updated if key in old else added).append(key)
        removed = sorted(set(old) - set(entries))
        if folder is not None and not chunks:
            raise InputFormatError(f"{folder} holds no text to index: its {len(entries)} files are empty")
        report = SyncReport(
            tuple(added), tuple(updated), tuple(removed), tuple(unchanged), skipped, read, chunks=len(chunks),
            unreadable=unreadable,
        )  # fmt: skip
        if not report.changed and entries == dict(old):
            return report
        vectors, embedded = self._vectors_for(chunks, kept_rows, progress)
        self._write(entries, chunks, vectors)
        return replace(report, embedded=embedded)

    def _write(self, entries: Mapping[str, Entry], chunks: list[Chunk], vectors: NDArray[np.float32] | None) -> None:
        write_snapshot(self.path, self.settings, entries, chunks, vectors)
        self._manifest = read_manifest(self.path)
        self._chunks, self._vectors, self._rows = chunks, vectors, None
        self.generation += 1

    def _embed_again(self, progress: Progress | None) -> int:
        """Replace the vectors with fresh embeddings of every chunk (the repair of a damaged vectors file)."""
        vectors, embedded = self._vectors_for(self._chunks, [-1] * len(self._chunks), progress)
        self._write(self._manifest.entries, self._chunks, vectors)
        return embedded

    def _count(self) -> Callable[[str], int]:
        """The token counter for new chunks: it must be the one the index was chunked with."""
        if self._counter is None:
            count, name = token_counter(self._tokenizer)
            if name != self.settings.tokenizer:
                raise IndexMismatchError(
                    f"index {self.path} was chunked with the tokenizer {self.settings.tokenizer!r}; "
                    f"pass the same one (got {name!r})"
                )
            self._counter = count
        return self._counter

    def _vectors_for(
        self, chunks: list[Chunk], kept_rows: list[int], progress: Progress | None
    ) -> tuple[NDArray[np.float32] | None, int]:
        if self.settings.dim is None:
            return None, 0
        out = np.zeros((len(chunks), self.settings.dim), dtype=np.float32)
        keep = [(i, r) for i, r in enumerate(kept_rows) if r >= 0]
        if keep:
            rows = np.fromiter((i for i, _ in keep), dtype=np.int64)
            out[rows] = self.vectors[np.fromiter((r for _, r in keep), dtype=np.int64)]
        todo = [i for i, r in enumerate(kept_rows) if r < 0]
        bar = progress.add_task("embed", len(todo)) if progress is not None and todo else None
        for lo in range(0, len(todo), _EMBED_BATCH):
            batch = todo[lo : lo + _EMBED_BATCH]
            out[batch] = self.embedder.embed([chunks[i].indexed_text for i in batch])
            if progress is not None and bar is not None:
                progress.advance(bar, len(batch))
        return out, len(todo)


def _starts(entries: Mapping[str, Entry]) -> dict[str, int]:
    out, at = {}, 0
    for key, entry in entries.items():
        out[key] = at
        at += entry.chunks
    return out


def _settings(
    max_tokens: int, overlap: int, tokenizer: Tokenizer | None, dense: bool, embedder: Embedder | None
) -> Settings:
    _, tokenizer_name = token_counter(tokenizer)
    model = (embedder.name, embedder.dim) if embedder is not None else (MiniLM.name, MiniLM.dim)
    check_sizes(max_tokens, overlap)
    return Settings(max_tokens, overlap, tokenizer_name, model[0] if dense else None, model[1] if dense else None)


def _no_vectors(settings: Settings) -> NDArray[np.float32] | None:
    """The vectors of an empty index: a ``(0, dim)`` matrix, or None for an index without vectors."""
    return None if settings.dim is None else np.zeros((0, settings.dim), np.float32)


def _nothing_to_index(folder: str | Path, skipped: int, unreadable: Sequence[tuple[str, str]]) -> str:
    supported = ", ".join(sorted(EXTENSIONS))
    if unreadable:
        shown = "; ".join(f"{key}: {why}" for key, why in unreadable[:3])
        more = f"; and {len(unreadable) - 3} more" if len(unreadable) > 3 else ""
        return f"{folder}: nothing to index: none of its {len(unreadable)} files is text ({shown}{more})"
    if skipped:
        return f"{folder} holds no file litm can index ({skipped} files of other types; supported: {supported})"
    return f"{folder} is empty: nothing to index (supported files: {supported})"


def _describe(s: Settings) -> str:
    dense = f"{s.embedding} vectors" if s.embedding else "no vectors"
    return f"chunks of {s.max_tokens} tokens (overlap {s.overlap}, tokenizer {s.tokenizer}), {dense}"


def _damage(exc: CorruptIndexError) -> str:
    """What is wrong, naming the file: ``chunks-....jsonl is 830 bytes, the manifest says 822 (truncated?)``."""
    detail = exc.detail or str(exc)
    return detail if exc.file is None or detail.startswith(exc.file) else f"{exc.file}: {detail}"


def _rebuildable(root: Path, exc: CorruptIndexError) -> None:
    """Refuse to rebuild over a damaged manifest when the folder may not be an index litm wrote, and say what
    to remove so that it can be."""
    others = sorted(p.name for p in root.iterdir() if p.name != MANIFEST and not is_data_file(p.name))
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        fix = f"it also holds files litm did not write ({shown}): move them out of {root}"
    elif not any(is_data_file(p.name) for p in root.iterdir()):
        fix = f"it holds no index data: delete {root / MANIFEST}"
    else:
        return
    raise CorruptIndexError(
        f"index {root}: {_damage(exc)}; it is not rebuilt in place because {fix} and run `litm index` again, "
        "or choose another --out",
        file=MANIFEST,
        detail=_damage(exc),
    ) from exc


def _open_for_update(
    root: Path, settings: Settings, tokenizer: Tokenizer | None, embedder: Embedder | None, progress: Progress | None
) -> tuple[Index, list[str], int]:
    """Open the index at ``root`` checking every file in full, and repair what is damaged; returns the index,
    what was repaired, and how many chunks the repair embedded.

    A damaged manifest: the index is started again (every file of the folder is read and embedded by the
    sync that follows). Damaged chunks: the same, keeping the settings; texts added from Python had their
    only copy there and are reported lost. Damaged vectors: every chunk is embedded again.
    """
    repairs: list[str] = []
    try:
        manifest = read_manifest(root)
    except CorruptIndexError as exc:
        _rebuildable(root, exc)
        write_snapshot(root, settings, {}, [], _no_vectors(settings))
        repairs.append(f"{_damage(exc)}: the index is built again from the folder")
        return Index.open(root, tokenizer=tokenizer, embedder=embedder), repairs, 0
    if manifest.settings != settings:
        raise IndexMismatchError(
            f"index {root} was built with {_describe(manifest.settings)}, not {_describe(settings)}; "
            "use another --out or delete it"
        )
    try:
        chunks = read_chunks(root, manifest)
    except CorruptIndexError as exc:
        lost = [key for key, entry in manifest.entries.items() if entry.kind != "file"]
        write_snapshot(root, settings, {}, [], _no_vectors(settings))
        note = f"{_damage(exc)}: every file is read and embedded again"
        if lost:
            shown = ", ".join(map(repr, lost[:3])) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
            note += f"; {len(lost)} texts added from Python were lost with it ({shown}): add them again"
        repairs.append(note)
        return Index.open(root, tokenizer=tokenizer, embedder=embedder), repairs, 0
    index = Index(root, manifest, chunks, tokenizer=tokenizer, embedder=embedder)
    embedded = 0
    try:
        check_vectors_file(root, manifest)
        index.verify()
    except CorruptIndexError as exc:
        embedded = index._embed_again(progress)
        repairs.append(f"{_damage(exc)}: every chunk is embedded again ({embedded})")
    return index, repairs, embedded


def _discard(root: Path, made_folder: bool) -> None:
    """Remove the index a failed first build left behind (only files litm writes into an index)."""
    if not root.is_dir():
        return
    for path in root.iterdir():
        if path.name == MANIFEST or is_data_file(path.name):
            path.unlink(missing_ok=True)
    if made_folder and not any(root.iterdir()):
        root.rmdir()


def build_index(
    folder: str | Path,
    out: str | Path,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
    tokenizer: Tokenizer | None = None,
    dense: bool = True,
    embedder: Embedder | None = None,
    rehash: bool = False,
    progress: Progress | None = None,
) -> tuple[Index, SyncReport]:
    """Index ``folder`` into ``out``, creating the index or bringing an existing one up to date.

    An existing index is checked in full first (manifest, chunks, vectors) and repaired when damaged; the
    report's ``repairs`` say what was done. A folder with nothing to index (empty, no supported file, no file
    that is text) raises :class:`~litm.errors.InputFormatError`, and a first build that fails leaves no index.
    """
    root = Path(out)
    if (root / MANIFEST).is_file():
        settings = _settings(max_tokens, overlap, tokenizer, dense, embedder)
        index, repairs, embedded = _open_for_update(root, settings, tokenizer, embedder, progress)
        report = index.sync(folder, rehash=rehash, progress=progress)
        return index, replace(report, repairs=tuple(repairs), embedded=report.embedded + embedded)
    made_folder = not root.exists()
    index = Index.create(
        out, max_tokens=max_tokens, overlap=overlap, tokenizer=tokenizer, dense=dense, embedder=embedder
    )
    try:
        return index, index.sync(folder, rehash=rehash, progress=progress)
    except BaseException:
        _discard(root, made_folder)
        raise
