"""Structural anchors: the header and closing tag around each document, and the middle zone.

A document block is exactly three parts joined by newlines: a header line, the neutralised text,
and a closing line::

    <document id="nq-0" position="1/6" score="0.857" title="Nobel Prize" source="NQ-Open">
    The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen ...
    </document id="nq-0">

Attribute values are entity-escaped and neutralised (:func:`~litm.prompt.escape.escape_attr`), so a
title cannot close the header, and a document body can never contain ``<document`` or
``</document`` (they are escaped), so the first closing line after a header ends its block.

Example:
    >>> sorted(middle_slots(6, width=0.5))
    [3, 4]
    >>> sorted(middle_slots(6, profile=PositionProfile.pyramid()))
    [3, 4]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from litm.errors import PromptError
from litm.placement.documents import Doc
from litm.placement.profile import PositionProfile
from litm.prompt.escape import Neutralizer, escape_attr
from litm.prompt.templates import PromptTemplate

__all__ = ["AnchorOptions", "closing_line", "format_score", "header_line", "middle_slots"]


@dataclass(frozen=True)
class AnchorOptions:
    """Which anchors a prompt carries; every one can be switched off.

    ``positions`` (``position="3/10"``), ``scores`` (shown only for documents that have one),
    ``sources`` (title and source, when present), ``closing_ids`` (the closing tag names the id;
    off: a bare closing tag), ``middle_marker`` (``zone="middle"`` on middle-zone documents) and
    ``recap`` (a closing line listing every id for citations). The document id itself is always in
    the header: it is what citations and parsing rely on.
    """

    positions: bool = True
    scores: bool = True
    sources: bool = True
    closing_ids: bool = True
    middle_marker: bool = False
    recap: bool = True

    def __post_init__(self) -> None:
        for name in ("positions", "scores", "sources", "closing_ids", "middle_marker", "recap"):
            if not isinstance(getattr(self, name), bool):
                raise PromptError(f"anchor option {name!r} must be True or False, got {getattr(self, name)!r}")


def format_score(score: float) -> str:
    """A relevance score as shown in a header: three significant digits (``0.857``, ``12.3``)."""
    return f"{score:.3g}"


def header_line(
    doc: Doc,
    *,
    slot: int,
    n: int,
    middle: bool,
    options: AnchorOptions,
    template: PromptTemplate,
    neutralizer: Neutralizer,
) -> str:
    """The opening anchor of one document (no trailing newline)."""

    def attr(name: str, value: str) -> str:
        return f' {name}="{escape_attr(value, neutralizer)}"'

    parts = [f"<{template.tag}", attr(template.id_attr, doc.id)]
    if options.positions:
        parts.append(attr(template.position_attr, f"{slot}/{n}"))
    if options.scores and doc.score is not None:
        parts.append(attr(template.score_attr, format_score(doc.score)))
    if options.sources:
        if doc.title is not None:
            parts.append(attr(template.title_attr, doc.title))
        if doc.source is not None:
            parts.append(attr(template.source_attr, doc.source))
    if middle:
        parts.append(attr(template.zone_attr, template.middle))
    parts.append(">")
    return "".join(parts)


def closing_line(doc: Doc, *, options: AnchorOptions, template: PromptTemplate, neutralizer: Neutralizer) -> str:
    """The closing anchor of one document: ``</document id="x">``, or ``</document>`` without ids."""
    if not options.closing_ids:
        return f"</{template.tag}>"
    return f'</{template.tag} {template.id_attr}="{escape_attr(doc.id, neutralizer)}">'


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
    4-7 of 10; ``0`` marks none). With a measured :class:`~litm.placement.profile.PositionProfile`, a slot is
    in the zone when its weight lies in the lowest ``threshold`` fraction of the range of weights
    over the ``n`` slots (a flat profile marks none). Fewer than three documents have no middle.
    """
    if not (isinstance(width, (int, float)) and math.isfinite(width) and 0.0 <= width <= 1.0):
        raise PromptError(f"middle_width must be a number in [0, 1], got {width!r}")
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and 0.0 < threshold <= 1.0):
        raise PromptError(f"middle_threshold must be a number in (0, 1], got {threshold!r}")
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
