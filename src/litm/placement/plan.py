"""The result of a placement: the caller's items in their new order, and why each one is there.

A plan is a frozen value: its sequences are tuples, two plans of the same placement compare equal, and
a plan hashes (by everything but the caller's own objects, which may be dicts).

Example:
    >>> from litm.placement import place
    >>> hits = [("far", 0.9), ("near", 0.1), ("mid", 0.4), ("farthest", 1.3)]  # (text, distance) pairs
    >>> plan = place(hits, rank_by="score", higher_is_better=False)
    >>> [(s.doc.text, s.score, round(s.relevance, 3)) for s in plan.slots]
    [('mid', 0.4, 0.75), ('farthest', 1.3, 0.0), ('far', 0.9, 0.333), ('near', 0.1, 1.0)]
    >>> again = place(list(hits), rank_by="score", higher_is_better=False)
    >>> plan == again, hash(plan) == hash(again), plan.items[-1]
    (True, True, ('near', 0.1))
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from litm.placement.documents import Doc
from litm.placement.ranking import Dropped

__all__ = ["PlacementPlan", "SlotInfo"]


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """One slot of a plan: which ranked document sits there, its slot weight, and a reason.

    ``score`` is the document's raw score, in whatever direction the retriever uses (a distance is
    lower-is-better); ``relevance`` is that score rescaled to [0, 1] with the direction applied, 1.0 for
    the best placed document and 0.0 for the worst (``None`` when unscored; see
    :mod:`litm.placement.ranking`). Show a model ``relevance``, never a raw distance.
    """

    slot: int
    rank: int
    input_index: int
    doc: Doc
    weight: float
    reason: str
    relevance: float | None = None

    @property
    def id(self) -> str:
        return self.doc.id

    @property
    def score(self) -> float | None:
        return self.doc.score

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "rank": self.rank,
            "input_index": self.input_index,
            "id": self.doc.id,
            "score": self.doc.score,
            "relevance": self.relevance,
            "weight": self.weight,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class PlacementPlan:
    """Placed items plus a per-slot explanation; JSON-serialisable via :meth:`to_dict`.

    ``items`` are the caller's own objects in the new order, ``docs`` the same as :class:`Doc`
    values, ``dropped`` what ranking removed (duplicates, beyond ``top_k``) with reasons, and
    ``note`` a remark on the whole plan (for example "below min_docs: rank order kept"). ``list(plan)``
    or ``list(plan.items)`` gives a list for APIs that want one.
    """

    strategy: str
    slots: tuple[SlotInfo, ...]
    items: tuple[Any, ...] = field(hash=False)
    dropped: tuple[Dropped, ...] = ()
    note: str | None = None
    profile_name: str | None = None

    def __post_init__(self) -> None:
        # Any sequence is accepted, but the frozen plan keeps a tuple, so nobody can reorder it in place.
        if not isinstance(self.items, tuple):
            object.__setattr__(self, "items", tuple(self.items))

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    @property
    def docs(self) -> list[Doc]:
        return [s.doc for s in self.slots]

    @property
    def ranks(self) -> list[int]:
        """The input rank found in each slot, e.g. ``[1, 3, 5, 6, 4, 2]`` for ``edges``."""
        return [s.rank for s in self.slots]

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "profile": self.profile_name,
            "note": self.note,
            "slots": [s.to_dict() for s in self.slots],
            "dropped": [
                {"id": d.doc.id, "input_index": d.input_index, "reason": d.reason} for d in self.dropped
            ],
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def explain(self, *, max_id: int = 24) -> str:
        """A readable plain-text table of the plan, with dropped items and the note below it."""
        header = ("slot", "rank", "id", "score", "relevance", "weight", "reason")
        rows = [
            (
                str(s.slot),
                str(s.rank),
                _clip(s.doc.id, max_id),
                "-" if s.doc.score is None else f"{s.doc.score:.4g}",
                "-" if s.relevance is None else f"{s.relevance:.3f}",
                f"{s.weight:.3f}",
                s.reason,
            )
            for s in self.slots
        ]
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
        lines = [f"strategy: {self.strategy} ({len(self.slots)} documents)"]
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
        for d in self.dropped:
            lines.append(f"dropped {d.doc.id} (item {d.input_index}): {d.reason}")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
