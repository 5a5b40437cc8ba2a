"""Structural anchors: which anchors a prompt carries, the middle zone, and the relevance a header shows.

:class:`AnchorOptions` holds every anchor choice: the anchor **style** (how a document block is
written, see :mod:`litm.prompt._styles`), the header fields (position, score, title and source), closing
ids, the middle-zone marker and how the zone is found, and the closing recap of ids. By default a block
shows the document's id and title and nothing else; the ``xml`` style writes it in three lines::

    <document id="nq-0" title="Nobel Prize" source="NQ-Open">
    The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen ...
    </document>

Position, score, closing id and recap are off by default because issue 41's ablation found no benefit from
any of them on the models litm can run, and the full set lowered accuracy or the gold answer's likelihood
against Liu et al.'s plain format (``docs/anchor-evidence.md``). Each can be switched back on.

The score a header shows is a *relevance* in [0, 1] where 1 is the best document (see
:func:`shown_score`), never a raw distance, or the rank alone with ``score_as="rank"``.

Example:
    >>> sorted(middle_slots(6, width=0.5))
    [3, 4]
    >>> sorted(middle_slots(6, profile=PositionProfile.pyramid()))
    [3, 4]
    >>> AnchorOptions(style="bracket", positions=False).style
    'bracket'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from litm.errors import InvalidProfileError, PromptOptionError
from litm.placement import PositionProfile
from litm.placement._plan import SlotInfo
from litm.prompt._fields import checked_keys, construct, field_values, replace_fields

__all__ = [
    "SCORE_AS",
    "SHORT_ID_CHARS",
    "STYLES",
    "AnchorOptions",
    "ScoreAs",
    "Style",
    "format_score",
    "middle_slots",
    "shown_ids",
    "shown_score",
    "slot_relevance",
]

Style = Literal["xml", "liu", "bracket"]
#: The anchor styles: litm's XML-like tags (the default), Liu et al.'s numbered search results, and
#: the field report's ``[DOC_ID: x | REL_SCORE: s]`` ... ``[/DOC_ID: x]`` brackets.
STYLES: tuple[str, ...] = ("xml", "liu", "bracket")

ScoreAs = Literal["relevance", "raw", "rank"]
#: What a header's score field shows: the relevance in [0, 1] (1 = best; the default), the score as the
#: retriever gave it, or the rank alone (1 = best).
SCORE_AS: tuple[str, ...] = ("relevance", "raw", "rank")

_FLAGS = ("positions", "scores", "sources", "closing_ids", "middle_marker", "recap", "short_ids")

#: The longest document id a prompt shows as given (with ``short_ids``, the default). The benchmark's
#: ``doc-12`` and a chunk id such as ``context_managers.md#0`` stay: a name tells the model something, and
#: numbers in their place sent the embedded Gemma 270M into "1. 1. 1. ..." on the shipped Chinese example. A
#: UUID (36 characters, LangChain and LlamaIndex) or a SHA-256 (64, Haystack) tells it nothing and costs 20 to
#: 45 tokens each time it is shown (header, closing tag, recap).
SHORT_ID_CHARS = 32


@dataclass(frozen=True)
class AnchorOptions:
    """Which anchors a prompt carries and how they look.

    ``positions`` (``position="3/10"``), ``scores`` (shown only for documents that have one, as
    ``score_as`` says), ``sources`` (title and source, when present), ``closing_ids`` (the closing
    tag names the id; off: a bare closing tag), ``middle_marker`` (``zone="middle"`` on middle-zone
    documents, plus a note in the instruction) and ``recap`` (a closing line listing every id for
    citations). The document id itself is always in the header: it is what citations and parsing
    rely on, and every text is escaped whatever the options.

    The defaults show the id and the title (and source) only. In the committed element ablation no element
    helped, and with this set no answer moved measurably; by the gold answer's likelihood it is below the
    plain format on one run (Qwen 0.5B, NQ) and above it on another (Gemma 270M, NQ); see
    ``docs/anchor-evidence.md``. It costs 7 to 9 tokens a document beyond the plain format, the full set 33 to 36.
    ``AnchorOptions(positions=True, scores=True, closing_ids=True, recap=True)`` is the full set litm shipped
    before.

    >>> AnchorOptions().positions, AnchorOptions().sources, AnchorOptions(recap=True).recap
    (False, True, True)

    The middle zone is the central ``middle_width`` of relative positions (default 0.5) or, given
    ``middle_profile`` (a measured :class:`~litm.placement.PositionProfile`), the slots whose
    weight lies in its lowest ``middle_threshold`` fraction (see :func:`middle_slots`).

    ``style`` picks the block format (:data:`STYLES`). Each style shows the fields it has room for:
    ``liu`` ("Document [i](Title: t) text") shows the number and title only, and refuses
    ``middle_marker=True`` (the format has no place for it).

    ``short_ids`` (default True): when a document's id is longer than :data:`SHORT_ID_CHARS` characters,
    the prompt shows every document by its slot instead (``1``..``k``, in header, closing tag and recap),
    and a citation of that number maps back to the document's own id (see :func:`shown_ids`). False shows
    the ids as given, however long.
    """

    positions: bool = False
    scores: bool = False
    sources: bool = True
    closing_ids: bool = False
    middle_marker: bool = False
    recap: bool = False
    middle_width: float = field(default=0.5, kw_only=True)
    middle_profile: PositionProfile | None = field(default=None, kw_only=True)
    middle_threshold: float = field(default=0.5, kw_only=True)
    style: Style = field(default="xml", kw_only=True)
    score_as: ScoreAs = field(default="relevance", kw_only=True)
    short_ids: bool = field(default=True, kw_only=True)

    def __post_init__(self) -> None:
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise PromptOptionError(f"anchor option {name!r} must be True or False, got {getattr(self, name)!r}")
        if self.style not in STYLES:
            raise PromptOptionError(f"unknown anchor style {self.style!r}; choose from {', '.join(STYLES)}")
        if self.score_as not in SCORE_AS:
            raise PromptOptionError(f"score_as must be one of {', '.join(SCORE_AS)}, got {self.score_as!r}")
        if self.middle_profile is not None and not isinstance(self.middle_profile, PositionProfile):
            raise PromptOptionError(
                f"middle_profile must be a PositionProfile, got {type(self.middle_profile).__name__}"
            )
        middle_slots(3, width=self.middle_width, threshold=self.middle_threshold)  # validates both numbers
        # Stored as floats so that 1 and 1.0 make equal options (and equal serialisations).
        object.__setattr__(self, "middle_width", float(self.middle_width))
        object.__setattr__(self, "middle_threshold", float(self.middle_threshold))
        if self.style == "liu" and self.middle_marker:
            raise PromptOptionError("the liu style has no place for a middle-zone marker; use style 'xml' or 'bracket'")

    def replace(self, **changes: object) -> AnchorOptions:
        """A copy with ``changes`` applied (validated like new options)."""
        return replace_fields(self, changes)

    def middle(self, n: int) -> frozenset[int]:
        """The slots of ``n`` this prompt marks as middle zone (none without ``middle_marker``)."""
        if not self.middle_marker:
            return frozenset()
        return middle_slots(n, width=self.middle_width, profile=self.middle_profile, threshold=self.middle_threshold)

    def to_dict(self) -> dict[str, object]:
        """Every field, JSON-ready (the profile in its own versioned form); :meth:`from_dict` reads it."""
        out = field_values(self)
        out["middle_profile"] = None if self.middle_profile is None else self.middle_profile.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: object) -> AnchorOptions:
        """Options from :meth:`to_dict`'s form; missing keys take their defaults, unknown keys are refused."""
        values = checked_keys(cls, data, "anchors")
        profile = values.get("middle_profile")
        if profile is not None:
            try:
                values["middle_profile"] = PositionProfile.from_dict(profile)
            except InvalidProfileError as exc:
                raise PromptOptionError(f"anchors.middle_profile: {exc}") from None
        return construct(cls, values)


def shown_ids(ids: Sequence[str], short_ids: bool = True) -> tuple[str, ...]:
    """The ids a prompt shows for documents with these ``ids`` (in slot order).

    The ids themselves when ``short_ids`` is off or every id has at most :data:`SHORT_ID_CHARS`
    characters; otherwise the slots ``1``..``k`` for all of them. All or none: a number shown for one
    document could otherwise equal another document's own short id.

    Example:
        >>> shown_ids(["doc-1", "doc-2"])
        ('doc-1', 'doc-2')
        >>> shown_ids(["9a3e0c7e-51f4-4f0e-a7f4-3f5e2b8f1c2d", "b"])
        ('1', '2')
        >>> shown_ids(["9a3e0c7e-51f4-4f0e-a7f4-3f5e2b8f1c2d"], short_ids=False)
        ('9a3e0c7e-51f4-4f0e-a7f4-3f5e2b8f1c2d',)
    """
    if not short_ids or all(len(i) <= SHORT_ID_CHARS for i in ids):
        return tuple(ids)
    return tuple(str(slot) for slot in range(1, len(ids) + 1))


def format_score(score: float) -> str:
    """A score as shown in a header: three significant digits (``0.857``, ``12.3``, ``1``)."""
    return f"{score:.3g}"


def slot_relevance(slot: SlotInfo) -> float | None:
    """The relevance placement computed for a slot: in [0, 1], 1 for the best document, None unscored.

    The one place that reads it: plans from a litm without ``SlotInfo.relevance`` give None here, and
    :func:`shown_score` then falls back to the document's own score.
    """
    value = getattr(slot, "relevance", None)
    return None if value is None else float(value)


def shown_score(slot: SlotInfo, score_as: ScoreAs) -> tuple[Literal["score", "rank"], str] | None:
    """What a header shows for a slot's score, as ``(kind, text)``, or None when it shows nothing.

    ``relevance``: the slot's relevance (never a raw distance: 1 is the best document whichever way the
    retriever scores), or the document's score where no relevance was computed. ``raw``: the
    document's score as given. ``rank``: the rank (1 = best), for every document.

    Example:
        >>> from litm.placement import place
        >>> slot = place([{"text": "x", "score": 0.25}], "none").slots[0]
        >>> shown_score(slot, "rank"), shown_score(slot, "raw")
        (('rank', '1'), ('score', '0.25'))
    """
    if score_as == "rank":
        return "rank", str(slot.rank)
    value = slot.doc.score if score_as == "raw" else slot_relevance(slot)
    if value is None:
        value = slot.doc.score
    return None if value is None else ("score", format_score(value))


def middle_slots(
    n: int,
    *,
    width: float = 0.5,
    profile: PositionProfile | None = None,
    threshold: float = 0.5,
) -> frozenset[int]:
    """The 1-based slots of ``n`` that lie in the middle zone.

    Without a profile, slot ``s`` sits at relative position ``(s - 1) / (n - 1)`` and is in the zone
    when that lies strictly within ``width / 2`` of the centre (``width=0.5`` marks slots 3-4 of 6,
    4-7 of 10; ``0`` marks none). With a measured :class:`~litm.placement.PositionProfile`, a slot is
    in the zone when its weight lies in the lowest ``threshold`` fraction of the range of weights
    over the ``n`` slots (a flat profile marks none). Fewer than three documents have no middle.
    """
    if not (isinstance(width, (int, float)) and not isinstance(width, bool) and math.isfinite(width)
            and 0.0 <= width <= 1.0):
        raise PromptOptionError(f"middle_width must be a number in [0, 1], got {width!r}")
    if not (isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and math.isfinite(threshold)
            and 0.0 < threshold <= 1.0):
        raise PromptOptionError(f"middle_threshold must be a number in (0, 1], got {threshold!r}")
    if n < 3:
        return frozenset()
    if profile is not None:
        weights = profile.slot_weights(n)
        low, high = min(weights), max(weights)
        if high - low <= 1e-12 * max(1.0, abs(high)):
            return frozenset()
        # The tolerance keeps a weight sitting exactly on the cut out of the zone despite rounding.
        cut = low + threshold * (high - low) - 1e-9 * (high - low)
        return frozenset(s + 1 for s, w in enumerate(weights) if w < cut)
    half = width / 2
    return frozenset(s + 1 for s in range(n) if abs(s / (n - 1) - 0.5) < half - 1e-9)
