"""The prompt builder's option objects: wording, layout and escaping (anchors live in :mod:`litm.prompt._anchors`).

Each is a small frozen dataclass that validates its own fields when made (a bad value raises
:class:`~litm.errors.PromptOptionError`, both a ``PromptError`` and an ``InvalidOptionError``), compares
by value, and has a JSON-ready :meth:`to_dict` that its ``from_dict`` reads back exactly.

Example:
    >>> Wording(lang="zh").prompt_template.tag
    '文档'
    >>> Layout(question_position="both").to_dict()
    {'question_position': 'both', 'repeat_instruction': False}
    >>> Escaping(special_tokens=["<custom>"]).special_tokens
    ('<custom>',)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from litm.errors import PromptError, PromptOptionError
from litm.prompt._chat_template import ChatTemplate
from litm.prompt._escape import Neutralizer
from litm.prompt._fields import checked_keys, construct, field_values, replace_fields
from litm.prompt._templates import LANGS, PromptTemplate

__all__ = ["QUESTION_POSITIONS", "Escaping", "Layout", "QuestionPosition", "Wording", "portable_chat_template"]

QuestionPosition = Literal["after", "before", "both"]
QUESTION_POSITIONS: tuple[str, ...] = ("after", "before", "both")


@dataclass(frozen=True)
class Wording:
    """The words of a prompt: language or template, system text, instruction and answer cue.

    ``lang`` (``"en"`` or ``"zh"``) picks a built-in :class:`~litm.prompt.PromptTemplate`;
    ``template`` replaces it and brings its own language (``lang`` then reads the template's).
    ``system`` is the system text (none by default); ``instruction`` overrides the style's instruction
    (``""`` for none); ``answer_cue`` overrides the plain-text cue (``""`` for none, e.g. when the
    caller appends its own). ``None`` means "the template's".

    ``quote_first`` (default False): ask for the sentence of the documents that best answers the question,
    quoted word for word, before the answer (the template's ``quote_instruction``, added to the
    instruction), and the answer on its own line after the template's ``answer_marker`` (``Answer:``).
    Where a format allows an assistant prefill, the reply is started with the template's ``quote_cue``
    (``Quote:``): the plain-text form ends with it instead of the answer cue (unless ``answer_cue`` is
    given), and the Anthropic arguments carry it as the assistant turn (see
    :attr:`~litm.prompt.Prompt.prefill`). Read the reply with :func:`~litm.prompt.parse_quoted_answer`.

    Example:
        >>> from litm.prompt import build_prompt
        >>> p = build_prompt(["Paris is in France."], "Where is Paris?", quote_first=True, recap=False)
        >>> p.text.splitlines()[-1], p.prefill
        ('Quote:', 'Quote:')
    """

    lang: str = "en"
    template: PromptTemplate | None = None
    system: str | None = None
    instruction: str | None = None
    answer_cue: str | None = None
    quote_first: bool = False

    def __post_init__(self) -> None:
        if self.template is not None:
            if not isinstance(self.template, PromptTemplate):
                raise PromptOptionError(f"template must be a PromptTemplate, got {type(self.template).__name__}")
            object.__setattr__(self, "lang", self.template.lang)
        elif self.lang not in LANGS:
            raise PromptOptionError(f"unknown prompt language {self.lang!r}; choose from {', '.join(LANGS)}")
        for name in ("system", "instruction", "answer_cue"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise PromptOptionError(f"{name} must be a string or None, got {type(value).__name__}")
        if not isinstance(self.quote_first, bool):
            raise PromptOptionError(f"quote_first must be True or False, got {self.quote_first!r}")
        t = self.prompt_template
        if self.quote_first and not (t.quote_cue.strip() and t.answer_marker.strip()):
            raise PromptOptionError("quote_first needs a template whose quote_cue and answer_marker are not empty")

    @property
    def prompt_template(self) -> PromptTemplate:
        """The template in use: the one given, or the built-in one for :attr:`lang`."""
        return self.template if self.template is not None else PromptTemplate.for_lang(self.lang)

    def replace(self, **changes: object) -> Wording:
        """A copy with ``changes`` applied (validated like a new object)."""
        return replace_fields(self, changes)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready; a custom template travels whole, a built-in one as its language."""
        out = field_values(self)
        out["template"] = None if self.template is None else self.template.to_dict()
        if not self.quote_first:
            # Left out when off, so a builder saved without quote-first reads in a litm that predates it.
            del out["quote_first"]
        return out

    @classmethod
    def from_dict(cls, data: object) -> Wording:
        values = checked_keys(cls, data, "wording")
        if values.get("template") is not None:
            values["template"] = PromptTemplate.from_dict(values["template"])
        return construct(cls, values)


@dataclass(frozen=True)
class Layout:
    """Where things go: ``question_position`` (``"after"`` the documents, ``"before"``, or ``"both"``:
    query-aware contextualisation) and ``repeat_instruction`` (the instruction again at the end, for
    long agent prompts)."""

    question_position: QuestionPosition = "after"
    repeat_instruction: bool = False

    def __post_init__(self) -> None:
        if self.question_position not in QUESTION_POSITIONS:
            raise PromptOptionError(
                f"question_position must be one of {', '.join(QUESTION_POSITIONS)}, got {self.question_position!r}"
            )
        if not isinstance(self.repeat_instruction, bool):
            raise PromptOptionError(f"repeat_instruction must be True or False, got {self.repeat_instruction!r}")

    def replace(self, **changes: object) -> Layout:
        """A copy with ``changes`` applied (validated like a new object)."""
        return replace_fields(self, changes)

    def to_dict(self) -> dict[str, object]:
        return field_values(self)

    @classmethod
    def from_dict(cls, data: object) -> Layout:
        return construct(cls, checked_keys(cls, data, "layout"))


@dataclass(frozen=True)
class Escaping:
    """What is escaped besides litm's defaults: ``special_tokens`` (extra tokens a document must not
    forge) and ``chat_template`` (a :class:`~litm.prompt.ChatTemplate`, or its source
    string: every token it treats as special is escaped too, and it enables format ``"jinja"``)."""

    special_tokens: tuple[str, ...] = ()
    chat_template: ChatTemplate | None = None

    def __post_init__(self) -> None:
        tokens: object = self.special_tokens
        if isinstance(tokens, str) or not isinstance(tokens, Iterable):
            raise PromptOptionError("special_tokens must be a list of strings, not one string")
        tokens = tuple(tokens)
        try:
            Neutralizer(tokens, defaults=False)  # validates each token the way escaping will use it
        except PromptError as exc:
            raise PromptOptionError(str(exc)) from None
        object.__setattr__(self, "special_tokens", tokens)
        template: object = self.chat_template
        if isinstance(template, str):
            object.__setattr__(self, "chat_template", ChatTemplate(template))
        elif template is not None and not isinstance(template, ChatTemplate):
            raise PromptOptionError(f"chat_template must be a ChatTemplate or a string, got {type(template).__name__}")

    def tokens(self) -> tuple[str, ...]:
        """Every extra token to escape: :attr:`special_tokens`, then the chat template's."""
        extra = self.chat_template.special_tokens() if self.chat_template is not None else ()
        return (*self.special_tokens, *extra)

    def replace(self, **changes: object) -> Escaping:
        """A copy with ``changes`` applied (validated like a new object)."""
        return replace_fields(self, changes)

    def to_dict(self) -> dict[str, object]:
        ct = self.chat_template
        template = None if ct is None else {
            "source": ct.source, "bos_token": ct.bos_token, "eos_token": ct.eos_token, "tokens": list(ct.tokens),
            "name": ct.name,
        }
        return {"special_tokens": list(self.special_tokens), "chat_template": template}

    @classmethod
    def from_dict(cls, data: object) -> Escaping:
        values = checked_keys(cls, data, "escaping")
        template = values.get("chat_template")
        if template is not None:
            if not isinstance(template, Mapping):
                raise PromptOptionError(f"escaping.chat_template must be an object, got {type(template).__name__}")
            known = {f.name for f in dataclasses.fields(ChatTemplate)}
            unknown = sorted(set(template) - known)
            if unknown:
                raise PromptOptionError(f"unknown escaping.chat_template field(s) {', '.join(unknown)}")
            tokens = template.get("tokens", ())
            if isinstance(tokens, str) or not isinstance(tokens, list | tuple):
                raise PromptOptionError("escaping.chat_template.tokens must be a list of strings")
            values["chat_template"] = ChatTemplate(**{**template, "tokens": tuple(tokens)})
        return construct(cls, values)

    def __getstate__(self) -> dict[str, object]:
        return {"special_tokens": self.special_tokens, "chat_template": portable_chat_template(self.chat_template)}


def portable_chat_template(template: ChatTemplate | None) -> ChatTemplate | None:
    """The same template without its compiled Jinja code, which cannot be pickled (it is rebuilt on use)."""
    return None if template is None else dataclasses.replace(template)
