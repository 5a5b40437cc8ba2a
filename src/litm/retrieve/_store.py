"""The on-disk format of a retrieval index: a folder with a versioned manifest and content-addressed data.

```text
INDEX/
  manifest.json              format, version, settings, one entry per indexed file (hash, stat, chunk count),
                             the name, SHA-256 and row count of each data file, and its own checksum
  chunks-<sha256[:16]>.jsonl one chunk per line, grouped by entry in manifest order
  vectors-<sha256[:16]>.npy  float32 matrix, row i = chunk i (only for indexes built with dense vectors)
```

Why this shape: data files are named by their content and never rewritten, and the manifest is replaced
atomically last (:func:`litm.util._files.atomic_write`). A reader therefore sees the old snapshot or the new
one, never a mix; a crash mid-write leaves the old manifest pointing at the old, intact files. Every file is
checked before it is used: the manifest against its own checksum (the SHA-256 of its other fields), each data
file against the size and SHA-256 the manifest records, the chunks against the manifest's counts, the vectors
against its shape. A truncated or edited file is a :class:`~litm.errors.CorruptIndexError`, never a wrong
search result. One writer at a time.

A manifest without a checksum (written before litm recorded one) is still read; the next update adds it.

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
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, overload

from litm.errors import CorruptIndexError, IndexNotFoundError, IndexVersionError
from litm.retrieve._deps import LazyModule
from litm.retrieve._hits import Chunk
from litm.util._files import atomic_write

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "index vectors")

__all__ = [
    "ENTRY_KINDS",
    "FORMAT",
    "MANIFEST",
    "VERSION",
    "DataFile",
    "Entry",
    "Manifest",
    "Settings",
    "check_vectors_file",
    "is_data_file",
    "manifest_checksum",
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
_CHECKSUM = "checksum"
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: Entry kinds: a file of the indexed folder, or a text added from Python.
ENTRY_KINDS = ("file", "text")


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


def _corrupt(folder: Path, what: str, file: str | None = MANIFEST) -> CorruptIndexError:
    # `litm index` repairs every damage reported this way, or names the file to delete (build_index).
    return CorruptIndexError(
        f"index {folder}: {what}; repair it with `litm index FOLDER --out {folder}` (FOLDER: the indexed folder)",
        file=file,
        detail=what,
    )


_T = TypeVar("_T")


@overload
def _typed(value: object, kind: type[_T], where: str, folder: Path) -> _T: ...


@overload
def _typed(value: object, kind: tuple[type[_T], type[None]], where: str, folder: Path) -> _T | None: ...


def _typed(value: object, kind: type[_T] | tuple[type[_T], type[None]], where: str, folder: Path) -> _T | None:
    """``value`` when it has the type ``kind`` (a bool is not an int here), else the index is corrupt."""
    if isinstance(value, bool) and kind is not bool:
        raise _corrupt(folder, f"manifest field {where} has the wrong type")
    if value is None and isinstance(kind, tuple):
        return None
    wanted = kind[0] if isinstance(kind, tuple) else kind
    if not isinstance(value, wanted):
        raise _corrupt(folder, f"manifest field {where} has the wrong type")
    return value


def _count(value: object, where: str, folder: Path) -> int:
    """A manifest integer that counts something (bytes, rows, tokens): never negative."""
    number: int = _typed(value, int, where, folder)
    if number < 0:
        raise _corrupt(folder, f"manifest field {where} is negative ({number})")
    return number


def _digest(value: object, where: str, folder: Path) -> str:
    text: str = _typed(value, str, where, folder)
    if not _SHA256.fullmatch(text):
        raise _corrupt(folder, f"manifest field {where} is not a SHA-256 hex digest")
    return text


def manifest_checksum(raw: Mapping[str, object]) -> str:
    """The SHA-256 of a manifest's fields other than the checksum, in a canonical JSON form.

    Computed on the parsed value, so it does not depend on the manifest's indentation or key order.

    >>> manifest_checksum({"b": 1, "a": [2]}) == manifest_checksum({"a": [2], "b": 1, "checksum": "x"})
    True
    """
    body = {k: v for k, v in raw.items() if k != _CHECKSUM}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _datafile(raw: object, where: str, folder: Path) -> DataFile:
    fields: dict[str, object] = _typed(raw, dict, where, folder)
    try:
        return DataFile(
            file=_typed(fields["file"], str, f"{where}.file", folder),
            sha256=_digest(fields["sha256"], f"{where}.sha256", folder),
            size=_count(fields["size"], f"{where}.size", folder),
            rows=_count(fields["rows"], f"{where}.rows", folder),
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
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError; deep nesting recurses
        raise _corrupt(root, f"{MANIFEST} is not valid JSON ({exc})") from exc
    if isinstance(raw, dict) and _CHECKSUM in raw:
        # First, so that damage anywhere (the version included) is reported as damage.
        try:
            expected = manifest_checksum(raw)
        except (ValueError, RecursionError) as exc:  # NaN or Infinity, or very deep nesting: never written by litm
            raise _corrupt(root, f"{MANIFEST} holds a value litm never writes ({type(exc).__name__})") from exc
        if raw[_CHECKSUM] != expected:
            raise _corrupt(root, f"{MANIFEST} does not match its own checksum (edited or damaged)")
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise _corrupt(root, f"{MANIFEST} is not a litm retrieval index manifest")
    version = raw.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version > VERSION or version < 1:
        raise IndexVersionError(f"index {root} has format version {version!r}; this litm reads version {VERSION}")
    try:
        s = _typed(raw["settings"], dict, "settings", root)
        embedding = _typed(s["embedding"], (str, type(None)), "settings.embedding", root)
        dim = _typed(s["dim"], (int, type(None)), "settings.dim", root)
        settings = Settings(
            max_tokens=_count(s["max_tokens"], "settings.max_tokens", root),
            overlap=_count(s["overlap"], "settings.overlap", root),
            tokenizer=_typed(s["tokenizer"], str, "settings.tokenizer", root),
            embedding=embedding,
            dim=dim,
        )
        if (embedding is None) != (dim is None) or (dim is not None and dim < 1):
            raise _corrupt(root, f"{MANIFEST} records embedding {embedding!r} with dimension {dim!r}")
        entries = {}
        for key, e in _typed(raw["entries"], dict, "entries", root).items():
            _typed(e, dict, f"entries[{key!r}]", root)
            kind = _typed(e["kind"], str, "entry kind", root)
            if kind not in ENTRY_KINDS:
                raise _corrupt(root, f"{MANIFEST} entry {key!r} has an unknown kind {kind!r}")
            entries[key] = Entry(
                kind=kind,
                sha256=_digest(e["sha256"], "entry sha256", root),
                size=_count(e["size"], "entry size", root),
                mtime_ns=_typed(e["mtime_ns"], int, "entry mtime_ns", root),
                chunks=_count(e["chunks"], "entry chunks", root),
            )
        chunks = _datafile(raw["chunks"], "chunks", root)
        vectors = None if raw["vectors"] is None else _datafile(raw["vectors"], "vectors", root)
    except KeyError as exc:
        raise _corrupt(root, f"{MANIFEST} lacks the field {exc}") from exc
    if sum(e.chunks for e in entries.values()) != chunks.rows:
        raise _corrupt(root, f"{MANIFEST} counts {chunks.rows} chunks but its entries add up to another number")
    if vectors is not None and (vectors.rows != chunks.rows or settings.dim is None):
        raise _corrupt(root, f"{MANIFEST} records {vectors.rows} vectors for {chunks.rows} chunks")
    if (vectors is None) != (settings.dim is None):
        raise _corrupt(root, f"{MANIFEST} records {'no ' if vectors is None else ''}vectors for its settings")
    return Manifest(settings, entries, chunks, vectors)


def is_data_file(name: str) -> bool:
    """True for the names of files litm writes into an index folder, other than the manifest: data files
    (``chunks-*.jsonl``, ``vectors-*.npy``) and the temporary files of an interrupted write.

    >>> is_data_file("chunks-0123456789abcdef.jsonl"), is_data_file(".manifest.json.x1y2.tmp"), is_data_file("a.md")
    (True, True, False)
    """
    if name.startswith(".") and name.endswith(".tmp"):
        return name[1:].startswith((MANIFEST, *_DATA_PREFIXES))
    return (name.startswith("chunks-") and name.endswith(".jsonl")) or (
        name.startswith("vectors-") and name.endswith(".npy")
    )


def _data_path(folder: Path, data: DataFile) -> Path:
    if Path(data.file).name != data.file or not data.file.startswith(_DATA_PREFIXES):
        raise _corrupt(folder, f"manifest names an unexpected data file {data.file!r}")
    return folder / data.file


def _missing(folder: Path, data: DataFile) -> CorruptIndexError:
    return _corrupt(folder, f"{data.file} is missing (deleted, or rewritten by an update while open)", data.file)


def _wrong_size(folder: Path, data: DataFile, size: int) -> CorruptIndexError:
    return _corrupt(folder, f"{data.file} is {size} bytes, the manifest says {data.size} (truncated?)", data.file)


def check_vectors_file(folder: str | Path, manifest: Manifest) -> None:
    """Check that the vectors file exists and has the size the manifest records, without reading it.

    What :meth:`~litm.retrieve._index.Index.open` does for the vectors (their hash is checked on first use).
    """
    root = Path(folder)
    if manifest.vectors is None:
        return
    path = _data_path(root, manifest.vectors)
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise _missing(root, manifest.vectors) from exc
    if size != manifest.vectors.size:
        raise _wrong_size(root, manifest.vectors, size)


def _read_verified(folder: Path, data: DataFile) -> bytes:
    path = _data_path(folder, data)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise _missing(folder, data) from exc
    if len(raw) != data.size:
        raise _wrong_size(folder, data, len(raw))
    if hashlib.sha256(raw).hexdigest() != data.sha256:
        raise _corrupt(folder, f"{data.file} does not match the SHA-256 its manifest records", data.file)
    return raw


def read_chunks(folder: str | Path, manifest: Manifest) -> list[Chunk]:
    """The chunks of the snapshot ``manifest`` describes, verified against its hash."""
    root = Path(folder)
    raw = _read_verified(root, manifest.chunks)
    chunks: list[Chunk] = []
    # Split on "\n" only: str.splitlines() would also cut at U+2028, U+0085 and the like, which JSON keeps
    # unescaped inside strings (a web page's line separator made a valid index unreadable).
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    try:
        for line in lines:
            chunks.append(Chunk.from_record(json.loads(line.decode("utf-8"))))
    except (ValueError, KeyError, TypeError) as exc:
        name = manifest.chunks.file
        raise _corrupt(root, f"{name} line {len(chunks) + 1} is not a chunk ({exc})", name) from exc
    if len(chunks) != manifest.chunks.rows:
        name = manifest.chunks.file
        raise _corrupt(root, f"{name} has {len(chunks)} chunks, the manifest {manifest.chunks.rows}", name)
    return chunks


def read_vectors(folder: str | Path, manifest: Manifest) -> NDArray[np.float32]:
    """The vector matrix of the snapshot, verified against its hash, shape and dtype."""
    root = Path(folder)
    if manifest.vectors is None:
        raise _corrupt(root, "this index has no vectors", None)
    raw = _read_verified(root, manifest.vectors)
    name = manifest.vectors.file
    try:
        matrix = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _corrupt(root, f"{name} is not a numpy array ({exc})", name) from exc
    expected = (manifest.vectors.rows, manifest.settings.dim)
    if matrix.dtype != np.float32 or matrix.shape != expected:
        raise _corrupt(root, f"{name} holds {matrix.dtype}{matrix.shape}, expected float32{expected}", name)
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
    manifest: dict[str, object] = {
        "format": FORMAT,
        "version": VERSION,
        "settings": asdict(settings),
        "entries": {key: asdict(entry) for key, entry in entries.items()},
        "chunks": asdict(chunk_file),
        "vectors": None if vector_file is None else asdict(vector_file),
    }
    manifest[_CHECKSUM] = manifest_checksum(manifest)
    atomic_write(root / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    keep = {chunk_file.file, *([vector_file.file] if vector_file else [])}
    for stale in root.iterdir():
        if stale.name.startswith(_DATA_PREFIXES) and stale.name not in keep and stale.is_file():
            stale.unlink(missing_ok=True)
