"""Files that are either fully written or not there: a reader never sees half of one.

Everything litm writes that another process may read while it is being written (assembled model files,
their verification markers, the tokenizer cache, rewritten result logs) goes through
:func:`atomic_writer`: the data lands in a temporary file in the same folder, is flushed to disk, and is
renamed over the target only when the block finishes without an error. On an error the temporary file is
removed and the old target, if any, is untouched.

Example:
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> atomic_write(target, "hello\\n")
    >>> target.read_text()
    'hello\\n'
    >>> sha256_file(target)[:12]
    '5891b5b522d5'
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write", "atomic_writer", "sha256_file"]

_BLOCK = 1 << 20


@contextmanager
def atomic_writer(target: str | Path) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``target`` atomically when the block ends cleanly.

    The parent folder is created when missing. Raising inside the block (for example because a hash
    does not match) discards what was written.
    """
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        # Rename last, so that a reader in any process sees the old file or the whole new one.
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(target: str | Path, data: bytes | str) -> None:
    """Replace ``target`` with ``data`` (text is written as UTF-8) atomically."""
    with atomic_writer(target) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def sha256_file(path: str | Path) -> str:
    """The SHA-256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()
