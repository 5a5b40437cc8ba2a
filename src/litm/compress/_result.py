"""What compression returns: each document's kept spans (mapped back to the source), and the whole result.

A :class:`CompressedDoc` keeps the original document's id, title, source and score; its ``doc`` is the
compressed text as a :class:`~litm.placement._documents.Doc` ready for placement and prompts, and its
``spans`` are the kept sentences as ``(start, end)`` character offsets into the *original* text, in
source order, so a citation or an attribution span found in the compressed text can be mapped back with
:meth:`CompressedDoc.to_original`.

Example:
    >>> from litm.placement._documents import Doc
    >>> original = Doc(text="Alpha one. Beta two. Gamma three.", id="d1")
    >>> c = CompressedDoc.from_spans(original, [(0, 10), (21, 33)], tokens=6, original_tokens=9, reason="kept")
    >>> c.doc.text
    'Alpha one. Gamma three.'
    >>> c.to_original(c.doc.text.index("Gamma"))
    21
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from litm.errors import InvalidOptionError
from litm.placement._documents import Doc

__all__ = ["SEPARATOR", "Compressed", "CompressedDoc", "original_offset"]

#: What joins two kept sentences of one document. A single space: an elision mark ("...") costs tokens and
#: reads to a small model as part of the text.
SEPARATOR = " "


def original_offset(spans: Sequence[Sequence[int]], offset: int) -> int:
    """Where ``offset`` of a compressed text lies in its original, given the kept ``spans`` (source order, as
    ``Doc.metadata["compressed"]["spans"]`` records them); an offset on a separator maps to the end of the
    span before it. What attribution uses to point a supporting span into the source.

    >>> original_offset([(0, 10), (21, 33)], 11)
    21
    """
    at = 0
    for a, b in spans:
        width = b - a
        if offset <= at + width:
            return a + (offset - at)
        at += width + len(SEPARATOR)
        if offset < at:
            return b
    return spans[-1][1] if spans else offset


@dataclass(frozen=True)
class CompressedDoc:
    """One document after compression: the kept text as a ``Doc``, its spans in the original, and why.

    ``tokens`` and ``original_tokens`` are counts of the text alone with the target model's tokenizer;
    ``score`` is the scorer's document score and ``rank`` its rank by that score (1 = most relevant);
    ``reason`` says what happened to it (``kept``, ``shortened`` or ``dropped: ...``).
    """

    original: Doc
    doc: Doc
    spans: tuple[tuple[int, int], ...]
    tokens: int
    original_tokens: int
    reason: str
    score: float | None = None
    rank: int | None = None
    sentences: int = 0
    kept_sentences: int = 0

    @classmethod
    def from_spans(
        cls,
        original: Doc,
        spans: Sequence[tuple[int, int]],
        *,
        tokens: int,
        original_tokens: int,
        reason: str,
        score: float | None = None,
        rank: int | None = None,
        sentences: int = 0,
    ) -> CompressedDoc:
        """Build the compressed document from the kept spans of ``original`` (sorted into source order)."""
        ordered = tuple(sorted(spans))
        for a, b in ordered:
            if not 0 <= a < b <= len(original.text):
                raise InvalidOptionError(f"span ({a}, {b}) is outside document {original.id!r}")
        text = SEPARATOR.join(original.text[a:b] for a, b in ordered)
        meta: dict[str, object] = {**original.metadata}
        if text != original.text:
            meta["compressed"] = {"spans": [list(s) for s in ordered], "original_tokens": original_tokens}
        doc = Doc(
            text=text, id=original.id, score=original.score, title=original.title, source=original.source,
            metadata=meta,
        )  # fmt: skip
        return cls(
            original, doc, ordered, tokens, original_tokens, reason, score, rank, sentences, kept_sentences=len(ordered)
        )

    @property
    def kept(self) -> bool:
        """Whether any of the document survived."""
        return bool(self.spans)

    def to_original(self, offset: int) -> int:
        """The character offset in the original text of ``offset`` in the compressed text.

        An offset on a separator maps to the end of the span before it.
        """
        if not 0 <= offset <= len(self.doc.text):
            raise InvalidOptionError(f"offset {offset} is outside the compressed text of {self.original.id!r}")
        return original_offset(self.spans, offset)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready summary (the compressed text, spans, counts and reason)."""
        return {
            "id": self.original.id,
            "title": self.original.title,
            "source": self.original.source,
            "text": self.doc.text,
            "spans": [list(s) for s in self.spans],
            "tokens": self.tokens,
            "original_tokens": self.original_tokens,
            "sentences": self.sentences,
            "kept_sentences": self.kept_sentences,
            "score": self.score,
            "rank": self.rank,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Compressed:
    """The result of :func:`~litm.compress.compress`: the kept documents in output order and every decision.

    ``budget`` is the token budget the document texts were held to (after the tokenizer's safety margin
    when it is not exact: ``target`` is what was asked); ``tokens`` what the kept texts count, so
    ``ratio = original_tokens / tokens`` is the compression actually achieved, never a requested one.
    ``docs`` holds every input document (dropped ones with empty ``spans``) in input order; ``kept``
    the survivors in the order a prompt should show them (input order, or ``reorder``'s).
    """

    question: str
    docs: tuple[CompressedDoc, ...]
    order: tuple[int, ...]
    target: int
    budget: int
    tokens: int
    original_tokens: int
    exact: bool
    margin: float
    scorer: str
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def kept(self) -> list[CompressedDoc]:
        """The surviving documents, in output order."""
        return [self.docs[i] for i in self.order]

    @property
    def kept_docs(self) -> list[Doc]:
        """The surviving documents as :class:`~litm.placement._documents.Doc` values, in output order."""
        return [c.doc for c in self.kept]

    @property
    def dropped(self) -> list[CompressedDoc]:
        """The documents of which nothing survived, in input order."""
        return [c for c in self.docs if not c.kept]

    @property
    def ratio(self) -> float:
        """Original document tokens over kept document tokens (1.0 when nothing was cut)."""
        return self.original_tokens / self.tokens if self.tokens else float("inf")

    def summary(self) -> str:
        """One line: tokens before and after, the ratio, documents kept and the scorer.

        >>> Compressed("q", (), (), 10, 10, 25, 100, True, 0.0, "embed").summary()
        'compressed 100 -> 25 document tokens (4.0x, budget 10), 0 of 0 documents kept, scorer embed'
        """
        return (
            f"compressed {self.original_tokens} -> {self.tokens} document tokens ({self.ratio:.1f}x, budget "
            f"{self.budget}), {len(self.order)} of {len(self.docs)} documents kept, scorer {self.scorer}"
        )

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record of every decision (what ``litm compress`` writes per question)."""
        return {
            "question": self.question,
            "target": self.target,
            "budget": self.budget,
            "tokens": self.tokens,
            "original_tokens": self.original_tokens,
            "ratio": round(self.ratio, 4) if self.tokens else None,
            "exact": self.exact,
            "margin": self.margin,
            "scorer": self.scorer,
            "seconds": round(self.seconds, 4),
            "order": [self.docs[i].original.id for i in self.order],
            "docs": [c.to_dict() for c in self.docs],
            "notes": list(self.notes),
        }
