"""Reading document records from text: JSON Lines or one JSON array, with errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from litm.errors import InputFormatError

__all__ = ["parse_records", "read_records"]


def parse_records(text: str, *, source: str = "input") -> list[Any]:
    """Parse JSON Lines (one value per non-blank line) or a single JSON array.

    A text that starts with ``[`` is one JSON array unless more values follow it, in which case it is
    JSON Lines whose records are arrays (``[document, score]`` pairs, for example).

    Example:
        >>> parse_records('{"text": "a"}\\n"b"\\n')
        [{'text': 'a'}, 'b']
        >>> parse_records('["a", 0.9]\\n["b", 0.4]\\n')
        [['a', 0.9], ['b', 0.4]]
    """
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise InputFormatError(f"{source}: invalid JSON array at line {exc.lineno}: {exc.msg}") from None
        else:
            if not isinstance(data, list):
                raise InputFormatError(f"{source}: expected a JSON array or JSON Lines")
            return data
    records: list[Any] = []
    # Split on "\n" only: str.splitlines() also breaks on U+2028/U+0085, which JSON strings may hold raw.
    for lineno, line in enumerate(stripped.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"{source}: line {lineno} is not valid JSON: {exc.msg}") from None
    return records


def read_records(path: str | Path) -> list[Any]:
    """Read records from a file (JSON Lines or a JSON array)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFormatError(f"file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"cannot read {p}: {exc}") from None
    return parse_records(text, source=str(p))
