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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from litm.errors import EvalError

__all__ = ["ResultsLog", "changed_settings", "check_run_settings", "read_rows"]


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every complete row of a results file (a torn last line is ignored)."""
    p = Path(path)
    if not p.exists():
        raise EvalError(f"results file not found: {p}")
    return list(_iter_rows(p))


def _iter_rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("r", encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.endswith("\n"):
                return  # torn write from a killed run: not a row
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise EvalError(f"{path}:{i}: corrupt results row") from None
            if isinstance(row, dict):
                yield row


class ResultsLog:
    """The results JSONL of one run: read what is there, then append rows one at a time (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._keys: set[str] = set()
        self.rows: list[dict[str, Any]] = []
        if self.path.exists():
            self._repair()
            for row in _iter_rows(self.path):
                key = str(row.get("key"))
                if key not in self._keys:
                    self._keys.add(key)
                    self.rows.append(row)

    def _repair(self) -> None:
        """Cut a torn last line (no newline) so the next append starts on a line of its own."""
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with self.path.open("r+b") as fh:
                fh.truncate(cut)

    def keys(self) -> set[str]:
        return set(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def append(self, row: Mapping[str, Any]) -> None:
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


def changed_settings(
    path: Path, identity: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
) -> list[str]:
    """The prompt-defining settings whose value in an existing ``run.json`` differs from ``identity``.

    ``defaults`` fill in settings that older runs did not record (they ran with the then-only value).
    A missing or unreadable ``run.json`` has no recorded settings, so every key counts as changed.
    """
    try:
        old = json.loads(path.read_text(encoding="utf-8")).get("identity", {})
    except (OSError, json.JSONDecodeError):
        old = {}
    old = {**(defaults or {}), **old}
    return [k for k in sorted(set(old) | set(identity)) if old.get(k) != identity.get(k)]


def check_run_settings(
    path: Path, identity: Mapping[str, Any], *, fresh: bool, error: type[EvalError] = EvalError
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
