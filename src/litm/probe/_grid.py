"""The probe grid: tasks x lengths x depths x trials (+ a closed-book control), and its settings.

Each trial ``t`` has its own seed (``seed + t``), which picks the filler passages and the invented facts,
and its own layout (``layouts[t % len(layouts)]``), so layouts are compared on different trials of the
same cells at no extra cost. A row key names the cell and trial, so a resumed run finds what is done.

Example:
    >>> cfg = ProbeConfig(lengths=(512,), depths=(0.0, 1.0), trials=2, layouts=("plain",))
    >>> [s.key for s in plan(cfg)][:3]
    ['closed_book|needle|0|-|0|closed-book', 'closed_book|needle|0|-|1|closed-book', 'trial|needle|512|0|0|plain']
    >>> parse_depths("edge:5")
    (0.0, 0.1464, 0.5, 0.8536, 1.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Literal

from litm.errors import ProbeError

__all__ = ["MAX_DEPTHS", "ProbeConfig", "TrialSpec", "parse_depths", "parse_lengths", "plan"]

Kind = Literal["trial", "closed_book"]
Order = Literal["prefix", "grid"]
#: ``nested``: a length's filler extends the next shorter length's (probe version 2); ``independent``:
#: each length filled on its own (version 1; keep it to resume a run made before nesting).
Filler = Literal["nested", "independent"]


#: The most points a ``linear:N`` or ``edge:N`` depth grid may have: 4-decimal depths repeat beyond it.
MAX_DEPTHS = 1001


def parse_lengths(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"512,1k,4k"`` -> ``(512, 1024, 4096)`` (k = 1024); sorted, unique, each at least 16."""
    items = [str(x) for x in text] if not isinstance(text, str) else [t for t in re.split(r"[,\s]+", text) if t]
    out: set[int] = set()
    for item in items:
        # At most 12 digits on each side of the point: a trillion tokens is already no prompt length.
        m = re.fullmatch(r"(\d{1,12}(?:\.\d{1,12})?)\s*([kK]?)", item.strip())
        if not m:
            raise ProbeError(f"bad length {item!r}: use token counts such as 512, 2048 or 4k")
        # Exact arithmetic, not float: "1.5k" is 1536 and "16.9" is refused, not cut to 16.
        exact = Fraction(m.group(1)) * (1024 if m.group(2) else 1)
        if exact.denominator != 1:
            raise ProbeError(f"length {item!r} is not a whole number of tokens ({float(exact):g})")
        value = int(exact)
        if value < 16:
            raise ProbeError(f"length {value} is too short: lengths are prompt sizes in tokens")
        out.add(value)
    if not out:
        raise ProbeError("no lengths given")
    return tuple(sorted(out))


def parse_depths(text: str | Sequence[float]) -> tuple[float, ...]:
    """Depths in [0, 1]: a list (``"0,0.25,0.5"``), ``linear:N`` or ``edge:N`` (denser near both ends).

    ``edge:N`` spaces depths by a cosine so that most points sit where edge effects and artefacts live.
    """
    if isinstance(text, str):
        m = re.fullmatch(r"\s*(linear|edge|edge-dense):(\d+)\s*", text)
        if m:
            n = int(m.group(2))
            if n < 2:
                raise ProbeError("a depth grid needs at least 2 points")
            if n > MAX_DEPTHS:
                raise ProbeError(f"a depth grid of {n} points is more than the {MAX_DEPTHS} a probe can use")
            if m.group(1) == "linear":
                grid = tuple(round(i / (n - 1), 4) for i in range(n))
            else:
                grid = tuple(round((1 - math.cos(math.pi * i / (n - 1))) / 2, 4) for i in range(n))
            if len(set(grid)) < n:  # points closer than the 4 decimals a depth keeps would be one cell twice
                raise ProbeError(f"{text.strip()} repeats depths at 4 decimals: use fewer points")
            return grid
        try:
            values = [float(t) for t in re.split(r"[,\s]+", text) if t]
        except ValueError:
            raise ProbeError(f"bad depths {text!r}: use e.g. 0,0.25,0.5,0.75,1 or linear:5 or edge:7") from None
    else:
        values = [float(v) for v in text]
    for v in values:
        if not 0.0 <= v <= 1.0:
            raise ProbeError(f"depth {v} is outside [0, 1] (0 = start of the context, 1 = next to the question)")
    if not values:
        raise ProbeError("no depths given")
    return tuple(sorted(set(values)))


@dataclass(frozen=True)
class ProbeConfig:
    """What to measure. ``order`` is the schedule (``prefix``: prompts sharing a prefix back to back);
    ``filler`` how the lengths of a trial share their filler (see :data:`Filler`)."""

    tasks: tuple[str, ...] = ("needle",)
    lengths: tuple[int, ...] = (1024, 2048, 4096)
    depths: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    trials: int = 10
    layouts: tuple[str, ...] = ("plain", "buffered")
    seed: int = 0
    closed_book: bool = True
    k: int = 3
    chain_depth: float = 0.9
    max_tokens: int | None = None
    order: Order = "prefix"
    adaptive: bool = False
    min_trials: int = 4
    target_half_width: float = 0.15
    flip_risk: float = 0.05
    template: str | None = None
    filler: Filler = "nested"

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise ProbeError(f"trials must be at least 1, got {self.trials}")
        if not self.tasks:
            raise ProbeError("no tasks given")
        if not self.layouts:
            raise ProbeError("no layouts given")
        if self.order not in ("prefix", "grid"):
            raise ProbeError(f"order must be 'prefix' or 'grid', got {self.order!r}")
        if self.filler not in ("nested", "independent"):
            raise ProbeError(f"filler must be 'nested' or 'independent', got {self.filler!r}")
        object.__setattr__(self, "lengths", parse_lengths(self.lengths))
        object.__setattr__(self, "depths", parse_depths(self.depths))

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def identity(self) -> dict[str, object]:
        """The settings that shape an existing row's prompt (a resume must keep them; the grid may grow).

        ``independent`` filler is left out, as runs before version 2 did not record it. Nested filler also
        ties a length's prompts to the grid's shorter lengths: :meth:`check_growth` guards that.
        """
        out: dict[str, object] = {
            "seed": self.seed,
            "k": self.k,
            "chain_depth": self.chain_depth,
            "max_tokens": self.max_tokens,
            "template": self.template,
            "layouts": list(self.layouts),
        }
        if self.filler == "nested":
            out["filler"] = "nested"
        return out

    def check_growth(self, old_lengths: Sequence[int]) -> None:
        """Under nested filler, refuse a change of lengths that would change existing prompts.

        A length's filler extends every shorter length's, so a resumed run may add lengths above the
        longest one run, or drop the longest ones, but not add or drop one below a length it keeps.

        >>> ProbeConfig(lengths=(512, 1024, 2048)).check_growth([512, 2048])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        litm.errors.ProbeError: lengths 512, 1024, 2048 do not extend the lengths already run (512, 2048): ...
        >>> ProbeConfig(lengths=(512, 1024, 2048)).check_growth([512, 1024])  # longer lengths may be added
        """
        if self.filler != "nested" or not old_lengths:
            return
        old, new = sorted(set(old_lengths)), list(self.lengths)
        if new[: len(old)] != old and old[: len(new)] != new:
            raise ProbeError(
                f"lengths {', '.join(map(str, new))} do not extend the lengths already run "
                f"({', '.join(map(str, old))}): with nested filler that would change their prompts; change "
                "lengths above the longest only, or use another --out directory"
            )


@dataclass(frozen=True)
class TrialSpec:
    """One call: a grid cell and trial (``kind="trial"``) or a closed-book control (length 0, no depth)."""

    kind: Kind
    task: str
    length: int
    depth: float | None
    trial: int
    layout: str
    seed: int

    @property
    def key(self) -> str:
        depth = "-" if self.depth is None else f"{self.depth:g}"
        return f"{self.kind}|{self.task}|{self.length}|{depth}|{self.trial}|{self.layout}"

    @property
    def cell(self) -> tuple[str, int, float | None]:
        return (self.task, self.length, self.depth)


def plan(config: ProbeConfig) -> list[TrialSpec]:
    """Every call of the grid in grid order: closed-book controls first, then cell by cell."""
    layouts = ("custom",) if config.template else config.layouts
    out: list[TrialSpec] = []
    if config.closed_book:
        for task in config.tasks:
            for t in range(config.trials):
                out.append(TrialSpec("closed_book", task, 0, None, t, "closed-book", config.seed + t))
    for task in config.tasks:
        for length in config.lengths:
            for depth in config.depths:
                for t in range(config.trials):
                    out.append(TrialSpec("trial", task, length, depth, t, layouts[t % len(layouts)], config.seed + t))
    return out
