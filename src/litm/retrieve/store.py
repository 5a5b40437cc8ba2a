"""The on-disk format of a retrieval index: a folder with a versioned manifest and content-addressed data.

```text
INDEX/
  manifest.json              format, version, settings, one entry per indexed file (hash, stat, chunk count),
                             and the name, SHA-256 and row count of each data file
  chunks-<sha256[:16]>.jsonl one chunk per line, grouped by entry in manifest order
  vectors-<sha256[:16]>.npy  float32 matrix, row i = chunk i (only for indexes built with dense vectors)
```

Why this shape: data files are named by their content and never rewritten, and the manifest is replaced
atomically last (:func:`litm.util.files.atomic_write`). A reader therefore sees the old snapshot or the new
one, never a mix; a crash mid-write leaves the old manifest pointing at the old, intact files. Every data file
is checked against the hash and size the manifest records before it is used: a truncated or edited file is a
:class:`~litm.errors.CorruptIndexError`, never a wrong search result. One writer at a time.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "idx"
    >>> settings = Settings(max_tokens=256, overlap=32, tokenizer="minilm-wordpiece", embedding=None, dim=None)
    >>> write_snapshot(folder, settings, {}, [], None)
    >>> read_manifest(folder).settings.max_tokens
    256
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litm.errors import CorruptIndexError, IndexNotFoundError, IndexVersionError
from litm.retrieve.deps import LazyModule
from litm.retrieve.hits import Chunk
from litm.util.files import atomic_write

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "index vectors")

__all__ = [
    "FORMAT",
    "MANIFEST",
    "VERSION",
    "DataFile",
    "Entry",
    "Manifest",
    "Settings",
    "read_chunks",
    "read_manifest",
    "read_vectors",
    "write_snapshot",
]

FORMAT = "litm-retrieve-index"
#: Bumped on any change a reader of the previous version would misread.
VERSION = 1
MANIFEST = "manifest.json"
_DATA_PREFIXES = ("chunks-", "vectors-")


@dataclass(frozen=True, slots=True)
class Settings:
    """What the chunks and vectors were made with; an update must use the same, or the index would mix them."""

    max_tokens: int
    overlap: int
    tokenizer: str
    embedding: str | None
    dim: int | None


@dataclass(frozen=True, slots=True)
class Entry:
    """One indexed file (``kind="file"``) or text added from Python (``kind="text"``)."""

    kind: str
    sha256: str
    size: int
    mtime_ns: int
    chunks: int


@dataclass(frozen=True, slots=True)
class DataFile:
    """A data file of the snapshot: its name, SHA-256, size in bytes and number of rows."""

    file: str
    sha256: str
    size: int
    rows: int


@dataclass(frozen=True, slots=True)
class Manifest:
    """The parsed ``manifest.json``."""

    settings: Settings
    entries: Mapping[str, Entry]
    chunks: DataFile
    vectors: DataFile | None


def _corrupt(folder: Path, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"index {folder}: {what}; rebuild it with `litm index`")


def _typed(value: Any, kind: type | tuple[type, ...], where: str, folder: Path) -> Any:
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise _corrupt(folder, f"manifest field {where} has the wrong type")
    return value


def _datafile(raw: Any, where: str, folder: Path) -> DataFile:
    _typed(raw, dict, where, folder)
    try:
        return DataFile(
            file=_typed(raw["file"], str, f"{where}.file", folder),
            sha256=_typed(raw["sha256"], str, f"{where}.sha256", folder),
            size=_typed(raw["size"], int, f"{where}.size", folder),
            rows=_typed(raw["rows"], int, f"{where}.rows", folder),
        )
    except KeyError as exc:
        raise _corrupt(folder, f"manifest field {where} lacks {exc}") from exc


def read_manifest(folder: str | Path) -> Manifest:
    """Parse and validate ``folder/manifest.json``."""
    root = Path(folder)
    path = root / MANIFEST
    if not path.is_file():
        raise IndexNotFoundError(f"no index at {root} (no {MANIFEST}); build one with `litm index DIR --out {root}`")
    try:
        raw = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise _corrupt(root, f"{MANIFEST} is not valid JSON ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise _corrupt(root, f"{MANIFEST} is not a litm retrieval index manifest")
    version = raw.get("version")
    if not isinstance(version, int) or version > VERSION or version < 1:
        raise IndexVersionError(f"index {root} has format version {version!r}; this litm reads version {VERSION}")
    try:
        s = _typed(raw["settings"], dict, "settings", root)
        settings = Settings(
            max_tokens=_typed(s["max_tokens"], int, "settings.max_tokens", root),
            overlap=_typed(s["overlap"], int, "settings.overlap", root),
            tokenizer=_typed(s["tokenizer"], str, "settings.tokenizer", root),
            embedding=_typed(s["embedding"], (str, type(None)), "settings.embedding", root),
            dim=_typed(s["dim"], (int, type(None)), "settings.dim", root),
        )
        entries = {}
        for key, e in _typed(raw["entries"], dict, "entries", root).items():
            _typed(e, dict, f"entries[{key!r}]", root)
            entries[key] = Entry(
                kind=_typed(e["kind"], str, "entry kind", root),
                sha256=_typed(e["sha256"], str, "entry sha256", root),
                size=_typed(e["size"], int, "entry size", root),
                mtime_ns=_typed(e["mtime_ns"], int, "entry mtime_ns", root),
                chunks=_typed(e["chunks"], int, "entry chunks", root),
            )
        chunks = _datafile(raw["chunks"], "chunks", root)
        vectors = None if raw["vectors"] is None else _datafile(raw["vectors"], "vectors", root)
    except KeyError as exc:
        raise _corrupt(root, f"{MANIFEST} lacks the field {exc}") from exc
    if sum(e.chunks for e in entries.values()) != chunks.rows:
        raise _corrupt(root, f"{MANIFEST} counts {chunks.rows} chunks but its entries add up to another number")
    if vectors is not None and (vectors.rows != chunks.rows or settings.dim is None):
        raise _corrupt(root, f"{MANIFEST} records {vectors.rows} vectors for {chunks.rows} chunks")
    return Manifest(settings, entries, chunks, vectors)


def _read_verified(folder: Path, data: DataFile) -> bytes:
    path = folder / data.file
    if Path(data.file).name != data.file or not data.file.startswith(_DATA_PREFIXES):
        raise _corrupt(folder, f"manifest names an unexpected data file {data.file!r}")
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise _corrupt(folder, f"{data.file} is missing (deleted, or rewritten by an update while open)") from exc
    if len(raw) != data.size:
        raise _corrupt(folder, f"{data.file} is {len(raw)} bytes, the manifest says {data.size} (truncated?)")
    if hashlib.sha256(raw).hexdigest() != data.sha256:
        raise _corrupt(folder, f"{data.file} does not match the SHA-256 its manifest records")
    return raw


def read_chunks(folder: str | Path, manifest: Manifest) -> list[Chunk]:
    """The chunks of the snapshot ``manifest`` describes, verified against its hash."""
    root = Path(folder)
    raw = _read_verified(root, manifest.chunks)
    chunks: list[Chunk] = []
    try:
        for line in raw.decode("utf-8").splitlines():
            chunks.append(Chunk.from_record(json.loads(line)))
    except (ValueError, KeyError, TypeError) as exc:
        raise _corrupt(root, f"{manifest.chunks.file} line {len(chunks) + 1} is not a chunk ({exc})") from exc
    if len(chunks) != manifest.chunks.rows:
        raise _corrupt(root, f"{manifest.chunks.file} has {len(chunks)} chunks, the manifest {manifest.chunks.rows}")
    return chunks


def read_vectors(folder: str | Path, manifest: Manifest) -> NDArray[np.float32]:
    """The vector matrix of the snapshot, verified against its hash, shape and dtype."""
    root = Path(folder)
    if manifest.vectors is None:
        raise _corrupt(root, "this index has no vectors")
    raw = _read_verified(root, manifest.vectors)
    try:
        matrix = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _corrupt(root, f"{manifest.vectors.file} is not a numpy array ({exc})") from exc
    expected = (manifest.vectors.rows, manifest.settings.dim)
    if matrix.dtype != np.float32 or matrix.shape != expected:
        raise _corrupt(root, f"{manifest.vectors.file} holds {matrix.dtype}{matrix.shape}, expected float32{expected}")
    result: NDArray[np.float32] = matrix
    return result


def _store(folder: Path, prefix: str, suffix: str, raw: bytes, rows: int) -> DataFile:
    digest = hashlib.sha256(raw).hexdigest()
    name = f"{prefix}{digest[:16]}{suffix}"
    # Written even when a file of this name exists: that one may be a damaged copy.
    atomic_write(folder / name, raw)
    return DataFile(name, digest, len(raw), rows)


def write_snapshot(
    folder: str | Path,
    settings: Settings,
    entries: Mapping[str, Entry],
    chunks: Sequence[Chunk],
    vectors: NDArray[np.float32] | None,
) -> None:
    """Write a new snapshot: data files first, then the manifest (atomically), then remove stale data files."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    lines = b"".join(json.dumps(c.to_record(), ensure_ascii=False).encode("utf-8") + b"\n" for c in chunks)
    chunk_file = _store(root, "chunks-", ".jsonl", lines, len(chunks))
    vector_file = None
    if vectors is not None:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
        vector_file = _store(root, "vectors-", ".npy", buf.getvalue(), int(vectors.shape[0]))
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "settings": asdict(settings),
        "entries": {key: asdict(entry) for key, entry in entries.items()},
        "chunks": asdict(chunk_file),
        "vectors": None if vector_file is None else asdict(vector_file),
    }
    atomic_write(root / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    keep = {chunk_file.file, *([vector_file.file] if vector_file else [])}
    for stale in root.iterdir():
        if stale.name.startswith(_DATA_PREFIXES) and stale.name not in keep and stale.is_file():
            stale.unlink(missing_ok=True)
