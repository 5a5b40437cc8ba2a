"""Position profiles: how much a model attends to each relative position of its context.

A profile is a piecewise-linear curve of weights over relative positions, ``0.0`` = the start of the
context and ``1.0`` = its end (next to the question). The probe measures one (per-depth accuracy); the
``profile`` placement strategy and the token gate consume it. Built-in profiles describe the shapes
the literature reports, so a user without a measurement still gets a principled order.

Slot weights are computed with exact rational arithmetic: a symmetric profile gives exactly equal
weights to mirrored slots, so ties are real ties and ``tie_break`` decides them deterministically.

Example:
    >>> p = PositionProfile.from_weights([0.9, 0.5, 0.4, 0.6, 0.95])
    >>> [round(w, 3) for w in p.slot_weights(3)]
    [0.9, 0.4, 0.95]
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from litm.errors import InvalidProfileError

__all__ = ["PROFILE_FORMAT", "PROFILE_VERSION", "PositionProfile", "TieBreak"]

PROFILE_FORMAT = "litm-position-profile"
PROFILE_VERSION = 1

TieBreak = Literal["end", "start"]


@dataclass(frozen=True)
class PositionProfile:
    """A weight per relative position, interpolated linearly between points.

    ``tie_break`` says which slot wins when two slots have equal weight: ``"end"`` (the default,
    the slot nearer the question) or ``"start"``. ``metadata`` carries provenance (the probe
    stores model, task, lengths and intervals there).
    """

    points: tuple[tuple[float, float], ...]
    tie_break: TieBreak = "end"
    name: str | None = None
    model: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)  # the JSON a probe or bench run wrote

    def __post_init__(self) -> None:
        try:
            pts = tuple((float(x), float(w)) for x, w in self.points)
        except (TypeError, ValueError) as exc:
            # PositionProfile([0.1, 0.9]) is an easy slip for from_weights([0.1, 0.9]): say so, typed.
            raise InvalidProfileError(
                f"a position profile's points are (position, weight) pairs of numbers ({exc}); "
                "for equally spaced weights use PositionProfile.from_weights([...])"
            ) from None
        if not pts:
            raise InvalidProfileError("a position profile needs at least one point")
        for x, w in pts:
            if not (math.isfinite(x) and 0.0 <= x <= 1.0):
                raise InvalidProfileError(f"profile position {x!r} is outside [0, 1]")
            if not math.isfinite(w):
                raise InvalidProfileError(f"profile weight at position {x} is {w!r}; weights must be finite")
        xs = [x for x, _ in pts]
        if len(set(xs)) != len(xs):
            raise InvalidProfileError("profile positions must be distinct")
        if self.tie_break not in ("end", "start"):
            raise InvalidProfileError(f"tie_break must be 'end' or 'start', got {self.tie_break!r}")
        object.__setattr__(self, "points", tuple(sorted(pts)))

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_weights(
        cls,
        weights: Sequence[float],
        *,
        tie_break: TieBreak = "end",
        name: str | None = None,
        model: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> PositionProfile:
        """Equally spaced weights from the start (first) to the end (last) of the context."""
        if len(weights) == 0:
            raise InvalidProfileError("a position profile needs at least one weight")
        step = max(len(weights) - 1, 1)
        return cls(
            points=tuple((i / step, float(w)) for i, w in enumerate(weights)), tie_break=tie_break, name=name,
            model=model, metadata=dict(metadata or {}),
        )  # fmt: skip

    @classmethod
    def edges(cls) -> PositionProfile:
        """U-shaped, ties to the start: reproduces the ``edges`` order (rank 1 first, rank 2 last)."""
        return cls(points=((0.0, 1.0), (0.5, 0.0), (1.0, 1.0)), tie_break="start", name="edges")

    @classmethod
    def pyramid(cls) -> PositionProfile:
        """U-shaped, ties to the end: reproduces the ``pyramid`` order (rank 1 last, rank 2 first)."""
        return cls(points=((0.0, 1.0), (0.5, 0.0), (1.0, 1.0)), tie_break="end", name="pyramid")

    @classmethod
    def primacy(cls) -> PositionProfile:
        """Strictly decreasing from the start: reproduces plain rank order."""
        return cls(points=((0.0, 1.0), (1.0, 0.0)), name="primacy")

    @classmethod
    def recency(cls) -> PositionProfile:
        """Strictly increasing toward the end: reproduces ``reverse`` (best last)."""
        return cls(points=((0.0, 0.0), (1.0, 1.0)), name="recency")

    @classmethod
    def builtin(cls, name: str) -> PositionProfile:
        """A built-in profile by name: ``edges``, ``pyramid``, ``primacy`` or ``recency``."""
        makers = {"edges": cls.edges, "pyramid": cls.pyramid, "primacy": cls.primacy, "recency": cls.recency}
        if name not in makers:
            raise InvalidProfileError(f"unknown built-in profile {name!r}; choose from {', '.join(makers)}")
        return makers[name]()

    # -- evaluation -----------------------------------------------------------------------------

    @cached_property
    def _exact_points(self) -> tuple[list[Fraction], list[Fraction]]:
        return [Fraction(p) for p, _ in self.points], [Fraction(w) for _, w in self.points]

    def _exact_weight(self, x: Fraction) -> Fraction:
        xs, ws = self._exact_points
        if x <= xs[0]:
            return ws[0]
        if x >= xs[-1]:
            return ws[-1]
        j = bisect.bisect_right(xs, x)
        x0, x1, w0, w1 = xs[j - 1], xs[j], ws[j - 1], ws[j]
        return w0 + (w1 - w0) * (x - x0) / (x1 - x0)

    def weight_at(self, position: float) -> float:
        """The interpolated weight at a relative position in [0, 1]."""
        if not 0.0 <= position <= 1.0:
            raise InvalidProfileError(f"position {position!r} is outside [0, 1]")
        return float(self._exact_weight(Fraction(position)))

    @cached_property
    def _exact_lines(self) -> list[tuple[int, int, int]]:
        """Segment ``k`` (between points ``k`` and ``k + 1``) as integers ``(A, B, D)``: ``w = (A + B x) / D``."""
        xs, ws = self._exact_points
        lines = []
        for k in range(len(xs) - 1):
            slope = (ws[k + 1] - ws[k]) / (xs[k + 1] - xs[k])
            intercept = ws[k] - slope * xs[k]
            d = math.lcm(slope.denominator, intercept.denominator)
            a = intercept.numerator * (d // intercept.denominator)
            lines.append((a, slope.numerator * (d // slope.denominator), d))
        return lines

    def exact_slot_weights(self, n: int) -> list[Fraction]:
        """Exact weights of ``n`` equally spaced slots (slot ``i`` sits at ``i / (n - 1)``).

        The same values as interpolating at ``Fraction(i, n - 1)``, computed with one integer fraction per
        slot: the slots are walked in order, so each one's segment is found by advancing, not searching.
        """
        if n <= 0:
            return []
        if n == 1:
            return [self._exact_weight(Fraction(1))]
        xs, ws = self._exact_points
        m = n - 1
        lines = self._exact_lines
        out: list[Fraction] = []
        k = 0
        for i in range(n):
            # x = i / m, compared with a point p / q as i * q against p * m (exact, in integers).
            if i * xs[0].denominator <= xs[0].numerator * m:
                out.append(ws[0])
            elif i * xs[-1].denominator >= xs[-1].numerator * m:
                out.append(ws[-1])
            else:
                while i * xs[k + 1].denominator >= xs[k + 1].numerator * m:
                    k += 1
                a, b, d = lines[k]
                out.append(Fraction(a * m + b * i, d * m))
        return out

    def cache(self, name: str) -> dict[Any, Any]:
        """A dict kept with this profile for results that depend on it alone (not part of its value).

        A profile is frozen, so what is derived from it (slot weights and orders for each ``n``) is
        computed once per profile object and reused; equality, hashing and the JSON form ignore it.
        """
        caches: dict[str, dict[Any, Any]] = self.__dict__.setdefault("_caches", {})
        return caches.setdefault(name, {})

    def slot_weights(self, n: int) -> list[float]:
        """Weights of ``n`` equally spaced slots, as floats (for reports; ordering uses exact weights)."""
        cached = self.cache("slot-weights")
        weights = cached.get(n)
        if weights is None:
            weights = tuple(self._slot_weights(n))
            if len(cached) < 1024:
                cached[n] = weights
        return list(weights)

    def _slot_weights(self, n: int) -> list[float]:
        if n <= 0:
            return []
        xs = [x for x, _ in self.points]
        ws = [w for _, w in self.points]
        out = []
        for i in range(n):
            x = 1.0 if n == 1 else i / (n - 1)
            if x <= xs[0]:
                out.append(ws[0])
            elif x >= xs[-1]:
                out.append(ws[-1])
            else:
                j = bisect.bisect_right(xs, x)
                out.append(ws[j - 1] + (ws[j] - ws[j - 1]) * (x - xs[j - 1]) / (xs[j] - xs[j - 1]))
        return out

    def slot_preference(self, n: int) -> list[int]:
        """Slot indices from most to least preferred (highest weight first, ties by ``tie_break``)."""
        cached = self.cache("slot-preference")
        if n in cached:
            return list(cached[n])
        weights = self.exact_slot_weights(n)
        direction = -1 if self.tie_break == "end" else 1
        # Compare by the correctly rounded float first and by the exact value only when the floats tie:
        # rounding keeps order (a < b implies float(a) <= float(b)), so the result is the exact order, and
        # the slow Fraction comparison runs only for real or near ties.
        preference = sorted(range(n), key=lambda i: (-float(weights[i]), -weights[i], direction * i))
        if len(cached) < 1024:
            cached[n] = tuple(preference)
        return preference

    # -- persistence ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, object]:
        """The versioned JSON form (see :data:`PROFILE_FORMAT`)."""
        out: dict[str, object] = {
            "format": PROFILE_FORMAT,
            "version": PROFILE_VERSION,
            "points": [{"position": x, "weight": w} for x, w in self.points],
            "tie_break": self.tie_break,
        }
        if self.name is not None:
            out["name"] = self.name
        if self.model is not None:
            out["model"] = self.model
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out

    @classmethod
    def from_dict(cls, data: object) -> PositionProfile:
        """Read the JSON form (anything else is an :class:`~litm.errors.InvalidProfileError`); also accepts
        ``{"weights": [...]}`` (equally spaced)."""
        if not isinstance(data, Mapping):
            raise InvalidProfileError(f"a profile must be a JSON object, got {type(data).__name__}")
        fmt = data.get("format", PROFILE_FORMAT)
        if fmt != PROFILE_FORMAT:
            raise InvalidProfileError(f"not a litm position profile (format is {fmt!r})")
        version = data.get("version", PROFILE_VERSION)
        if not isinstance(version, int) or version > PROFILE_VERSION:
            raise InvalidProfileError(
                f"profile version {version!r} is newer than this litm understands ({PROFILE_VERSION})"
            )
        common: dict[str, Any] = {
            "tie_break": data.get("tie_break", "end"),
            "name": data.get("name"),
            "model": data.get("model"),
            "metadata": dict(data.get("metadata") or {}),
        }
        try:
            if "weights" in data and "points" not in data:
                return cls.from_weights([float(w) for w in data["weights"]], **common)
            raw = data.get("points")
            if not isinstance(raw, list):
                raise InvalidProfileError("a profile needs a 'points' list (or a 'weights' list)")
            pts = tuple((float(p["position"]), float(p["weight"])) for p in raw)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidProfileError):
                raise
            raise InvalidProfileError(f"malformed profile points: {exc}") from None
        return cls(points=pts, **common)

    def save(self, path: str | Path) -> None:
        """Write the profile as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> PositionProfile:
        """Read a profile JSON file, with a typed error for a missing or malformed file."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidProfileError(f"profile file not found: {p}") from None
        except RecursionError:
            raise InvalidProfileError(f"cannot read profile {p}: JSON nested too deeply") from None
        except (OSError, ValueError) as exc:  # ValueError: undecodable bytes, bad JSON, an integer too long
            raise InvalidProfileError(f"cannot read profile {p}: {exc}") from None
        return cls.from_dict(data)
