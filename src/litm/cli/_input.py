"""Shared input handling for commands that read documents from a file or stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from litm.util._records import decode_text, parse_records, read_records


def read_stdin() -> str:
    """All of stdin as UTF-8 text, whatever the locale; bytes that are not UTF-8 are an ``InputFormatError``."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of stdin (by a test, or an embedding program)
        return sys.stdin.read()
    return decode_text(buffer.read(), source="stdin")


def load_input(path: Path | None) -> list[Any]:
    """Records from ``path``, or from stdin when ``path`` is None or ``-``."""
    if path is None or str(path) == "-":
        return parse_records(read_stdin(), source="stdin")
    return read_records(path)
