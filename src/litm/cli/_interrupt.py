"""Stopping a long run by hand: Ctrl-C or ``kill`` ends it with one line that says what was kept.

``litm bench`` and ``litm probe`` write each result row to disk (synced) as it is scored, so stopping one
loses nothing a ``--resume`` cannot continue. Without this, Ctrl-C printed click's bare ``Aborted!`` (exit
1) and ``kill`` ended the process without a word; a user could not tell whether the run was resumable.

``SIGTERM`` (what ``kill`` and most process managers send) is handled like Ctrl-C while the block runs.
A signal that the parent set to *ignored* stays ignored: a POSIX shell starts background jobs with
``SIGINT`` ignored, and Python keeps that, so ``kill -INT`` does not stop a ``nohup ... &`` run; ``kill``
does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import typer

__all__ = ["EXIT_INTERRUPTED", "stop_resumably"]

#: 128 + SIGINT, what shells report for a job stopped by Ctrl-C.
EXIT_INTERRUPTED = 130


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _complete_rows(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


@contextmanager
def stop_resumably(rows: Path) -> Iterator[None]:
    """Run the block; on Ctrl-C or SIGTERM print what ``rows`` holds and how to continue, then exit 130.

    >>> from pathlib import Path
    >>> with stop_resumably(Path("litm-out/bench/bench.jsonl")):
    ...     pass
    """
    # Signal handlers can only be set from the main thread; an ignored or custom SIGTERM is left alone.
    installed = (
        threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    )
    if installed:
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    except KeyboardInterrupt:
        typer.echo(
            f"litm: interrupted; {_complete_rows(rows)} rows are kept in {rows}; "
            "run the same command with --resume to continue",
            err=True,
        )
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
