"""The before/after picture, done honestly: for a ranking of ``n`` documents, the accuracy of the slot each
rank lands in, in rank order (before) and after placement, read from a position profile.

A profile measured by ``litm bench`` holds the accuracy of each of its ``k`` slots (with Wilson intervals
when the profile carries them, as litm's bundled one does); one measured by ``litm probe`` holds accuracy by
relative depth, interpolated to ``n`` slots. A built-in shape (``PositionProfile.pyramid()``) is not a
measurement: the chart then says "assumed" on every line. Placement moves documents between slots, so
under any permutation the *average* over ranks is unchanged; what placement changes is which rank gets
which slot. The chart therefore also reports the expected accuracy for a retriever that usually ranks the
answer near the top (``p(rank r) ~ 1/r``, the benchmark's headline weighting).

Example:
    >>> from litm.placement import PositionProfile
    >>> p = PositionProfile.from_weights([0.5, 0.2, 0.3, 0.6], metadata={"source": "example"})
    >>> c = rank_chart(p, 4, "pyramid")
    >>> c.after_slots, c.before, c.after
    ((4, 1, 3, 2), (0.5, 0.2, 0.3, 0.6), (0.6, 0.5, 0.3, 0.2))
    >>> round(c.expected_before, 3), round(c.expected_after, 3), c.measured
    (0.408, 0.48, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from litm.errors import InvalidOptionError, InvalidProfileError
from litm.placement import PlacementOptions, PositionProfile, Strategy, place

__all__ = ["RankChart", "decaying_weights", "rank_chart"]


def decaying_weights(n: int) -> list[float]:
    """``p(rank r) ~ 1/r`` for ranks 1..n, normalised: a retriever that usually ranks the answer first.

    >>> [round(w, 3) for w in decaying_weights(3)]
    [0.545, 0.273, 0.182]
    """
    raw = [1.0 / r for r in range(1, n + 1)]
    total = sum(raw)
    return [w / total for w in raw]


@dataclass(frozen=True)
class RankChart:
    """Per rank 1..n: the slot it lands in and that slot's accuracy, before and after placement.

    ``intervals`` holds a (low, high) 95% interval per slot when the profile carries one for exactly ``n``
    slots (``metadata["slot_intervals"]``), else None. ``measured`` is False for a profile that carries no
    provenance (a built-in or hand-written shape): its numbers are assumed weights, not accuracies.
    """

    n: int
    strategy: str
    profile: str
    measured: bool
    source: str
    before_slots: tuple[int, ...]
    after_slots: tuple[int, ...]
    slot_values: tuple[float, ...]
    intervals: tuple[tuple[float, float], ...] | None
    #: How many points the profile holds: a measured profile of another size is interpolated to ``n`` slots,
    #: and the label says so (10 measured slots read for a 9-document prompt are no longer each a measurement).
    points: int = 0

    @property
    def before(self) -> tuple[float, ...]:
        """The value of the slot each rank sits in under rank order."""
        return tuple(self.slot_values[s - 1] for s in self.before_slots)

    @property
    def after(self) -> tuple[float, ...]:
        """The value of the slot each rank sits in after placement."""
        return tuple(self.slot_values[s - 1] for s in self.after_slots)

    @property
    def expected_before(self) -> float:
        """Expected accuracy in rank order when the answer's rank follows ``p(r) ~ 1/r``."""
        return sum(w * v for w, v in zip(decaying_weights(self.n), self.before, strict=True))

    @property
    def expected_after(self) -> float:
        """Expected accuracy after placement when the answer's rank follows ``p(r) ~ 1/r``."""
        return sum(w * v for w, v in zip(decaying_weights(self.n), self.after, strict=True))

    @property
    def label(self) -> str:
        """What the numbers are: measured accuracy, or an assumed weight."""
        if not self.measured:
            return "assumed weight (a built-in shape, not a measurement)"
        if self.points and self.points != self.n:
            return f"measured accuracy, interpolated from {self.points} points to {self.n} slots"
        return "measured accuracy"

    def table(self) -> str:
        """A plain-text table: rank, slot and value before and after, then the expected values."""
        unit = "acc" if self.measured else "weight"
        header = ("rank", "slot before", f"{unit} before", "slot after", f"{unit} after")
        rows = [
            (str(r + 1), str(b), self._value(b), str(a), self._value(a))
            for r, (b, a) in enumerate(zip(self.before_slots, self.after_slots, strict=True))
        ]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
        lines = [
            f"{self.label} of the slot each rank lands in: profile {self.profile} ({self.source}); "
            f"{self.n} documents, rank order vs {self.strategy}",
            "  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)),
        ]
        lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
        lines.append(
            f"expected {unit} with p(rank r) ~ 1/r: rank order {self.expected_before:.4f}, {self.strategy} "
            f"{self.expected_after:.4f} ({self.expected_after - self.expected_before:+.4f})"
        )
        return "\n".join(lines)

    def _value(self, slot: int) -> str:
        value = f"{self.slot_values[slot - 1]:.3f}"
        if self.intervals is None:
            return value
        lo, hi = self.intervals[slot - 1]
        return f"{value} [{lo:.2f}, {hi:.2f}]"

    def to_dict(self) -> dict[str, object]:
        return {
            "n": self.n, "strategy": self.strategy, "profile": self.profile, "measured": self.measured,
            "label": self.label, "source": self.source,
            "ranks": [
                {"rank": r + 1, "slot_before": self.before_slots[r], "before": self.before[r],
                 "slot_after": self.after_slots[r], "after": self.after[r]}
                for r in range(self.n)
            ],
            "intervals": None if self.intervals is None else [list(i) for i in self.intervals],
            "expected_before": self.expected_before, "expected_after": self.expected_after,
        }  # fmt: skip


def _intervals(profile: PositionProfile, n: int) -> tuple[tuple[float, float], ...] | None:
    raw = profile.metadata.get("slot_intervals")
    if not isinstance(raw, Sequence) or len(raw) != n or len(profile.points) != n:
        return None
    try:
        return tuple((float(lo), float(hi)) for lo, hi in raw)
    except (TypeError, ValueError):
        name = profile.name or "(unnamed)"
        raise InvalidProfileError(f"profile {name}: slot_intervals must be [low, high] pairs") from None


def rank_chart(
    profile: PositionProfile, n: int, strategy: str | Strategy = "pyramid", *, measured: bool | None = None
) -> RankChart:
    """The chart data for ``n`` ranked documents placed by ``strategy``, valued by ``profile``.

    ``measured`` defaults to whether the profile says where it came from (``metadata["source"]``, which
    ``litm probe`` and ``litm bench`` write); pass False to label a measured-looking profile as assumed.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidOptionError(f"n must be an integer >= 1, got {n!r}")
    if not isinstance(profile, PositionProfile):
        raise InvalidProfileError(f"profile must be a PositionProfile, got {type(profile).__name__}")
    source = str(profile.metadata.get("source") or "")
    is_measured = bool(source) if measured is None else measured
    plan = place([f"rank-{r}" for r in range(1, n + 1)], placement=PlacementOptions(strategy, profile=profile))
    after = [0] * n
    for slot in plan.slots:
        after[slot.rank - 1] = slot.slot
    return RankChart(
        n=n, strategy=plan.strategy, profile=profile.name or "(unnamed)", measured=is_measured,
        source=source or "no provenance: an assumed shape", before_slots=tuple(range(1, n + 1)),
        after_slots=tuple(after), slot_values=tuple(profile.slot_weights(n)), intervals=_intervals(profile, n),
        points=len(profile.points),
    )  # fmt: skip
