"""The result of a placement: the caller's items in their new order, and why each one is there.

A plan is a frozen value: its sequences are tuples, two plans of the same placement compare equal, and
a plan hashes (by everything but the caller's own objects, which may be dicts).

Example:
    >>> from litm.placement import PlacementOptions, place
    >>> hits = [("far", 0.9), ("near", 0.1), ("mid", 0.4), ("farthest", 1.3)]  # (text, distance) pairs
    >>> distances = PlacementOptions(rank_by="score", higher_is_better=False)
    >>> plan = place(hits, placement=distances)
    >>> [(s.doc.text, s.score, round(s.relevance, 3)) for s in plan.slots]
    [('near', 0.1, 1.0), ('far', 0.9, 0.333), ('farthest', 1.3, 0.0), ('mid', 0.4, 0.75)]
    >>> again = place(list(hits), placement=distances)
    >>> plan == again, hash(plan) == hash(again), plan.items[-1]
    (True, True, ('mid', 0.4))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import Any

from litm.placement._documents import Doc
from litm.placement._ranking import Dropped

__all__ = ["Explainer", "PlacementPlan", "SlotInfo"]


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """One slot of a plan: which ranked document sits there, its slot weight, and a reason.

    ``score`` is the document's raw score, in whatever direction the retriever uses (a distance is
    lower-is-better); ``relevance`` is that score rescaled to [0, 1] with the direction applied, 1.0 for
    the best placed document and 0.0 for the worst (``None`` when unscored; see
    :mod:`litm.placement._ranking`). Show a model ``relevance``, never a raw distance.
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

    def to_dict(self) -> dict[str, object]:
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


#: What a deferred plan calls once, on first use: its ``(slots, dropped, profile_name)``.
Explainer = Callable[[], tuple[tuple[SlotInfo, ...], tuple[Dropped, ...], str | None]]


class PlacementPlan:
    """Placed items plus a per-slot explanation; JSON-serialisable via :meth:`to_dict`.

    ``items`` are the caller's own objects in the new order, ``docs`` the same as :class:`Doc`
    values, ``dropped`` what ranking removed (duplicates, beyond ``top_k``) with reasons, and
    ``note`` a remark on the whole plan (for example "below min_docs: rank order kept"). ``list(plan)``
    or ``list(plan.items)`` gives a list for APIs that want one. ``model`` is the model spec the plan was
    placed for (``PlacementOptions(model=...)``; None when none was given): the prompt builder picks that
    model's anchors by it (:func:`litm.prompt.anchors_for`), so a plan and its prompt follow one spec.

    A plan is a frozen value (it compares, hashes and pickles by its fields; ``items`` take no part in the
    hash). ``place()`` computes the explanation (``slots``, ``dropped``, ``profile_name``) when it is first
    asked for, not on every call: it reads the items then, so an item changed after placing is explained
    as it is at that moment (the order, ``items`` and ``note`` are fixed when the plan is made).
    """

    __slots__ = ("_dropped", "_explain", "_profile_name", "_slots", "items", "model", "note", "strategy")

    strategy: str
    #: The caller's own objects, of whatever type they gave (a plan is not generic in it).
    items: tuple[Any, ...]
    note: str | None
    model: str | None
    _slots: tuple[SlotInfo, ...]
    _dropped: tuple[Dropped, ...]
    _profile_name: str | None
    _explain: Explainer | None

    def __init__(
        self,
        strategy: str,
        slots: Sequence[SlotInfo],
        items: Sequence[object] = (),
        dropped: Sequence[Dropped] = (),
        note: str | None = None,
        profile_name: str | None = None,
        model: str | None = None,
    ) -> None:
        # Every sequence is accepted, but the frozen plan keeps tuples, so nobody can reorder it in place.
        init = object.__setattr__
        init(self, "strategy", strategy)
        init(self, "items", items if isinstance(items, tuple) else tuple(items))
        init(self, "note", note)
        init(self, "model", model)
        init(self, "_slots", tuple(slots))
        init(self, "_dropped", tuple(dropped))
        init(self, "_profile_name", profile_name)
        init(self, "_explain", None)

    @classmethod
    def deferred(
        cls, strategy: str, items: tuple[object, ...], note: str | None, explain: Explainer, model: str | None = None
    ) -> PlacementPlan:
        """A plan whose ``(slots, dropped, profile_name)`` ``explain()`` computes on first use."""
        plan = object.__new__(cls)
        init = object.__setattr__
        init(plan, "strategy", strategy)
        init(plan, "items", items)
        init(plan, "note", note)
        init(plan, "model", model)
        init(plan, "_slots", ())
        init(plan, "_dropped", ())
        init(plan, "_profile_name", None)
        init(plan, "_explain", explain)
        return plan

    def _resolved(self) -> PlacementPlan:
        explain = self._explain
        if explain is not None:
            slots, dropped, name = explain()
            init = object.__setattr__
            init(self, "_slots", slots)
            init(self, "_dropped", dropped)
            init(self, "_profile_name", name)
            init(self, "_explain", None)
        return self

    @property
    def slots(self) -> tuple[SlotInfo, ...]:
        return self._resolved()._slots

    @property
    def dropped(self) -> tuple[Dropped, ...]:
        return self._resolved()._dropped

    @property
    def profile_name(self) -> str | None:
        return self._resolved()._profile_name

    def _key(self) -> tuple[object, ...]:
        return (self.strategy, self.slots, self.dropped, self.note, self.profile_name, self.model)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlacementPlan):
            return NotImplemented
        return self._key() == other._key() and self.items == other.items

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"PlacementPlan(strategy={self.strategy!r}, slots={self.slots!r}, items={self.items!r}, "
            f"dropped={self.dropped!r}, note={self.note!r}, profile_name={self.profile_name!r}, model={self.model!r})"
        )

    def __reduce__(self) -> tuple[type[PlacementPlan], tuple[object, ...]]:
        return (
            PlacementPlan,
            (self.strategy, self.slots, self.items, self.dropped, self.note, self.profile_name, self.model),
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    @property
    def docs(self) -> list[Doc]:
        return [s.doc for s in self.slots]

    @property
    def ranks(self) -> list[int]:
        """The input rank found in each slot, e.g. ``[1, 3, 5, 6, 4, 2]`` for ``edges``."""
        return [s.rank for s in self.slots]

    def to_dict(self) -> dict[str, object]:
        return {
            "strategy": self.strategy,
            "profile": self.profile_name,
            "note": self.note,
            "model": self.model,
            "slots": [s.to_dict() for s in self.slots],
            "dropped": [{"id": d.doc.id, "input_index": d.input_index, "reason": d.reason} for d in self.dropped],
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

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
