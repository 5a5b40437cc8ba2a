"""Reading document records from text: JSON Lines or one JSON array, with errors that name the line.

Every way a text can fail to be records is an :class:`~litm.errors.InputFormatError` naming the source and the
line: bytes that are not UTF-8, JSON that does not parse, nesting deeper than the parser goes, an integer
longer than Python converts, and a ``\\ud800`` escape that leaves half of a UTF-16 surrogate pair (a string
no UTF-8 output can hold, so it would fail later, when the record is printed or written).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from litm.errors import InputFormatError

__all__ = ["decode_text", "parse_json", "parse_records", "read_records"]


def decode_text(data: bytes, *, source: str = "input") -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is kept for the parser to skip).

    Raises :class:`~litm.errors.InputFormatError` naming the first byte that is not UTF-8.

    Example:
        >>> decode_text("café".encode())
        'café'
        >>> decode_text(b"caf\\xe9", source="stdin")
        Traceback (most recent call last):
        ...
        litm.errors.InputFormatError: stdin: not UTF-8 text (byte 0xe9 at offset 3)
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


_V = TypeVar("_V")


def _unpaired_surrogate(value: object) -> bool:
    # Iterative: a value json.loads accepted may already be nested close to the recursion limit.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _check_text(value: _V, text: str, where: str) -> _V:
    if "\\u" in text and _unpaired_surrogate(value):
        raise InputFormatError(f"{where} holds an unpaired UTF-16 surrogate escape (such as \\ud800): not text")
    return value


def parse_json(text: str, *, source: str = "input") -> Any:
    """One JSON value; every way ``text`` can fail to be one is an :class:`~litm.errors.InputFormatError`.

    Example:
        >>> parse_json('{"role": "user"}')
        {'role': 'user'}
        >>> parse_json("[" * 100_000, source="--messages")
        Traceback (most recent call last):
        ...
        litm.errors.InputFormatError: --messages is not valid JSON: nested too deeply
    """
    return _loads(text, source)


def _loads(text: str, where: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"{where} is not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputFormatError(f"{where} is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer longer than sys.get_int_max_str_digits()
        raise InputFormatError(f"{where} is not valid JSON: {exc}") from None
    return _check_text(value, text, where)


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
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError:
        raise InputFormatError(f"{source}: not UTF-8 text (it holds undecodable bytes)") from None
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise InputFormatError(f"{source}: invalid JSON array at line {exc.lineno}: {exc.msg}") from None
        except (RecursionError, ValueError):  # too deep, or an integer too long: _loads says which
            _loads(stripped, f"{source}: the JSON array")
        else:
            if not isinstance(data, list):
                raise InputFormatError(f"{source}: expected a JSON array or JSON Lines")
            return list(_check_text(data, stripped, f"{source}: the JSON array"))
    records: list[Any] = []
    # Split on "\n" only: str.splitlines() also breaks on U+2028/U+0085, which JSON strings may hold raw.
    for lineno, line in enumerate(stripped.split("\n"), start=1):
        if not line.strip():
            continue
        records.append(_loads(line, f"{source}: line {lineno}"))
    return records


def read_records(path: str | Path) -> list[Any]:
    """Read records from a file (JSON Lines or a JSON array)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputFormatError(f"file not found: {p}") from None
    except OSError as exc:
        raise InputFormatError(f"cannot read {p}: {exc.strerror or exc}") from None
    return parse_records(decode_text(data, source=str(p)), source=str(p))
