"""The :class:`Prompt` value: one rendered prompt, available in every format.

A prompt is rendered once into a system text and a user text (see :mod:`litm.prompt._render`);
:meth:`Prompt.render` wraps those two strings for a format, so the content is identical across
formats. ``prompt.text`` is the plain-text form, the exact string a token gate should count for a
base model; chat models count :meth:`Prompt.to_jinja` or :meth:`Prompt.to_chatml`.

Example:
    >>> from litm.placement import PlacementOptions
    >>> from litm.prompt import build_prompt
    >>> docs = ["Paris is in France.", "Rome is in Italy."]
    >>> local = PlacementOptions("none", model="local")  # the embedded model: litm's id-and-title anchors
    >>> p = build_prompt(docs, "Where is Paris?", instruction="Use the documents.", placement=local)
    >>> print(p.text)
    Use the documents.
    <BLANKLINE>
    <document id="doc-1">
    Paris is in France.
    </document>
    <BLANKLINE>
    <document id="doc-2">
    Rome is in Italy.
    </document>
    <BLANKLINE>
    Question: Where is Paris?
    Answer:
    >>> p.messages("openai")[-1]["role"]
    'user'
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Literal, overload

from litm.errors import PromptError
from litm.placement import Doc, PlacementPlan
from litm.prompt import _formats
from litm.prompt._anchors import AnchorOptions
from litm.prompt._chat_template import ChatTemplate
from litm.prompt._escape import Neutralizer
from litm.prompt._parse import Citations, ParsedPrompt, parse_citations, parse_prompt
from litm.prompt._render import DocBlock, neutralizer_for, render
from litm.prompt._settings import Escaping, Layout, Wording, portable_chat_template
from litm.prompt._templates import PromptTemplate

__all__ = ["DocBlock", "Prompt", "make_prompt"]


@dataclass(frozen=True)
class Prompt:
    """A built prompt. Read ``.text`` or call ``.messages(format)`` / ``.render(format)``.

    ``system`` and ``user`` are the rendered (already neutralised) texts every format wraps;
    ``answer_cue`` ends the plain-text form. ``question`` is the question as given, ``plan`` the
    placement the documents follow, ``blocks`` where each document sits in ``user``. ``wording``,
    ``anchors``, ``layout`` and ``escaping`` are the options it was built with (system text and
    instruction as given to this build), kept so that the prompt can be rebuilt with a chat template
    given late.

    A plain value: two builds of the same documents and question with the same options are equal
    (and hash alike), and a prompt pickles (its documents must, too).
    """

    system: str | None
    user: str
    answer_cue: str | None
    question: str
    plan: PlacementPlan
    blocks: tuple[DocBlock, ...]
    template: PromptTemplate
    neutralizer: Neutralizer
    chat_template: ChatTemplate | None = None
    wording: Wording = field(default_factory=Wording, repr=False)
    anchors: AnchorOptions = field(default_factory=AnchorOptions, repr=False)
    layout: Layout = field(default_factory=Layout, repr=False)
    escaping: Escaping = field(default_factory=Escaping, repr=False)

    def __hash__(self) -> int:
        # Equal prompts have equal texts; the plan holds the caller's own (possibly unhashable) items.
        return hash((self.system, self.user, self.answer_cue))

    def __getstate__(self) -> dict[str, object]:
        # A chat template that has rendered holds compiled Jinja code, which cannot be pickled.
        return {**self.__dict__, "chat_template": portable_chat_template(self.chat_template)}

    @property
    def style(self) -> str:
        """The anchor style of the document blocks (``xml``, ``bracket`` or ``liu``)."""
        return self.anchors.style

    # -- views ------------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The plain-text prompt (format ``text``): what a base model completes."""
        return _formats.to_text(self.system, self.user, self.answer_cue)

    @property
    def prefill(self) -> str | None:
        """The text a quote-first reply starts with where the format allows an assistant prefill (the end of
        :attr:`text`, the assistant turn of :meth:`to_anthropic`); None for other prompts.

        OpenAI's chat API has no prefill, and ChatML and Jinja strings end with the open assistant turn as
        the chat template writes it: there the instruction alone asks for the quote.

        >>> from litm.prompt import build_prompt
        >>> p = build_prompt(["Paris is in France."], "Where is Paris?", quote_first=True)
        >>> p.to_anthropic()["messages"][-1]
        {'role': 'assistant', 'content': 'Quote:'}
        >>> build_prompt(["Paris is in France."], "Where is Paris?").prefill is None
        True
        """
        return self.answer_cue if self.wording.quote_first and self.answer_cue else None

    @property
    def documents(self) -> list[Doc]:
        """The documents in prompt order."""
        return [b.doc for b in self.blocks]

    @property
    def ids(self) -> list[str]:
        """The document ids in prompt order."""
        return [b.id for b in self.blocks]

    @property
    def shown_ids(self) -> list[str]:
        """The ids the prompt shows, in prompt order: :attr:`ids`, or ``1``..``k`` when ids are long
        (see :func:`~litm.prompt._anchors.shown_ids`); :meth:`citations` maps them back."""
        return [b.shown_id or b.id for b in self.blocks]

    def __str__(self) -> str:
        return self.text

    # -- formats ----------------------------------------------------------------------------------

    def to_text(self) -> str:
        """Same as :attr:`text`."""
        return self.text

    def to_openai(self) -> list[dict[str, str]]:
        """OpenAI Chat Completions ``messages``."""
        return _formats.to_openai(self.system, self.user)

    def to_anthropic(self) -> _formats.AnthropicArgs:
        """Anthropic Messages API arguments: ``client.messages.create(model=..., **p.to_anthropic())``."""
        return _formats.to_anthropic(self.system, self.user, prefill=self.prefill)

    def to_chatml(self, *, add_generation_prompt: bool = True) -> str:
        """A ChatML string ending with an open assistant turn."""
        return _formats.to_chatml(self.system, self.user, add_generation_prompt=add_generation_prompt)

    def to_jinja(self, chat_template: ChatTemplate | str | None = None, *, add_generation_prompt: bool = True) -> str:
        """Render with a model's chat template (the builder's, or one given here).

        A template given here goes through :meth:`with_chat_template` first, so its special tokens
        are escaped too.
        """
        if chat_template is not None:
            return self.with_chat_template(chat_template).to_jinja(add_generation_prompt=add_generation_prompt)
        if self.chat_template is None:
            raise PromptError(
                "format 'jinja' needs a chat template (chat_template= in Python, --chat-template in the CLI)"
            )
        return _formats.to_jinja(
            self.chat_template, self.system, self.user, add_generation_prompt=add_generation_prompt
        )

    def with_chat_template(self, chat_template: ChatTemplate | str) -> Prompt:
        """This prompt bound to ``chat_template`` (for :meth:`to_jinja` and :meth:`parse`).

        If the template treats a token as special that this prompt did not escape, and a document,
        the question or the system text contains it, the prompt is rebuilt from its own options with
        that token escaped as well; otherwise the content is unchanged. Building with
        ``chat_template=`` avoids this.
        """
        template = _as_chat_template(chat_template)
        missing = [t for t in template.special_tokens() if not self.neutralizer.covers([t])]
        probe = Neutralizer(missing, defaults=False)
        if not any(probe.find_forgeries(s) for s in (self.system or "", self.user)):
            return dataclasses.replace(self, chat_template=template)
        # Everything escaped so far stays escaped: the tokens of the template the prompt was built with too.
        escaping = Escaping(special_tokens=self.escaping.tokens(), chat_template=template)
        return make_prompt(
            self.plan, self.question, wording=self.wording, anchors=self.anchors, layout=self.layout,
            escaping=escaping,
        )

    @overload
    def render(
        self,
        format: _formats.StringFormat = "text",
        *,
        chat_template: ChatTemplate | str | None = None,
        add_generation_prompt: bool = True,
    ) -> str: ...

    @overload
    def render(
        self,
        format: Literal["openai"],
        *,
        chat_template: ChatTemplate | str | None = None,
        add_generation_prompt: bool = True,
    ) -> list[dict[str, str]]: ...

    @overload
    def render(
        self,
        format: Literal["anthropic"],
        *,
        chat_template: ChatTemplate | str | None = None,
        add_generation_prompt: bool = True,
    ) -> _formats.AnthropicArgs: ...

    def render(
        self,
        format: _formats.Format = "text",
        *,
        chat_template: ChatTemplate | str | None = None,
        add_generation_prompt: bool = True,
    ) -> str | list[dict[str, str]] | _formats.AnthropicArgs:
        """The prompt in ``format``: a string for text/chatml/jinja, messages for openai, arguments for anthropic.

        Typed per format (``render("openai")`` is a ``list``, ``render("anthropic")`` an
        :class:`~litm.prompt._formats.AnthropicArgs`, the others a ``str``); :meth:`dumps` gives any format,
        named at run time, as one string. An unknown format is a :class:`~litm.errors.PromptError`.
        """
        fmt = _formats.check_format(format)
        if fmt == "text":
            return self.text
        if fmt == "openai":
            return self.to_openai()
        if fmt == "anthropic":
            return self.to_anthropic()
        if fmt == "chatml":
            return self.to_chatml(add_generation_prompt=add_generation_prompt)
        return self.to_jinja(chat_template, add_generation_prompt=add_generation_prompt)

    @overload
    def messages(
        self, format: Literal["openai"] = "openai", *, chat_template: ChatTemplate | str | None = None
    ) -> list[dict[str, str]]: ...

    @overload
    def messages(
        self, format: Literal["anthropic"], *, chat_template: ChatTemplate | str | None = None
    ) -> _formats.AnthropicArgs: ...

    @overload
    def messages(self, format: _formats.StringFormat, *, chat_template: ChatTemplate | str | None = None) -> str: ...

    def messages(
        self, format: _formats.Format = "openai", *, chat_template: ChatTemplate | str | None = None
    ) -> str | list[dict[str, str]] | _formats.AnthropicArgs:
        """Same as :meth:`render`, defaulting to OpenAI messages (typed per format, as there)."""
        return self.render(format, chat_template=chat_template)

    def dumps(self, format: str = "text", *, chat_template: ChatTemplate | str | None = None) -> str:
        """The prompt in ``format`` (a name known only at run time, as a command gets it) as one string: the
        rendering itself for text/chatml/jinja, the request's JSON for openai/anthropic.

        Example:
            >>> from litm.prompt import build_prompt
            >>> p = build_prompt([{"id": "a", "text": "x"}], "Why?")
            >>> p.dumps("openai").splitlines()[:2]
            ['[', '  {']
        """
        fmt = _formats.check_format(format)
        if fmt == "openai":
            return json.dumps(self.to_openai(), ensure_ascii=False, indent=2)
        if fmt == "anthropic":
            return json.dumps(self.to_anthropic(), ensure_ascii=False, indent=2)
        if fmt == "chatml":
            return self.to_chatml()
        if fmt == "jinja":
            return self.to_jinja(chat_template)
        return self.text

    # -- reading back -------------------------------------------------------------------------------

    def parse(self, rendered: object | None = None) -> ParsedPrompt:
        """Parse a rendering of this prompt (default: :attr:`text`) back into its document blocks.

        A block's ``id`` is the document's own id where the prompt showed a short alias for it (the header
        fields in ``attrs`` stay as written).
        """
        parsed = parse_prompt(self.text if rendered is None else rendered, template=self.template,
                              neutralizer=self.neutralizer, style=self.style)
        own = {b.shown_id: b.id for b in self.blocks if b.shown_id and b.shown_id != b.id}
        if not own:
            return parsed
        blocks = tuple(dataclasses.replace(b, id=own.get(b.id, b.id)) for b in parsed.blocks)
        return dataclasses.replace(parsed, blocks=blocks)

    def citations(self, answer: str) -> Citations:
        """The documents an answer cites (see :func:`~litm.prompt._parse.parse_citations`)."""
        return parse_citations(answer, self)


def _as_chat_template(value: ChatTemplate | str) -> ChatTemplate:
    if isinstance(value, ChatTemplate):
        return value
    if isinstance(value, str):
        return ChatTemplate(value)
    raise PromptError(f"chat_template must be a ChatTemplate or a template string, got {type(value).__name__}")


def make_prompt(
    plan: PlacementPlan,
    question: str,
    *,
    wording: Wording,
    anchors: AnchorOptions,
    layout: Layout,
    escaping: Escaping,
    neutralizer: Neutralizer | None = None,
) -> Prompt:
    """Render ``plan`` and ``question`` with these options into a :class:`Prompt` (the builder's last step).

    ``neutralizer`` may pass the one these options make (a builder keeps it), to save recompiling it.
    """
    nz = neutralizer_for(wording, anchors, escaping) if neutralizer is None else neutralizer
    out = render(plan, question, wording=wording, anchors=anchors, layout=layout, neutralizer=nz)
    return Prompt(
        system=out.system,
        user=out.user,
        answer_cue=out.answer_cue,
        question=question,
        plan=plan,
        blocks=out.blocks,
        template=wording.prompt_template,
        neutralizer=nz,
        chat_template=escaping.chat_template,
        wording=wording,
        anchors=anchors,
        layout=layout,
        escaping=escaping,
    )
