"""Laying a prompt out: placed documents plus a question, anchored, neutralised and checked.

The user text is::

    instruction (+ middle-zone note) (+ quote request)
    question                      <- only with question_position="before" or "both"
    document blocks               <- in plan order, in the anchor style (see litm.prompt._styles)
    recap of the ids              <- recap=True
    instruction again             <- repeat_instruction=True
    question                      <- question_position="after" (default) or "both"

sections joined by a blank line. System text, when given, travels separately (a system message, or
the first paragraph of the plain-text form). Documents, the question, and also system and instruction
texts are neutralised, and a final check refuses a prompt whose structural tokens are not exactly the
anchors written, so the rendered prompt contains exactly the structure litm emitted.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from litm.errors import PromptError
from litm.placement import Doc, PlacementPlan
from litm.prompt._anchors import AnchorOptions
from litm.prompt._escape import Neutralizer
from litm.prompt._settings import Escaping, Layout, Wording
from litm.prompt._styles import get_style, render_blocks

__all__ = ["DocBlock", "Rendered", "neutralizer_for", "render"]

_SEP = "\n\n"


@dataclass(frozen=True, slots=True)
class DocBlock:
    """Where one document sits in :attr:`Prompt.user <litm.prompt.Prompt.user>`: ``user[start:end]``
    is its whole block. ``id`` is the document's own id, ``shown_id`` the one the prompt shows for it (the
    same, or its slot number when ids are long: see :func:`~litm.prompt._anchors.shown_ids`)."""

    id: str
    slot: int
    doc: Doc
    middle: bool
    start: int
    end: int
    shown_id: str = ""


@dataclass(frozen=True, slots=True)
class Rendered:
    """The rendered texts every format wraps, and where each document sits in ``user``."""

    system: str | None
    user: str
    answer_cue: str | None
    blocks: tuple[DocBlock, ...]


def neutralizer_for(wording: Wording, anchors: AnchorOptions, escaping: Escaping) -> Neutralizer:
    """The one neutralizer of a prompt with these options (defaults, extra and chat-template tokens, the
    anchor style's own structure)."""
    return get_style(anchors.style).neutralizer(wording.prompt_template, escaping.tokens())


def render(
    plan: PlacementPlan,
    question: str,
    *,
    wording: Wording,
    anchors: AnchorOptions,
    layout: Layout,
    neutralizer: Neutralizer,
) -> Rendered:
    """Render ``plan`` and ``question`` as the options say; see the module docstring for the layout."""
    t, nz, style = wording.prompt_template, neutralizer, get_style(anchors.style)
    instruction = style.instruction(t) if wording.instruction is None else wording.instruction
    # A quote-first reply starts with the quote: the completion form is cued (prefilled) with its label.
    default_cue = t.quote_cue if wording.quote_first else t.answer_cue
    answer_cue = default_cue if wording.answer_cue is None else wording.answer_cue
    rendered = render_blocks(plan.slots, anchors, t, nz)
    marked = any(b.middle for b in rendered)

    intro = nz.neutralize(instruction)
    if marked:
        names = {k: nz.neutralize(v) for k, v in style.note_fields(t).items()}
        note = _fill(t.middle_note, nz, names)
        # Chinese sentences end in a full-width stop and take no space before the next one.
        joiner = "" if intro.endswith(("。", "！", "？")) else " "  # noqa: RUF001
        intro = f"{intro}{joiner}{note}" if intro else note
    if wording.quote_first:
        labels = {"quote": nz.neutralize(t.quote_cue), "answer": nz.neutralize(t.answer_marker)}
        request = _fill(t.quote_instruction, nz, labels)
        joiner = "" if intro.endswith(("。", "！", "？")) else " "  # noqa: RUF001
        intro = f"{intro}{joiner}{request}" if intro else request
    question_line = _fill(t.question, nz, {"question": nz.neutralize(question)})

    sections: list[str] = []
    if intro:
        sections.append(intro)
    if layout.question_position in ("before", "both"):
        sections.append(question_line)
    offset = sum(len(s) + len(_SEP) for s in sections)
    blocks: list[DocBlock] = []
    texts: list[str] = []
    for info, block in zip(plan.slots, rendered, strict=True):
        blocks.append(
            DocBlock(info.doc.id, info.slot, info.doc, block.middle, offset, offset + len(block.text), block.shown_id)
        )
        texts.append(block.text)
        offset += len(block.text) + len(style.joiner)
    if texts:
        sections.append(style.joiner.join(texts))
    if anchors.recap and plan.slots:
        ids = " ".join(_fill(t.recap_id, nz, {"id": nz.neutralize(b.shown_id)}) for b in rendered)
        sections.append(_fill(t.recap, nz, {"ids": ids, "count": str(len(plan.slots))}))
    if layout.repeat_instruction and instruction:
        sections.append(nz.neutralize(instruction))
    if layout.question_position in ("after", "both"):
        sections.append(question_line)

    user = _SEP.join(sections)
    system_text = nz.neutralize(wording.system) if wording.system else None
    cue = nz.neutralize(answer_cue) if answer_cue else None
    _verify(user, system_text, cue, [a for b in rendered for a in b.anchors], nz)
    return Rendered(system_text, user, cue, tuple(blocks))


def _fill(text: str, nz: Neutralizer, values: Mapping[str, str]) -> str:
    """Fill a template text's ``{fields}`` with ``values`` (already neutralised), neutralising the
    literal parts. Unlike ``str.format`` a value is inserted verbatim, never re-read as a template."""
    out: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(text):
        out.append(nz.neutralize(literal))
        if name is not None:
            out.append(values[name])
    return "".join(out)


def _verify(user: str, system: str | None, cue: str | None, anchors: Sequence[str], nz: Neutralizer) -> None:
    """Refuse a prompt whose structural tokens are not exactly the anchors we emitted.

    Every piece is neutralised separately; this catches the one gap that leaves, a token formed
    across the join of two pieces (for example a custom template text ending in ``<``).
    """
    expected = [tok for line in anchors for tok in nz.find_forgeries(line)]
    found = nz.find_forgeries(user)
    if found != expected:
        extra = next((f for f in found if f not in expected), found[-1] if found else "")
        raise PromptError(f"the rendered prompt contains a structural token litm did not emit: {extra!r}")
    for piece in (system, cue):
        bad = nz.find_forgeries(piece or "")
        if bad:
            raise PromptError(f"the system text or answer cue forms a structural token: {bad[0]!r}")
