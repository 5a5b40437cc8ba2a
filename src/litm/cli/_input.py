"""Shared input handling for commands that read documents from a file or stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from litm.util.records import parse_records, read_records


def load_input(path: Path | None) -> list[Any]:
    """Records from ``path``, or from stdin when ``path`` is None or ``-``."""
    if path is None or str(path) == "-":
        return parse_records(sys.stdin.read(), source="stdin")
    return read_records(path)
