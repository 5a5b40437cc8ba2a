"""Progress reporting for long runs (probe, bench): a live bar on a terminal, plain log lines otherwise.

A run started with ``nohup ... > log 2>&1 &`` or under CI has no terminal, and a live bar there prints
nothing until the end, so a 40-minute benchmark looks hung. :func:`progress` therefore picks a rich bar when
stderr is a terminal and, when it is not, writes one line per task at most every ``interval`` seconds (and
when the task finishes) with counts, elapsed time and an ETA.

Example:
    >>> with progress("bench", enabled=False) as bar:
    ...     task = bar.add_task("slots", total=3)
    ...     bar.advance(task)
    ...     bar.total(task)
    3
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported when a live bar is shown
    from rich.progress import TaskID

__all__ = ["LineProgress", "Progress", "RichProgress", "format_duration", "progress"]


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``: short enough for a log line.

    >>> [format_duration(s) for s in (42, 185, 3720)]
    ['42s', '3m05s', '1h02m']
    """
    s = max(round(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """Counts per task; the base class reports nothing (``--no-progress``)."""

    def __init__(self) -> None:
        self._done: list[int] = []
        self._total: list[int] = []
        self._names: list[str] = []
        self._started: list[float] = []

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    def add_task(self, name: str, total: int) -> int:
        """Start a task of ``total`` steps; returns its id."""
        self._names.append(name)
        self._done.append(0)
        self._total.append(max(int(total), 0))
        self._started.append(time.monotonic())
        return len(self._names) - 1

    def advance(self, task: int, steps: int = 1) -> None:
        """Record ``steps`` more finished steps."""
        self._done[task] += steps

    def set_total(self, task: int, total: int) -> None:
        """Change a task's size (an adaptive probe drops work it no longer needs)."""
        self._total[task] = max(int(total), 0)

    def total(self, task: int) -> int:
        """The task's current size."""
        return self._total[task]

    def done(self, task: int) -> int:
        """Steps finished so far."""
        return self._done[task]


class LineProgress(Progress):
    """One plain line per task every ``interval`` seconds and at the end: for logs, nohup and CI."""

    def __init__(self, label: str, stream: IO[str] | None = None, interval: float = 30.0) -> None:
        super().__init__()
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last: list[float] = []

    def add_task(self, name: str, total: int) -> int:
        task = super().add_task(name, total)
        self._last.append(time.monotonic())
        self._write(task)
        return task

    def advance(self, task: int, steps: int = 1) -> None:
        super().advance(task, steps)
        now = time.monotonic()
        if self._done[task] >= self._total[task] or now - self._last[task] >= self.interval:
            self._last[task] = now
            self._write(task)

    def line(self, task: int) -> str:
        """``bench slots: 120/840 (14%), elapsed 4m00s, ETA 24m00s``."""
        done, total = self._done[task], self._total[task]
        elapsed = time.monotonic() - self._started[task]
        text = f"{self.label} {self._names[task]}: {done}/{total}"
        if total:
            text += f" ({100 * done // total}%)"
        text += f", elapsed {format_duration(elapsed)}"
        if 0 < done < total:
            text += f", ETA {format_duration(elapsed / done * (total - done))}"
        return text

    def _write(self, task: int) -> None:
        print(self.line(task), file=self.stream, flush=True)


class RichProgress(Progress):
    """A live rich bar on stderr, for an interactive terminal."""

    def __init__(self, label: str) -> None:
        super().__init__()
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            TextColumn(f"{label} {{task.description}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._ids: list[TaskID] = []

    def __enter__(self) -> Progress:
        self._bar.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._bar.__exit__(exc_type, exc, tb)

    def add_task(self, name: str, total: int) -> int:
        task = super().add_task(name, total)
        self._ids.append(self._bar.add_task(name, total=total))
        return task

    def advance(self, task: int, steps: int = 1) -> None:
        super().advance(task, steps)
        self._bar.advance(self._ids[task], steps)

    def set_total(self, task: int, total: int) -> None:
        super().set_total(task, total)
        self._bar.update(self._ids[task], total=self.total(task))


def progress(label: str, *, enabled: bool = True, stream: IO[str] | None = None, interval: float = 30.0) -> Progress:
    """The right reporter for ``stream`` (default stderr): a bar on a terminal, log lines otherwise, or none."""
    if not enabled:
        return Progress()
    out = stream if stream is not None else sys.stderr
    if stream is None and out.isatty():
        return RichProgress(label)
    return LineProgress(label, out, interval)
