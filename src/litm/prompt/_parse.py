"""Reading prompts back: document blocks out of a rendered prompt, and citations out of an answer.

:func:`parse_prompt` takes any rendering (the text, a ChatML or chat-template string, OpenAI
messages, Anthropic arguments) and returns the document blocks in order, with ids, header fields and
the original (un-escaped) text, for the ``xml`` and ``bracket`` anchor styles (``liu`` has no closing
marker: see :mod:`litm.prompt._styles`). It is strict: an anchor that is not well formed, a block that
does not close, or a closing tag naming another id raises :class:`~litm.errors.PromptError`. Since
documents cannot contain anchors (they are escaped), parsing finds exactly the blocks litm wrote.

:func:`parse_citations` maps the ``[id]`` citations of a model's answer back to the documents.

Example:
    >>> from litm.prompt import AnchorOptions, build_prompt
    >>> p = build_prompt([{"id": "a", "text": "<|im_end|> x"}, {"id": "b", "text": "y"}], "Q?", anchors=AnchorOptions())
    >>> [(b.id, b.text) for b in parse_prompt(p.to_chatml()).blocks]
    [('a', '<|im_end|> x'), ('b', 'y')]
    >>> parse_citations("It is x [a].", p).ids
    ['a']
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from litm.errors import PromptError
from litm.placement import Doc, PlacementPlan
from litm.prompt._anchors import STYLES, AnchorOptions
from litm.prompt._blocks import ParsedBlock
from litm.prompt._escape import Neutralizer
from litm.prompt._styles import get_style
from litm.prompt._templates import LANGS, PromptTemplate


class ShownBlock(Protocol):
    """A document as a built prompt shows it: its own id, the id shown for it, its slot and the document."""

    @property
    def id(self) -> str: ...

    @property
    def shown_id(self) -> str: ...

    @property
    def slot(self) -> int: ...

    @property
    def doc(self) -> Doc: ...


@runtime_checkable
class BuiltPrompt(Protocol):
    """What parsing reads from a built :class:`~litm.prompt.Prompt` (kept structural, so this module
    sits below the prompt value that calls it)."""

    @property
    def text(self) -> str: ...

    @property
    def template(self) -> PromptTemplate: ...

    @property
    def neutralizer(self) -> Neutralizer: ...

    @property
    def blocks(self) -> Sequence[ShownBlock]: ...

    @property
    def style(self) -> str: ...

__all__ = ["Citation", "Citations", "ParsedBlock", "ParsedPrompt", "parse_citations", "parse_prompt"]

@dataclass(frozen=True)
class ParsedPrompt:
    """The document blocks of a parsed prompt, in order, and the template and anchor style read."""

    blocks: tuple[ParsedBlock, ...]
    template: PromptTemplate
    style: str = "xml"

    @property
    def ids(self) -> list[str]:
        return [b.id for b in self.blocks]

    @property
    def texts(self) -> list[str]:
        return [b.text for b in self.blocks]

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self) -> Iterator[ParsedBlock]:
        return iter(self.blocks)


def _contents(rendered: object) -> list[str]:
    """The strings to scan: a string as is, or each message content of a message list / API dict."""
    if isinstance(rendered, str):
        return [rendered]
    if isinstance(rendered, Mapping):
        out = [rendered["system"]] if isinstance(rendered.get("system"), str) else []
        return out + _contents(rendered.get("messages", []))
    if isinstance(rendered, Sequence):
        out = []
        for m in rendered:
            content = m.get("content") if isinstance(m, Mapping) else None
            if not isinstance(content, str):
                raise PromptError("a message must be a mapping with a string 'content'")
            out.append(content)
        return out
    raise PromptError(f"cannot parse a {type(rendered).__name__} as a prompt (expected a string or messages)")


def parse_prompt(
    rendered: object,
    *,
    template: PromptTemplate | str | None = None,
    neutralizer: Neutralizer | None = None,
    special_tokens: Sequence[str] = (),
    style: str | None = None,
) -> ParsedPrompt:
    """Parse a rendered prompt back into its document blocks (ids, header fields, original text).

    ``rendered``: a string in any format, OpenAI messages, Anthropic arguments, or a
    :class:`~litm.prompt.Prompt` (its text). ``template``: the
    :class:`~litm.prompt.PromptTemplate` or language the prompt was built with; by
    default the built-in languages are tried. ``style``: the anchor style (``"xml"`` or
    ``"bracket"``; by default a prompt's own, else ``xml`` is tried, then ``bracket``). Un-escaping
    must use the same special tokens as the build: pass the prompt's ``neutralizer``, or the same
    ``special_tokens`` (chat template tokens included); :meth:`Prompt.parse
    <litm.prompt.Prompt.parse>` does this for you.
    """
    if isinstance(rendered, BuiltPrompt):
        template = rendered.template if template is None else template
        neutralizer = rendered.neutralizer if neutralizer is None else neutralizer
        style = rendered.style if style is None else style
        rendered = rendered.text
    contents = _contents(rendered)
    if isinstance(template, str):
        template = PromptTemplate.for_lang(template)
    if template is not None and not isinstance(template, PromptTemplate):
        raise PromptError(f"template must be a PromptTemplate or a language, got {type(template).__name__}")
    templates = [template] if template is not None else [PromptTemplate.for_lang(lang) for lang in LANGS]
    # The bracket style's labels do not depend on the language: one template is enough to try it.
    styles = [style] if style is not None else [s for s in STYLES if get_style(s).parseable]
    candidates = [(s, t) for s in styles for t in (templates if s == "xml" else templates[:1])]
    for name, t in candidates:
        kind = get_style(name)
        nz = neutralizer if neutralizer is not None else kind.neutralizer(t, special_tokens)
        blocks = [b for text in contents for b in kind.scan(text, t, nz)]
        if blocks or len(candidates) == 1:
            return ParsedPrompt(tuple(blocks), t, name)
    return ParsedPrompt((), templates[0], styles[0])


# -- citations -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Citation:
    """One cited document: its id, the document, its slot in the prompt, and where it was cited."""

    id: str
    doc: Doc
    slot: int
    start: int
    end: int


@dataclass(frozen=True)
class Citations:
    """What an answer cites: known documents in order of first citation, and ids that match none."""

    cited: tuple[Citation, ...]
    unknown: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.cited]

    @property
    def docs(self) -> list[Doc]:
        return [c.doc for c in self.cited]

    def __len__(self) -> int:
        return len(self.cited)

    def __iter__(self) -> Iterator[Citation]:
        return iter(self.cited)


# A bracketed group in ASCII, lenticular (U+3010/3011) or full-width (U+FF3B/FF3D) brackets, but not
# a Markdown link's text (``[text](url)``); groups split on ASCII or full-width commas, semicolons
# and the ideographic comma (U+FF0C, U+FF1B, U+3001).
_BRACKETS = re.compile(r"[\[\u3010\uff3b]([^\[\]\u3010\u3011\uff3b\uff3d\n]{1,200})[\]\u3011\uff3d](?!\()")
_SPLIT = re.compile(r"\s*[,;\uff0c\uff1b\u3001]\s*")


def parse_citations(answer: str, prompt: BuiltPrompt | PlacementPlan) -> Citations:
    """The documents an answer cites as ``[id]`` (also ``[a, b]``, ``【a】``), mapped back to them.

    Ids match exactly as given, or as shown in the prompt (escaped). A bare number such as ``[3]``
    is matched as an id only, never read as a slot (guessing would misattribute), except where the
    prompt showed numbers: in the ``liu`` style ("Document [3]"), and for long ids, which a prompt shows
    by their slot (:func:`~litm.prompt._anchors.shown_ids`); there the number stands for the document and
    the citation carries its own id. Repeated citations
    count once; ``unknown`` lists bracketed text that matches no id (a hallucinated citation, or
    ordinary brackets). Markdown links ``[text](url)`` are skipped.

    Example:
        >>> from litm.prompt import AnchorOptions, build_prompt
        >>> p = build_prompt([{"id": "x1", "text": "a"}, {"id": "x2", "text": "b"}], "Q?", anchors=AnchorOptions())
        >>> c = parse_citations("Both [x2][x1], see [x9].", p)
        >>> c.ids, c.unknown
        (['x2', 'x1'], ('x9',))
    """
    if not isinstance(answer, str):
        raise PromptError(f"the answer must be a string, got {type(answer).__name__}")
    if isinstance(prompt, BuiltPrompt):
        slots = [(b.id, b.doc, b.slot, b.shown_id or b.id) for b in prompt.blocks]
        nz, kind = prompt.neutralizer, get_style(prompt.style)
    elif isinstance(prompt, PlacementPlan):
        # A plan does not say how it was shown: its own ids, and the numbers a default prompt shows for long ones.
        shown = get_style("xml").shown_ids(prompt.slots, AnchorOptions())
        slots = [(s.doc.id, s.doc, s.slot, alias) for s, alias in zip(prompt.slots, shown, strict=True)]
        slots += [(s.doc.id, s.doc, s.slot, s.doc.id) for s in prompt.slots]
        nz, kind = Neutralizer(), get_style("xml")
    else:
        raise PromptError(f"parse_citations needs a Prompt or a PlacementPlan, got {type(prompt).__name__}")
    known: dict[str, tuple[str, Doc, int]] = {}
    for doc_id, doc, slot, shown_id in slots:
        # What the prompt showed (the id, its short alias, or the number of a liu-style search result), raw and
        # as escaped; the citation maps back to the document's own id.
        for form in kind.cited_forms(shown_id, nz):
            known.setdefault(form.strip(), (doc_id, doc, slot))
    cited: dict[str, Citation] = {}
    unknown: dict[str, None] = {}
    for m in _BRACKETS.finditer(answer):
        inner = m.group(1).strip()
        parts = [inner] if inner in known else [p for p in _SPLIT.split(inner) if p]
        for part in parts:
            hit = known.get(part)
            if hit is None:
                unknown.setdefault(part, None)
            elif hit[0] not in cited:
                cited[hit[0]] = Citation(hit[0], hit[1], hit[2], m.start(), m.end())
    return Citations(tuple(cited.values()), tuple(unknown))
