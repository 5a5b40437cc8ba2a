"""Anchor styles: how a document block is written, neutralised and read back; one renderer per style.

============ ============================================================================================
``xml``      litm's anchors (``AnchorOptions()``): ``<document id="x" position="1/3" score="0.9">``, the text,
             ``</document id="x">``; names from the :class:`~litm.prompt.PromptTemplate`
``bracket``  the field report's format: ``[DOC_ID: x | REL_SCORE: 0.9 | POSITION: 1/3]``, the text,
             ``[/DOC_ID: x]``; a middle-zone document carries ``| ZONE: MIDDLE``
``liu``      Liu et al. (2024)'s search results, one per line: ``Document [1](Title: t) text``
============ ============================================================================================

Every style is injection-safe in the same way: the text and header values of a document go through
the prompt's :class:`~litm.prompt._escape.Neutralizer`, which also escapes the style's own structural
prefixes (``<document``, ``[DOC_ID`` / ``[/DOC_ID``, ``Document [``), so a document can neither close its
block, open another, nor start a chat turn; header values are entity-escaped so they stay inside their
field. ``xml`` and ``bracket`` blocks close with a tag naming the id, so a prompt parses back exactly
into its documents (:func:`~litm.prompt._parse.parse_prompt`). ``liu`` has no closing marker, so the end
of its last document cannot be told from the text after it: it is rendered and cited (``[3]`` is
Document [3]) but not parsed back.

:func:`render_documents` is the one renderer of document blocks; the prompt builder, the benchmark, the
probe and the demo all call it (or the builder on top of it).

Example:
    >>> from litm.placement._documents import Doc
    >>> print(render_documents([Doc("Paris is in France.", "a", title="Paris")], "liu"))
    Document [1](Title: Paris) Paris is in France.
    >>> bracket = AnchorOptions(style="bracket", scores=True, closing_ids=True)
    >>> print(render_documents([Doc("x", "a", score=0.9)], bracket))
    [DOC_ID: a | REL_SCORE: 1]
    x
    [/DOC_ID: a]
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from litm.errors import PromptError
from litm.placement import PlacementOptions, place
from litm.placement._plan import SlotInfo
from litm.prompt._anchors import STYLES, AnchorOptions, shown_ids, shown_score
from litm.prompt._blocks import ParsedBlock, scan_closed
from litm.prompt._escape import XML_ATTR, Entities, Neutralizer
from litm.prompt._templates import PromptTemplate

__all__ = [
    "AnchorStyle",
    "BracketStyle",
    "LiuStyle",
    "RenderedBlock",
    "XmlStyle",
    "block_slots",
    "get_style",
    "render_blocks",
    "render_documents",
]


@dataclass(frozen=True, slots=True)
class RenderedBlock:
    """One rendered document block, the structural pieces in it (what the final check expects), whether
    it is marked as middle zone, and the id it shows for its document."""

    text: str
    anchors: tuple[str, ...]
    middle: bool = False
    shown_id: str = ""


class AnchorStyle:
    """One document style. Subclasses write a block and, when :attr:`parseable`, read blocks back."""

    name: ClassVar[str]
    #: Between two blocks: a blank line, or a line break for one-line-per-document formats.
    joiner: ClassVar[str] = "\n\n"
    parseable: ClassVar[bool] = True

    def tokens(self) -> tuple[str, ...]:
        """Structural prefixes the neutralizer must escape in every untrusted text (beyond the defaults)."""
        return ()

    def neutralizer(self, template: PromptTemplate, tokens: Sequence[str] = ()) -> Neutralizer:
        """The neutralizer for prompts in this style: the defaults, ``tokens``, the template's tag and
        this style's prefixes."""
        return Neutralizer([*tokens, *self.tokens()], tags=[template.tag])

    def instruction(self, template: PromptTemplate) -> str:
        """The instruction a prompt in this style gets when none is given."""
        return template.instruction

    def keys(self, template: PromptTemplate) -> Mapping[str, str]:
        """Header field names by meaning (``id``, ``position``, ``score``, ``rank``, ``title``, ``source``,
        ``zone``) plus ``middle``, the zone value of a middle-zone document (parseable styles only)."""
        raise PromptError(f"the {self.name} style has no named header fields")

    def note_fields(self, template: PromptTemplate) -> dict[str, str]:
        """Values for the middle note's ``{tag}``, ``{zone}``, ``{middle}`` and ``{marker}`` (not neutralised)."""
        raise PromptError(f"the {self.name} style has no middle-zone marker")

    def shown_ids(self, slots: Sequence[SlotInfo], options: AnchorOptions) -> tuple[str, ...]:
        """The id the prompt shows for each slot (what an answer cites): the document's own, or its slot
        number when ids are long (see :func:`~litm.prompt._anchors.shown_ids`)."""
        return shown_ids([s.doc.id for s in slots], options.short_ids)

    def cited_forms(self, shown: str, neutralizer: Neutralizer) -> tuple[str, ...]:
        """Every form of a shown id an answer may cite: as given, as escaped in text, as in the header."""
        return (shown, neutralizer.neutralize(shown), self._header_value(shown, neutralizer))

    def _header_value(self, value: str, neutralizer: Neutralizer) -> str:
        return neutralizer.neutralize(value)

    def block(
        self, slot: SlotInfo, *, n: int, middle: bool, options: AnchorOptions, template: PromptTemplate,
        neutralizer: Neutralizer, shown: str,
    ) -> RenderedBlock:
        """The block of ``slot`` (of ``n``), showing the document as ``shown``."""
        raise NotImplementedError

    def scan(self, text: str, template: PromptTemplate, neutralizer: Neutralizer) -> list[ParsedBlock]:
        """Every block in ``text``, strictly (a malformed or unclosed anchor raises :class:`PromptError`)."""
        raise PromptError(
            f"prompts in the {self.name} style cannot be parsed back: it has no closing marker, so where the "
            "last document ends is not in the text; use style 'xml' or 'bracket' to parse prompts"
        )

    @staticmethod
    def _fields(slot: SlotInfo, n: int, options: AnchorOptions) -> Iterator[tuple[str, str]]:
        """The optional header fields by meaning (position, score or rank, title, source), as options say."""
        doc = slot.doc
        score = shown_score(slot, options.score_as) if options.scores else None
        if options.positions:
            yield "position", f"{slot.slot}/{n}"
        if score is not None:
            yield score
        if options.sources:
            if doc.title is not None:
                yield "title", doc.title
            if doc.source is not None:
                yield "source", doc.source


class XmlStyle(AnchorStyle):
    """``<tag id="x" position="1/3" score="0.9" title="t" source="s" zone="middle">``, text, ``</tag id="x">``."""

    name = "xml"
    _attr = re.compile(r' ([^\W\d][\w.:-]*)="([^"]*)"')

    def keys(self, template: PromptTemplate) -> Mapping[str, str]:
        t = template
        return {
            "id": t.id_attr, "position": t.position_attr, "score": t.score_attr, "rank": t.rank_attr,
            "title": t.title_attr, "source": t.source_attr, "zone": t.zone_attr, "middle": t.middle,
        }

    def _header_value(self, value: str, neutralizer: Neutralizer) -> str:
        return XML_ATTR.escape(value, neutralizer)

    def note_fields(self, template: PromptTemplate) -> dict[str, str]:
        t = template
        return {"tag": t.tag, "zone": t.zone_attr, "middle": t.middle, "marker": f'{t.zone_attr}="{t.middle}"'}

    def block(
        self, slot: SlotInfo, *, n: int, middle: bool, options: AnchorOptions, template: PromptTemplate,
        neutralizer: Neutralizer, shown: str,
    ) -> RenderedBlock:
        keys, nz = self.keys(template), neutralizer

        def attr(name: str, value: str) -> str:
            return f' {name}="{XML_ATTR.escape(value, nz)}"'

        parts = [f"<{template.tag}", attr(template.id_attr, shown)]
        parts.extend(attr(keys[key], value) for key, value in self._fields(slot, n, options))
        if middle:
            parts.append(attr(template.zone_attr, template.middle))
        header = "".join(parts) + ">"
        if options.closing_ids:
            closing = f'</{template.tag} {template.id_attr}="{XML_ATTR.escape(shown, nz)}">'
        else:
            closing = f"</{template.tag}>"
        return RenderedBlock(
            f"{header}\n{nz.neutralize(slot.doc.text)}\n{closing}", (header, closing), middle, shown
        )

    def scan(self, text: str, template: PromptTemplate, neutralizer: Neutralizer) -> list[ParsedBlock]:
        tag = re.escape(template.tag)

        def read_header(head: re.Match[str], at: int) -> list[tuple[str, str]]:
            return [(name, value) for name, value in self._attr.findall(head.group(1))]

        return scan_closed(
            text,
            anchor=re.compile(rf"</?{tag}", re.IGNORECASE),
            opening=re.compile(rf'<{tag}((?: [^\W\d][\w.:-]*="[^"]*")*)>\n'),
            closing=re.compile(rf'\n</{tag}(?: {re.escape(template.id_attr)}="([^"]*)")?>'),
            read_header=read_header,
            id_key=template.id_attr,
            unescape=lambda v: XML_ATTR.unescape(v, neutralizer),
            neutralizer=neutralizer,
            template=template,
            style=self.name,
            keys=self.keys(template),
        )


# The bracket style's values are kept inside their field and on one line by entities for the field
# separator, the brackets and line breaks.
_BRACKET_VALUE = Entities("|[]\n\r")
_BRACKET_KEYS: Mapping[str, str] = {
    "id": "DOC_ID", "position": "POSITION", "score": "REL_SCORE", "rank": "RANK", "title": "TITLE",
    "source": "SOURCE", "zone": "ZONE", "middle": "MIDDLE",
}
_BRACKET_FIELD = re.compile(r"([A-Z][A-Z_]*): (.*)", re.DOTALL)


class BracketStyle(AnchorStyle):
    """``[DOC_ID: x | REL_SCORE: 0.9 | POSITION: 1/3 | TITLE: t | SOURCE: s | ZONE: MIDDLE]``, text, ``[/DOC_ID: x]``.

    The labels are the field report's and the same in every language; ``DOC_ID`` comes first and
    ``REL_SCORE`` (or ``RANK`` with ``score_as="rank"``) second, so with positions and sources off a
    header is exactly ``[DOC_ID: x | REL_SCORE: s]``.
    """

    name = "bracket"

    def tokens(self) -> tuple[str, ...]:
        return ("[DOC_ID", "[/DOC_ID")

    def keys(self, template: PromptTemplate) -> Mapping[str, str]:
        return _BRACKET_KEYS

    def _header_value(self, value: str, neutralizer: Neutralizer) -> str:
        return _BRACKET_VALUE.escape(value, neutralizer)

    def note_fields(self, template: PromptTemplate) -> dict[str, str]:
        return {"tag": "DOC_ID", "zone": "ZONE", "middle": "MIDDLE", "marker": "ZONE: MIDDLE"}

    def block(
        self, slot: SlotInfo, *, n: int, middle: bool, options: AnchorOptions, template: PromptTemplate,
        neutralizer: Neutralizer, shown: str,
    ) -> RenderedBlock:
        nz = neutralizer
        optional = list(self._fields(slot, n, options))
        # The field report's order: the id, then the relevance, then the rest.
        fields = [("id", shown), *(f for f in optional if f[0] in ("score", "rank"))]
        fields.extend(f for f in optional if f[0] not in ("score", "rank"))
        if middle:
            fields.append(("zone", "MIDDLE"))
        header = "[" + " | ".join(f"{_BRACKET_KEYS[k]}: {_BRACKET_VALUE.escape(v, nz)}" for k, v in fields) + "]"
        closing = f"[/DOC_ID: {_BRACKET_VALUE.escape(shown, nz)}]" if options.closing_ids else "[/DOC_ID]"
        return RenderedBlock(
            f"{header}\n{nz.neutralize(slot.doc.text)}\n{closing}", (header, closing), middle, shown
        )

    def scan(self, text: str, template: PromptTemplate, neutralizer: Neutralizer) -> list[ParsedBlock]:
        def read_header(head: re.Match[str], at: int) -> list[tuple[str, str]]:
            # Values hold no "|" (it is an entity), so splitting on it is exact; each separator is " | ",
            # so every piece but the first starts with a space and every piece but the last ends with one.
            parts = head.group(1).split("|")
            fields: list[tuple[str, str]] = []
            for i, part in enumerate(parts):
                first, last = i == 0, i == len(parts) - 1
                well_formed = (first or part.startswith(" ")) and (last or part.endswith(" "))
                m = _BRACKET_FIELD.fullmatch(part[0 if first else 1 : len(part) if last else -1])
                if m is None or not well_formed:
                    raise PromptError(f"malformed prompt: header at offset {at} has a malformed field")
                fields.append((m.group(1), m.group(2)))
            return fields

        return scan_closed(
            text,
            anchor=re.compile(r"\[/?DOC_ID", re.IGNORECASE),
            opening=re.compile(r"\[(DOC_ID: [^\[\]\n]*)\]\n"),
            closing=re.compile(r"\n\[/DOC_ID(?:: ([^\[\]\n]*))?\]"),
            read_header=read_header,
            id_key="DOC_ID",
            unescape=lambda v: _BRACKET_VALUE.unescape(v, neutralizer),
            neutralizer=neutralizer,
            template=template,
            style=self.name,
            keys=self.keys(template),
        )


class LiuStyle(AnchorStyle):
    """``Document [i](Title: t) text``, one document per line, numbered by slot (Liu et al., 2024).

    Byte for byte the format of the paper's multi-document QA prompts and of litm's committed
    benchmark runs: the title is shown even when empty, the text follows on the same line, and
    nothing else is (no id, position, score or source; no closing marker). A document's text and
    title cannot contain ``Document [`` (it is escaped, as chat tokens are), so no line a document
    writes can start another document.
    """

    name = "liu"
    joiner = "\n"
    parseable = False

    def tokens(self) -> tuple[str, ...]:
        return ("Document [",)

    def instruction(self, template: PromptTemplate) -> str:
        return template.liu_instruction

    def shown_ids(self, slots: Sequence[SlotInfo], options: AnchorOptions) -> tuple[str, ...]:
        return tuple(str(s.slot) for s in slots)

    def block(
        self, slot: SlotInfo, *, n: int, middle: bool, options: AnchorOptions, template: PromptTemplate,
        neutralizer: Neutralizer, shown: str,
    ) -> RenderedBlock:
        nz = neutralizer
        header = f"Document [{slot.slot}](Title: {nz.neutralize(slot.doc.title or '')}) "
        return RenderedBlock(header + nz.neutralize(slot.doc.text), (header,), shown_id=shown)


# One implementation per name in anchors.STYLES (which AnchorOptions validates against); a test checks both agree.
_STYLES: dict[str, AnchorStyle] = {s.name: s for s in (XmlStyle(), BracketStyle(), LiuStyle())}


def get_style(name: str) -> AnchorStyle:
    """The style called ``name`` (one of :data:`~litm.prompt._anchors.STYLES`)."""
    try:
        return _STYLES[name]
    except (KeyError, TypeError):
        raise PromptError(f"unknown anchor style {name!r}; choose from {', '.join(STYLES)}") from None


def block_slots(docs: Sequence[object]) -> tuple[SlotInfo, ...]:
    """Documents in the order given as plan slots, as the builder sees them (relevance included)."""
    return place(list(docs), placement=_AS_GIVEN).slots


_AS_GIVEN = PlacementOptions(strategy="none", min_docs=0)


def render_blocks(
    slots: Sequence[SlotInfo], options: AnchorOptions, template: PromptTemplate, neutralizer: Neutralizer
) -> list[RenderedBlock]:
    """Each slot's block, in order, with the middle zone marked and the ids shown as ``options`` say."""
    style, n = get_style(options.style), len(slots)
    marked = options.middle(n)
    return [
        style.block(
            s, n=n, middle=s.slot in marked, options=options, template=template, neutralizer=neutralizer, shown=shown
        )
        for s, shown in zip(slots, style.shown_ids(slots, options), strict=True)
    ]


def render_documents(
    docs: Sequence[object],
    style: str | AnchorOptions = "xml",
    *,
    template: PromptTemplate | None = None,
    neutralizer: Neutralizer | None = None,
) -> str:
    """The document blocks of ``docs`` (in the order given), joined as the style joins them.

    ``docs`` are :class:`~litm.placement.Doc` values or anything
    :func:`~litm.placement._documents.to_doc` reads. ``style`` is a style name or full
    :class:`~litm.prompt.AnchorOptions`; ``template`` gives the ``xml`` names (English by
    default); ``neutralizer`` defaults to the style's own.
    """
    options = style if isinstance(style, AnchorOptions) else AnchorOptions(style=style)  # type: ignore[arg-type]
    template = PromptTemplate.for_lang("en") if template is None else template
    nz = get_style(options.style).neutralizer(template) if neutralizer is None else neutralizer
    blocks = render_blocks(block_slots(docs), options, template, nz)
    return get_style(options.style).joiner.join(b.text for b in blocks)
