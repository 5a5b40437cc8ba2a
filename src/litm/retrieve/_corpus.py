"""A folder of documents to index: which files count, and reading each one exactly once.

:func:`scan` lists the supported files under a folder with their size and modification time, reading
none of them, so the index can skip an unchanged file without opening it. :func:`read_file` reads a file
once and returns its SHA-256 together with its parsed texts: hashing and parsing share the same bytes.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("# A\\n\\nAlpha.")
    >>> _ = (root / "image.png").write_bytes(b"\\x89PNG")
    >>> [f.key for f in scan(root).files]
    ['a.md']
    >>> digest, texts = read_file(scan(root).files[0])
    >>> texts[0].title
    'A'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from litm.errors import InputFormatError
from litm.retrieve._formats import EXTENSIONS, SourceText, read_bytes

__all__ = ["Scan", "SourceFile", "read_file", "scan"]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A supported file found by :func:`scan`: its key (path relative to the folder, POSIX) and its stat."""

    key: str
    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Scan:
    """What :func:`scan` found: the supported files (sorted by key) and how many others it skipped."""

    files: tuple[SourceFile, ...]
    skipped: int


def scan(folder: str | Path, *, exclude: Iterable[str | Path] = ()) -> Scan:
    """The supported files under ``folder``, sorted; hidden files and folders (``.git``) are left out.

    ``exclude`` names folders to leave out as well (the index's own folder, when it lies inside the corpus:
    its chunk files are JSON Lines and would otherwise be indexed). Symbolic links to folders are not
    followed, so a link loop cannot make the scan endless.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputFormatError(f"{root} is not a folder")
    skip = {Path(p).resolve() for p in exclude}
    found: list[SourceFile] = []
    skipped = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and (here / d).resolve() not in skip)
        for name in filenames:
            path = here / name
            if name.startswith(".") or path.suffix.lower() not in EXTENSIONS or not path.is_file():
                skipped += not name.startswith(".")
                continue
            st = path.stat()
            key = PurePosixPath(*path.relative_to(root).parts).as_posix()
            found.append(SourceFile(key, path, st.st_size, st.st_mtime_ns))
    found.sort(key=lambda f: f.key)
    return Scan(tuple(found), skipped)


def read_file(file: SourceFile) -> tuple[str, list[SourceText]]:
    """Read ``file`` once: its SHA-256 and the texts it holds."""
    data = file.path.read_bytes()
    return hashlib.sha256(data).hexdigest(), read_bytes(data, file.key)
