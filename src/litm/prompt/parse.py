"""Reading prompts back: document blocks out of a rendered prompt, and citations out of an answer.

:func:`parse_prompt` takes any rendering (the text, a ChatML or chat-template string, OpenAI
messages, Anthropic arguments) and returns the document blocks in order, with ids, header fields and
the original (un-escaped) text. It is strict: an anchor that is not well formed, a block that does
not close, or a closing tag naming another id raises :class:`~litm.errors.PromptError`. Since
documents cannot contain anchors (they are escaped), parsing finds exactly the blocks litm wrote.

:func:`parse_citations` maps the ``[id]`` citations of a model's answer back to the documents.

Example:
    >>> from litm.prompt import build_prompt
    >>> p = build_prompt([{"id": "a", "text": "<|im_end|> x"}, {"id": "b", "text": "y"}], "Q?")
    >>> [(b.id, b.text) for b in parse_prompt(p.to_chatml()).blocks]
    [('a', '<|im_end|> x'), ('b', 'y')]
    >>> parse_citations("It is x [a].", p).ids
    ['a']
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from litm.errors import PromptError
from litm.placement.documents import Doc
from litm.placement.plan import PlacementPlan
from litm.prompt.escape import Neutralizer, escape_attr, unescape_attr
from litm.prompt.templates import LANGS, PromptTemplate


@runtime_checkable
class BuiltPrompt(Protocol):
    """What parsing reads from a built :class:`~litm.prompt.prompt.Prompt` (kept structural, so this module
    sits below the prompt value that calls it)."""

    @property
    def text(self) -> str: ...

    @property
    def template(self) -> PromptTemplate: ...

    @property
    def neutralizer(self) -> Neutralizer: ...

    @property
    def blocks(self) -> Sequence[Any]: ...

__all__ = ["Citation", "Citations", "ParsedBlock", "ParsedPrompt", "parse_citations", "parse_prompt"]

_ATTR = re.compile(r' ([^\W\d][\w.:-]*)="([^"]*)"')


@dataclass(frozen=True)
class ParsedBlock:
    """One document block read back: its id, original text, and header attributes (un-escaped).

    ``attrs`` maps the template's attribute names to values; ``position``, ``score``, ``title``,
    ``source`` and ``middle`` read them through the template's names. ``start``/``end`` delimit the
    block in the string it was parsed from (for messages: in that message's content).
    """

    id: str
    text: str
    attrs: Mapping[str, str]
    template: PromptTemplate = field(repr=False)
    start: int = 0
    end: int = 0

    @property
    def position(self) -> str | None:
        return self.attrs.get(self.template.position_attr)

    @property
    def score(self) -> str | None:
        return self.attrs.get(self.template.score_attr)

    @property
    def title(self) -> str | None:
        return self.attrs.get(self.template.title_attr)

    @property
    def source(self) -> str | None:
        return self.attrs.get(self.template.source_attr)

    @property
    def middle(self) -> bool:
        return self.attrs.get(self.template.zone_attr) == self.template.middle


@dataclass(frozen=True)
class ParsedPrompt:
    """The document blocks of a parsed prompt, in order."""

    blocks: tuple[ParsedBlock, ...]
    template: PromptTemplate

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


def _scan(text: str, t: PromptTemplate, nz: Neutralizer) -> list[ParsedBlock]:
    tag = re.escape(t.tag)
    opening = re.compile(rf'<{tag}((?: [^\W\d][\w.:-]*="[^"]*")*)>\n')
    closing = re.compile(rf'\n</{tag}(?: {re.escape(t.id_attr)}="([^"]*)")?>')
    # Any anchor-looking text at all, in any case: each must be part of a well-formed block.
    anchor = re.compile(rf"</?{tag}", re.IGNORECASE)
    blocks: list[ParsedBlock] = []
    pos = 0
    while True:
        m = anchor.search(text, pos)
        if m is None:
            return blocks
        head = opening.match(text, m.start())
        if head is None:
            found = text[m.start() : m.start() + 40]
            raise PromptError(f"malformed prompt: {found!r} at offset {m.start()} is not a document header")
        attrs: dict[str, str] = {}
        for name, value in _ATTR.findall(head.group(1)):
            if name in attrs:
                raise PromptError(f"malformed prompt: header at offset {m.start()} repeats {name!r}")
            attrs[name] = unescape_attr(value, nz)
        if t.id_attr not in attrs:
            raise PromptError(f"malformed prompt: header at offset {m.start()} has no {t.id_attr!r}")
        # The body cannot contain an anchor, so the next anchor must be this block's closing tag.
        nxt = anchor.search(text, head.end())
        end = closing.match(text, nxt.start() - 1) if nxt is not None and nxt.start() > head.end() else None
        if nxt is None or end is None:
            raise PromptError(f"malformed prompt: document {attrs[t.id_attr]!r} is not closed")
        if end.group(1) is not None and unescape_attr(end.group(1), nz) != attrs[t.id_attr]:
            raise PromptError(
                f"malformed prompt: document {attrs[t.id_attr]!r} is closed by "
                f"{unescape_attr(end.group(1), nz)!r}"
            )
        body = text[head.end() : end.start()]
        blocks.append(ParsedBlock(attrs[t.id_attr], nz.restore(body), attrs, t, m.start(), end.end()))
        pos = end.end()


def parse_prompt(
    rendered: object,
    *,
    template: PromptTemplate | str | None = None,
    neutralizer: Neutralizer | None = None,
    special_tokens: Sequence[str] = (),
) -> ParsedPrompt:
    """Parse a rendered prompt back into its document blocks (ids, header fields, original text).

    ``rendered``: a string in any format, OpenAI messages, Anthropic arguments, or a
    :class:`~litm.prompt.prompt.Prompt` (its text). ``template``: the
    :class:`~litm.prompt.templates.PromptTemplate` or language the prompt was built with; by
    default the built-in languages are tried. Un-escaping must use the same special tokens as the
    build: pass the prompt's ``neutralizer``, or the same ``special_tokens`` (chat template tokens
    included); :meth:`Prompt.parse <litm.prompt.prompt.Prompt.parse>` does this for you.
    """
    if isinstance(rendered, BuiltPrompt):
        template = rendered.template if template is None else template
        neutralizer = rendered.neutralizer if neutralizer is None else neutralizer
        rendered = rendered.text
    contents = _contents(rendered)
    if isinstance(template, str):
        template = PromptTemplate.for_lang(template)
    candidates = [template] if template is not None else [PromptTemplate.for_lang(lang) for lang in LANGS]
    for t in candidates:
        if not isinstance(t, PromptTemplate):
            raise PromptError(f"template must be a PromptTemplate or a language, got {type(t).__name__}")
        nz = neutralizer if neutralizer is not None else Neutralizer(special_tokens, tags=[t.tag])
        blocks = [b for text in contents for b in _scan(text, t, nz)]
        if blocks or template is not None:
            return ParsedPrompt(tuple(blocks), t)
    return ParsedPrompt((), candidates[0])


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
    is matched as an id only, never read as a slot: guessing would misattribute. Repeated citations
    count once; ``unknown`` lists bracketed text that matches no id (a hallucinated citation, or
    ordinary brackets). Markdown links ``[text](url)`` are skipped.

    Example:
        >>> from litm.prompt import build_prompt
        >>> p = build_prompt([{"id": "x1", "text": "a"}, {"id": "x2", "text": "b"}], "Q?")
        >>> c = parse_citations("Both [x2][x1], see [x9].", p)
        >>> c.ids, c.unknown
        (['x2', 'x1'], ('x9',))
    """
    if not isinstance(answer, str):
        raise PromptError(f"the answer must be a string, got {type(answer).__name__}")
    if isinstance(prompt, BuiltPrompt):
        slots = [(b.id, b.doc, b.slot) for b in prompt.blocks]
        nz = prompt.neutralizer
    elif isinstance(prompt, PlacementPlan):
        slots = [(s.doc.id, s.doc, s.slot) for s in prompt.slots]
        nz = Neutralizer()
    else:
        raise PromptError(f"parse_citations needs a Prompt or a PlacementPlan, got {type(prompt).__name__}")
    known: dict[str, tuple[str, Doc, int]] = {}
    for doc_id, doc, slot in slots:
        for shown in (doc_id, nz.neutralize(doc_id), escape_attr(doc_id, nz)):
            known.setdefault(shown.strip(), (doc_id, doc, slot))
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
