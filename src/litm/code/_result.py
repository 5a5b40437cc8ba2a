"""The result of :func:`~litm.code.code_context`, and how its pieces are rendered as one context string.

Rendering places the pieces with a litm strategy first (``pyramid`` by default: rank 1, the target, goes
last, so it sits right before the question that follows the context; rank 2 first; the weakest pieces in
the middle). The token budget is counted on exactly the string :func:`render_docs` returns.

Example:
    >>> from litm.placement._documents import Doc
    >>> docs = [Doc(text="def f(): ...", id="t", title="target: f", source="m.py:1-1",
    ...             metadata={"language": "python"})]
    >>> print(render_docs(docs, "text"))
    ==> m.py:1-1 (target: f) <==
    def f(): ...
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from litm.code._pieces import CodePiece
from litm.errors import InvalidOptionError
from litm.placement import PlacementOptions, place
from litm.placement._documents import Doc
from litm.prompt import Prompt

__all__ = ["RENDER_FORMATS", "CodeContext", "render_docs"]

#: Formats a context renders to (and whose tokens the budget counts).
RENDER_FORMATS = ("text", "markdown")
_FENCE_LANG = {"tsx": "tsx", "typescript": "typescript", "javascript": "javascript"}
_TICKS = re.compile(r"`{3,}")
#: A context of two or more pieces is always placed (the target last under pyramid), not kept in rank order.
_ALWAYS_PLACE = PlacementOptions(min_docs=1)


def _block(doc: Doc, fmt: str) -> str:
    if fmt == "text":
        return f"==> {doc.source} ({doc.title}) <==\n{doc.text}"
    language = str(doc.metadata.get("language", ""))
    longest = max((len(m.group()) for m in _TICKS.finditer(doc.text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"**{doc.title}** `{doc.source}`\n{fence}{_FENCE_LANG.get(language, language)}\n{doc.text}\n{fence}"


def render_docs(docs: Sequence[Doc], fmt: str = "text", order: str = "pyramid") -> str:
    """Render code-context documents (best-ranked first) as one string, placed by strategy ``order``."""
    if fmt not in RENDER_FORMATS:
        raise InvalidOptionError(f"format must be one of {', '.join(RENDER_FORMATS)}, got {fmt!r}")
    placed = list(place(list(docs), strategy=order, placement=_ALWAYS_PLACE).items) if len(docs) > 1 else list(docs)
    return "\n\n".join(_block(d, fmt) for d in placed)


@dataclass(frozen=True)
class CodeContext:
    """What :func:`~litm.code.code_context` selected, what it left out, and what it cost.

    ``pieces`` are the kept pieces, best-ranked first (``pieces[0]`` is the target); ``dropped`` are the
    pieces the budget left out, best-ranked first. ``tokens`` is the count of :meth:`render` in ``format``
    (or, with a prompt builder, of the whole ``prompt``), never above ``budget``. ``resolution`` is
    ``"exact"`` (Python through jedi) or ``"name"`` (name matching). ``unresolved`` and ``rejected`` list the
    same-named call sites an exact resolver did not count as callers (it could not tell / it resolved them
    elsewhere), ``unchecked`` those past its limit, each as ``path:line name``. ``searched`` is the folder (or,
    for a target outside the root with no repository above it, the one file) searched for callers; ``notes``
    say why that is not the root given.
    """

    target: CodePiece
    pieces: tuple[CodePiece, ...]
    dropped: tuple[CodePiece, ...]
    tokens: int
    budget: int
    resolution: str
    format: str
    order: str
    tokenizer: str | None = None
    unresolved: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()
    prompt: Prompt | None = None
    searched: str | None = None
    notes: tuple[str, ...] = ()

    def docs(self) -> list[Doc]:
        """The kept pieces as litm documents, best-ranked first (the target first: ``pyramid`` puts it last)."""
        return [p.to_doc() for p in self.pieces]

    def render(self, fmt: str | None = None) -> str:
        """The context as one string (``fmt`` defaults to the format the budget was counted in)."""
        return render_docs(self.docs(), fmt or self.format, self.order)

    @property
    def text(self) -> str:
        return self.render()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the numbers, every kept piece with its text, and every dropped piece without it."""
        return {
            "target": self.target.source,
            "qualname": self.target.qualname,
            "resolution": self.resolution,
            "tokens": self.tokens,
            "budget": self.budget,
            "format": self.format,
            "order": self.order,
            "tokenizer": self.tokenizer,
            "pieces": [p.to_dict() for p in self.pieces],
            "dropped": [{k: v for k, v in p.to_dict().items() if k != "text"} for p in self.dropped],
            "unresolved": list(self.unresolved),
            "rejected": list(self.rejected),
            "unchecked": list(self.unchecked),
            "searched": self.searched,
            "notes": list(self.notes),
        }
