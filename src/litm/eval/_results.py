"""Append-only results: one JSON line per trial, flushed and synced as it is written.

A run killed at any point loses at most the row being written: a half-written last line is cut off on
the next open, and the row keys already present are skipped, so a restarted run neither repeats nor
duplicates a trial. ``run.json`` beside the results records the settings; a resume with settings that
would change the prompts of existing rows is refused rather than mixed into one file.

Example:
    >>> import tempfile, pathlib
    >>> log = ResultsLog(pathlib.Path(tempfile.mkdtemp()) / "results.jsonl")
    >>> log.append({"key": "a", "hit": True})
    >>> sorted(log.keys())
    ['a']
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from litm.errors import EvalError

__all__ = ["ResultsLog", "changed_settings", "check_run_settings", "read_rows", "read_settings"]


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every complete row of a results file (a torn last line is ignored).

    Anything else that is not a row (bytes that are not UTF-8, a line that is not a JSON object) is an
    :class:`~litm.errors.EvalError` naming the file and the line: a results file is written only by litm, so
    such a line means the file was damaged, and skipping it would report a different run than the one made.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise EvalError(f"results file not found: {p}") from None
    except OSError as exc:
        raise EvalError(f"cannot read results file {p}: {exc.strerror or exc}") from None
    return _parse_rows(p, data)[0]


def _parse_rows(path: Path, data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The rows of ``data`` and the length of its complete lines (what is left when a torn last line is cut)."""
    complete = data.rfind(b"\n") + 1
    rows: list[dict[str, Any]] = []
    for i, line in enumerate(data[:complete].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        where = f"{path}:{i}: corrupt results row"
        try:
            row = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise EvalError(f"{where} (not UTF-8 text)") from None
        except RecursionError:
            raise EvalError(f"{where} (nested too deeply)") from None
        except ValueError as exc:
            raise EvalError(f"{where} ({exc})") from None
        if not isinstance(row, dict):
            raise EvalError(f"{where} (a JSON {type(row).__name__}, not an object)")
        rows.append(row)
    return rows, complete


class ResultsLog:
    """The results JSONL of one run: read what is there, then append rows one at a time (thread-safe).

    Opening a file whose last line is torn (a run killed while writing it) cuts that line off; any other
    damage is an :class:`~litm.errors.EvalError` and leaves the file as it was.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._keys: set[str] = set()
        self.rows: list[dict[str, Any]] = []
        if self.path.exists():
            rows = self._read()
            for i, row in enumerate(rows, start=1):
                if "key" not in row:
                    raise EvalError(f"{self.path}: row {i} has no 'key': not a results row")
                key = str(row["key"])
                if key not in self._keys:
                    self._keys.add(key)
                    self.rows.append(row)

    def _read(self) -> list[dict[str, Any]]:
        """The rows; then a torn last line (no newline) is cut so the next append starts on a line of its own."""
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise EvalError(f"cannot read results file {self.path}: {exc.strerror or exc}") from None
        rows, complete = _parse_rows(self.path, data)
        if complete < len(data):
            with self.path.open("r+b") as fh:
                fh.truncate(complete)
        return rows

    def keys(self) -> set[str]:
        return set(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def append(self, row: Mapping[str, object]) -> None:
        """Write one row and make it durable before returning (a killed run keeps every finished row)."""
        key = str(row["key"])
        line = json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n"
        with self._lock:
            if key in self._keys:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self._keys.add(key)
            self.rows.append(dict(row))


def read_settings(path: str | Path) -> dict[str, Any]:
    """A run's ``run.json`` as a dict; a missing, unreadable or damaged file is an :class:`EvalError`.

    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = bad.write_text("[1, 2]")
    >>> read_settings(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    litm.errors.EvalError: cannot read .../run.json: a JSON list, not an object
    """
    p = Path(path)
    try:
        data = json.loads(p.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise EvalError(f"cannot read {p}: no such file") from None
    except OSError as exc:
        raise EvalError(f"cannot read {p}: {exc.strerror or exc}") from None
    except RecursionError:
        raise EvalError(f"cannot read {p}: JSON nested too deeply") from None
    except ValueError as exc:  # not UTF-8, not JSON, an integer too long
        raise EvalError(f"cannot read {p}: {exc}") from None
    if not isinstance(data, dict):
        kind = "list" if isinstance(data, list) else "string" if isinstance(data, str) else type(data).__name__
        raise EvalError(f"cannot read {p}: a JSON {kind}, not an object")
    return data


def changed_settings(
    path: Path, identity: Mapping[str, object], *, defaults: Mapping[str, object] | None = None
) -> list[str]:
    """The prompt-defining settings whose value in an existing ``run.json`` differs from ``identity``.

    ``defaults`` fill in settings that older runs did not record (they ran with the then-only value).
    A missing or unreadable ``run.json`` has no recorded settings, so every key counts as changed.
    """
    try:
        old = read_settings(path).get("identity", {})
    except EvalError:
        old = {}
    old = {**(defaults or {}), **(old if isinstance(old, dict) else {})}
    return [k for k in sorted(set(old) | set(identity)) if old.get(k) != identity.get(k)]


def check_run_settings(
    path: Path, identity: Mapping[str, object], *, fresh: bool, error: type[EvalError] = EvalError
) -> None:
    """Check that an existing run in ``path``'s folder was made with the same prompt-defining settings.

    A mismatch raises ``error`` (the caller's own type: :class:`~litm.probe.ProbeError` for the probe).
    """
    if path.exists() and not fresh:
        diffs = changed_settings(path, identity)
        if diffs:
            raise error(
                f"{path.parent} holds a run with different settings ({', '.join(diffs)}); "
                "use another --out directory or --fresh to start over"
            )
