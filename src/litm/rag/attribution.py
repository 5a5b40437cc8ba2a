"""litm's attribution: which placed documents contain the answer, for a model that writes no citations.

A base model (the embedded Gemma 3 270M) completes "Answer:" with a phrase and never writes ``[id]``. To
still say where an answer came from, litm looks for the answer's text in each placed document, compared
after a light normalisation (case folded, punctuation dropped, whitespace collapsed), and reports the
documents that contain it with the span's character offsets, in the document and in its source file.

This is litm's grounding of the answer, not the model's citation: it shows which documents *contain* the
answer string, not which one the model read it from. A span of fewer than :data:`MIN_CHARS` characters
(``"1"``, ``"a"``) is not looked up, since it would match almost anywhere, and a word-like answer must match
whole words (``1901`` does not match inside ``19012``).

Example:
    >>> from litm.placement import place
    >>> plan = place([{"id": "a", "text": "Paris is the capital of France."},
    ...               {"id": "b", "text": "Lyon is in France."}], "none")
    >>> [(g.id, g.start, g.end) for g in ground(" paris.", plan)]
    [('a', 0, 5)]
    >>> ground("Berlin", plan), [g.id for g in ground("1. Lyon", plan)]
    ((), ['b'])
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from litm.placement.plan import PlacementPlan

__all__ = ["MIN_CHARS", "Grounding", "ground"]

#: The shortest normalised answer litm looks up.
MIN_CHARS = 2
_LIST_MARKER = re.compile(r"^(?:\d{1,3}[.)]\s+|\d{1,3}\u3001\s*|[-*\u2022]\s+)")


@dataclass(frozen=True, slots=True)
class Grounding:
    """A placed document that contains the answer: ``text[start:end]`` is the span in the document;
    ``source_start`` / ``source_end`` place it in the source file when the document carries its chunk's
    offsets (documents from :mod:`litm.retrieve` do), else None."""

    id: str
    slot: int
    rank: int
    start: int
    end: int
    source_start: int | None = None
    source_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "slot": self.slot, "rank": self.rank, "start": self.start, "end": self.end,
            "source_start": self.source_start, "source_end": self.source_end,
        }  # fmt: skip


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded, without punctuation, whitespace runs as one space; and, for each character
    kept, its index in ``text`` (so a match maps back to the original span)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            continue
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for folded in ch.casefold():
            out.append(folded)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def _wordlike(ch: str) -> bool:
    # Letters and digits of scripts written with spaces; CJK characters are words on their own.
    return ch.isalnum() and unicodedata.east_asian_width(ch) not in ("W", "F")


def _find(needle: str, hay: str) -> int:
    """The first index of ``needle`` in ``hay`` that starts and ends on a word boundary, or -1."""
    at = hay.find(needle)
    while at >= 0:
        end = at + len(needle)
        before_ok = at == 0 or not (_wordlike(needle[0]) and _wordlike(hay[at - 1]))
        after_ok = end == len(hay) or not (_wordlike(needle[-1]) and _wordlike(hay[end]))
        if before_ok and after_ok:
            return at
        at = hay.find(needle, at + 1)
    return -1


def ground(answer: str, plan: PlacementPlan) -> tuple[Grounding, ...]:
    """The placed documents of ``plan`` whose text contains ``answer`` (normalised), in slot order.

    A leading list marker (``1.``, ``2)``, ``-``), which a base model often writes before its answer, is not
    part of the span looked up.
    """
    needle, _ = _normalised(_LIST_MARKER.sub("", answer.strip()))
    if len(needle.replace(" ", "")) < MIN_CHARS:
        return ()
    found: list[Grounding] = []
    for slot in plan.slots:
        hay, where = _normalised(slot.doc.text)
        at = _find(needle, hay)
        if at < 0:
            continue
        start, end = where[at], where[at + len(needle) - 1] + 1
        offset = slot.doc.metadata.get("start")
        base = offset if isinstance(offset, int) and not isinstance(offset, bool) else None
        source_start = None if base is None else base + start
        source_end = None if base is None else base + end
        found.append(Grounding(slot.doc.id, slot.slot, slot.rank, start, end, source_start, source_end))
    return tuple(found)
