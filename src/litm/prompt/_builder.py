"""Building prompts: a :class:`PromptBuilder` composed of small option objects, and a one-call helper.

:class:`PromptBuilder` holds four validated option objects, one per concern:

=========== ================================================= ==========================================
wording     :class:`~litm.prompt.Wording`             language or template, system, instruction,
                                                              answer cue
anchors     :class:`~litm.prompt.AnchorOptions`       anchor style, header fields, closing ids,
                                                              middle zone and marker, recap
layout      :class:`~litm.prompt.Layout`              question position, repeated instruction
escaping    :class:`~litm.prompt.Escaping`            extra special tokens, chat template
=========== ================================================= ==========================================

and :meth:`PromptBuilder.build` applies them to documents and a question (see
:mod:`litm.prompt._render` for the layout). The builder does not place documents: it keeps the order it
is given, or a :class:`~litm.placement.PlacementPlan` from :func:`litm.place` (or from ``fit``,
which ranks, places and trims). :func:`build_prompt` is the one-call convenience: it places (with
``strategy=`` or ``placement=``, when given) and then builds.

Example:
    >>> from litm.placement import place
    >>> b = PromptBuilder(anchors=AnchorOptions(middle_marker=True))
    >>> p = b.build(place(["a", "b", "c", "d", "e", "f"], "edges"), "Which?")
    >>> p.ids
    ['doc-1', 'doc-3', 'doc-5', 'doc-6', 'doc-4', 'doc-2']
    >>> [blk.slot for blk in p.blocks if blk.middle]
    [3, 4]
    >>> PromptBuilder.from_dict(b.to_dict()) == b
    True
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from litm.errors import PromptError, PromptOptionError
from litm.placement import PlacementOptions, PlacementPlan, Strategy, place
from litm.prompt._anchor_rule import AnchorChoice, anchors_for
from litm.prompt._anchors import AnchorOptions
from litm.prompt._chat_template import ChatTemplate
from litm.prompt._escape import Neutralizer
from litm.prompt._fields import construct
from litm.prompt._prompt import Prompt, make_prompt
from litm.prompt._render import neutralizer_for
from litm.prompt._settings import QUESTION_POSITIONS, Escaping, Layout, QuestionPosition, Wording
from litm.prompt._templates import PromptTemplate

__all__ = ["BUILDER_FORMAT_VERSION", "QUESTION_POSITIONS", "PromptBuilder", "QuestionPosition", "build_prompt"]

#: The version of :meth:`PromptBuilder.to_dict`'s form; :meth:`PromptBuilder.from_dict` refuses newer ones.
BUILDER_FORMAT_VERSION = 1
_TYPE = "litm.prompt.PromptBuilder"

# The option objects and, for the flat keyword form, which object owns each field name.
_GROUPS: dict[str, type[Wording | AnchorOptions | Layout | Escaping]] = {
    "wording": Wording, "anchors": AnchorOptions, "layout": Layout, "escaping": Escaping,
}  # fmt: skip
_OWNER = {f.name: group for group, cls in _GROUPS.items() for f in dataclasses.fields(cls)}
_REMOVED_IN = "0.3"
_G = TypeVar("_G", Wording, AnchorOptions, Layout, Escaping)


def _options(
    groups: Mapping[str, object], flat: Mapping[str, object], *, caller: str
) -> tuple[Wording, AnchorOptions | None, Layout, Escaping]:
    """The four option objects from ``groups`` (objects or None) and ``flat`` field names.

    A flat name goes to the object that owns it; giving a field both ways is refused, since the two
    could disagree. The anchors are None (chosen by model at each build) when neither their object nor any
    of their fields is given.
    """
    unknown = sorted(set(flat) - set(_OWNER))
    if unknown:
        raise PromptOptionError(f"{caller}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_OWNER))}")
    by_group: dict[str, dict[str, object]] = {}
    for name, value in flat.items():
        by_group.setdefault(_OWNER[name], {})[name] = value
    escaping = by_group.get("escaping")
    if escaping and "special_tokens" in escaping:
        tokens = escaping["special_tokens"]
        if not isinstance(tokens, str) and isinstance(tokens, Iterable):
            escaping["special_tokens"] = tuple(tokens)

    def one(group: str, cls: type[_G]) -> _G:
        given, values = groups.get(group), by_group.get(group)
        if given is not None and not isinstance(given, cls):
            raise PromptOptionError(f"{group} must be a {cls.__name__}, got {type(given).__name__}")
        if given is not None and values:
            raise PromptOptionError(
                f"{caller}: {', '.join(values)} given beside {group}=; set them in {group}={cls.__name__}(...)"
            )
        return given if given is not None else construct(cls, values or {})

    anchors = None if groups.get("anchors") is None and not by_group.get("anchors") else one("anchors", AnchorOptions)
    return one("wording", Wording), anchors, one("layout", Layout), one("escaping", Escaping)


def _deprecated_flat(flat: Mapping[str, object]) -> str:
    groups: dict[str, list[str]] = {}
    for name in flat:
        groups.setdefault(_OWNER.get(name, "?"), []).append(name)
    parts = [
        f"{group}={_GROUPS[group].__name__}({', '.join(f'{n}=...' for n in names)})"
        for group, names in groups.items()
        if group in _GROUPS
    ]
    return (
        f"PromptBuilder({', '.join(f'{n}=...' for n in flat)}) is deprecated: pass {', '.join(parts)} "
        f"(the flat keywords go in litm {_REMOVED_IN})"
    )


def _place(docs: Sequence[object], placement: PlacementOptions | None, anchors: AnchorOptions | None) -> PlacementPlan:
    """Place ``docs`` as ``placement`` says (None: keep their order, still read, check and dedup them)."""
    if isinstance(docs, (str, bytes)) or not isinstance(docs, Sequence):
        raise PromptError(f"documents must be a list or a PlacementPlan, got {type(docs).__name__}")
    if placement is None:
        return place(docs, placement=_KEEP_ORDER)
    # A measured middle-zone profile also drives the profile strategy unless the options name their own.
    if anchors is not None and anchors.middle_profile is not None and placement.profile is None:
        placement = placement.replace(profile=anchors.middle_profile)
    return place(docs, placement=placement)


_KEEP_ORDER = PlacementOptions(strategy="none", min_docs=0)


class PromptBuilder:
    """Reusable prompt settings; :meth:`build` turns documents and a question into a :class:`Prompt`.

    ``PromptBuilder(wording=Wording(...), anchors=AnchorOptions(...), layout=Layout(...),
    escaping=Escaping(...))``; each defaults to its object's defaults, except ``anchors``: without them the
    builder picks the anchors of the model each prompt is for (:func:`~litm.prompt.anchors_for`: the model's
    measured format, else Liu et al.'s plain one), the model being the one its plan was placed for
    (``PlacementOptions(model=...)``, ``plan.model``). ``AnchorOptions()`` gives litm's
    id-and-title blocks whatever the model. The builder keeps the order of the documents it is given: place
    them first (:func:`litm.place`, ``fit``) or use :func:`build_prompt`.

    Deprecated (one release, with a :class:`DeprecationWarning`): the flat keywords of litm 0.1
    (``lang=``, ``scores=``, ``middle_marker=``, ``question_position=``, ``chat_template=``, ... any
    field of the four objects), which go to the object that owns them.

    Example:
        >>> b = PromptBuilder(wording=Wording(lang="zh"), anchors=AnchorOptions(positions=True))
        >>> p = b.build([{"id": "a", "text": "巴黎在法国。", "score": 0.9}], "巴黎在哪里")
        >>> p.text.splitlines()[2]
        '<文档 编号="a" 位置="1/1">'
    """

    def __init__(
        self,
        *,
        wording: Wording | None = None,
        anchors: AnchorOptions | None = None,
        layout: Layout | None = None,
        escaping: Escaping | None = None,
        **deprecated: object,
    ) -> None:
        groups = {"wording": wording, "anchors": anchors, "layout": layout, "escaping": escaping}
        self._wording, self._anchors, self._layout, self._escaping = _options(
            groups, deprecated, caller="PromptBuilder"
        )
        if deprecated:
            warnings.warn(_deprecated_flat(deprecated), DeprecationWarning, stacklevel=2)
        # for_chat() on a builder that picks anchors by model: the chat instruction applies at build time,
        # to the styles that have litm's instruction (not liu's own).
        self._chat = False
        self._neutralizers: dict[str, Neutralizer] = {}
        self._neutralizer = self._neutralizer_for(self.anchors_for(None).options)

    # -- the options ------------------------------------------------------------------------------------

    @property
    def wording(self) -> Wording:
        return self._wording

    @property
    def anchors(self) -> AnchorOptions | None:
        """The anchors given, or None when each prompt gets its model's (see :meth:`anchors_for`)."""
        return self._anchors

    def anchors_for(self, model: str | None) -> AnchorChoice:
        """The anchors a prompt for ``model`` gets from this builder, and why.

        Example:
            >>> PromptBuilder().anchors_for("local").options == AnchorOptions()
            True
            >>> PromptBuilder(anchors=AnchorOptions(style="bracket")).anchors_for("local").rule
            'given'
        """
        if self._anchors is not None:
            return AnchorChoice(self._anchors, "given")
        return anchors_for(model)

    def _neutralizer_for(self, anchors: AnchorOptions) -> Neutralizer:
        nz = self._neutralizers.get(anchors.style)
        if nz is None:
            nz = self._neutralizers[anchors.style] = neutralizer_for(self._wording, anchors, self._escaping)
        return nz

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def escaping(self) -> Escaping:
        return self._escaping

    @property
    def template(self) -> PromptTemplate:
        """The prompt template in use (from :attr:`wording`)."""
        return self._wording.prompt_template

    @property
    def chat_template(self) -> ChatTemplate | None:
        return self._escaping.chat_template

    @property
    def neutralizer(self) -> Neutralizer:
        """The neutralizer every untrusted text of this builder's prompts goes through (for anchors picked by
        model: of a prompt for no particular model; each :class:`Prompt` carries its own)."""
        return self._neutralizer

    def replace(
        self,
        *,
        wording: Wording | None = None,
        anchors: AnchorOptions | None = None,
        layout: Layout | None = None,
        escaping: Escaping | None = None,
    ) -> PromptBuilder:
        """A builder with some option objects replaced."""
        out = PromptBuilder(
            wording=wording or self._wording,
            anchors=anchors or self._anchors,
            layout=layout or self._layout,
            escaping=escaping or self._escaping,
        )
        out._chat = self._chat
        return out

    def for_chat(self) -> PromptBuilder:
        """The builder a chat model gets: the template's ``chat_instruction`` (the answer first, then the cited
        ids; never ids alone) where this builder uses the default instruction of the ``xml`` or ``bracket``
        style; itself otherwise (an instruction given, or the ``liu`` style's own). With anchors picked by model,
        each prompt gets the chat instruction when its model's style is ``xml`` or ``bracket``.

        Example:
            >>> text = PromptBuilder(anchors=AnchorOptions()).for_chat().build([{"id": "a", "text": "x"}], "Q?").text
            >>> "Write the answer first" in text, "Never reply with ids alone." in text
            (True, True)
            >>> PromptBuilder(wording=Wording(instruction="Be brief.")).for_chat().wording.instruction
            'Be brief.'
        """
        if self._wording.instruction is not None or (self._anchors is not None and self._anchors.style == "liu"):
            return self
        if self._anchors is None:
            out = self.replace()
            out._chat = True
            return out
        wording = self._wording.replace(instruction=self._wording.prompt_template.chat_instruction)
        return self.replace(wording=wording)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PromptBuilder):
            return NotImplemented
        return self._state() == other._state()

    def __hash__(self) -> int:
        return hash(self._state())

    def _state(self) -> tuple[Wording, AnchorOptions | None, Layout, Escaping, bool]:
        return (self._wording, self._anchors, self._layout, self._escaping, self._chat)

    def __repr__(self) -> str:
        return (
            f"PromptBuilder(wording={self._wording!r}, anchors={self._anchors!r}, layout={self._layout!r}, "
            f"escaping={self._escaping!r})"
        )

    # -- building ---------------------------------------------------------------------------------------

    def build(
        self,
        docs: Sequence[object] | PlacementPlan,
        question: str,
        *,
        system: str | None = None,
        instruction: str | None = None,
    ) -> Prompt:
        """Anchor and lay out ``docs`` around ``question``, in the order given.

        ``docs`` is a :class:`~litm.placement.PlacementPlan`, used as is, or anything
        :func:`~litm.placement.place` accepts (strings, dicts, ``Doc``, LangChain / LlamaIndex /
        Haystack documents), kept in order. Ids must be unique (repeated ids raise
        :class:`~litm.errors.DuplicateIdError`; dedup with
        ``litm.place(docs, placement=PlacementOptions("none", dedup="id"))``). ``system`` and ``instruction``
        override the builder's for this prompt. Where the builder picks anchors by model (see :meth:`anchors_for`),
        the model is the plan's (``PlacementOptions(model=...)``); documents that are not a plan are a prompt
        for no particular model.

        Example:
            >>> from litm.placement import place
            >>> b = PromptBuilder()
            >>> b.build(["Paris is in France."], "Where?").text.splitlines()[2]
            'Document [1](Title: ) Paris is in France.'
            >>> plan = place(["Paris is in France."], placement=PlacementOptions(model="local"))
            >>> b.build(plan, "Where?").text.splitlines()[2]
            '<document id="doc-1">'
        """
        if not isinstance(question, str):
            raise PromptError(f"the question must be a string, got {type(question).__name__}")
        if not question.strip():
            raise PromptError("the question is empty")
        plan = docs if isinstance(docs, PlacementPlan) else _place(docs, None, self._anchors)
        anchors = self.anchors_for(plan.model).options
        wording = self._wording
        if self._chat and wording.instruction is None and anchors.style != "liu":
            wording = wording.replace(instruction=wording.prompt_template.chat_instruction)
        if system is not None or instruction is not None:
            changes = {k: v for k, v in (("system", system), ("instruction", instruction)) if v is not None}
            wording = wording.replace(**changes)
        return make_prompt(
            plan, question, wording=wording, anchors=anchors, layout=self._layout, escaping=self._escaping,
            neutralizer=self._neutralizer_for(anchors),
        )

    # -- serialisation ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, object]:
        """A versioned, JSON-ready form (Haystack's ``{"type", "init_parameters"}`` shape); anchors picked by model
        are left out (a missing group takes its default)."""
        params: dict[str, object] = {
            group: value.to_dict() for group in _GROUPS if (value := getattr(self, f"_{group}")) is not None
        }
        return {"type": _TYPE, "version": BUILDER_FORMAT_VERSION, "init_parameters": params}

    @classmethod
    def from_dict(cls, data: object) -> PromptBuilder:
        """The builder :meth:`to_dict` described; unknown keys and newer versions are refused."""
        if not isinstance(data, Mapping) or data.get("type") != _TYPE:
            raise PromptOptionError(f"not a serialised PromptBuilder (expected type {_TYPE!r})")
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= BUILDER_FORMAT_VERSION:
            raise PromptOptionError(
                f"PromptBuilder format version {version!r} is not one this litm reads (1..{BUILDER_FORMAT_VERSION})"
            )
        params = data.get("init_parameters")
        if not isinstance(params, Mapping):
            raise PromptOptionError("a serialised PromptBuilder needs an 'init_parameters' object")
        unknown = sorted(set(params) - set(_GROUPS))
        if unknown:
            raise PromptOptionError(f"unknown PromptBuilder parameter(s) {', '.join(unknown)}")
        saved: Mapping[str, object] = params

        def part(group: str, kind: type[_G]) -> _G | None:
            return kind.from_dict(saved[group]) if saved.get(group) is not None else None

        return cls(
            wording=part("wording", Wording), anchors=part("anchors", AnchorOptions),
            layout=part("layout", Layout), escaping=part("escaping", Escaping),
        )  # fmt: skip


def build_prompt(
    docs: Sequence[object] | PlacementPlan,
    question: str,
    *,
    strategy: str | Strategy | None = None,
    placement: PlacementOptions | None = None,
    system: str | None = None,
    instruction: str | None = None,
    **options: object,
) -> Prompt:
    """Place (with ``strategy`` or ``placement``) and build in one call.

    ``placement`` (a :class:`~litm.placement.PlacementOptions`) is applied with :func:`litm.place` first;
    ``strategy`` is a shorthand that overrides its strategy. With neither, the documents keep their order
    (still read, checked and deduplicated as :class:`~litm.placement.PlacementOptions` says for
    ``strategy="none"``). ``options`` are the builder's: the option objects (``wording=``, ``anchors=``,
    ``layout=``, ``escaping=``) or, as a shorthand, any of their fields by name (``middle_marker=True``,
    ``lang="zh"``, ``style="bracket"``). Without anchors, the prompt gets those of ``placement.model``
    (:func:`~litm.prompt.anchors_for`; no model: Liu et al.'s plain format).

    Example:
        >>> build_prompt([{"id": "a", "text": "x"}, {"id": "b", "text": "y"}], "Why?").ids
        ['a', 'b']
        >>> build_prompt(["a", "b", "c", "d"], "Why?", strategy="pyramid", recap=False).ids
        ['doc-2', 'doc-4', 'doc-3', 'doc-1']
    """
    groups = {group: options.pop(group, None) for group in _GROUPS}
    wording, anchors, layout, escaping = _options(groups, options, caller="build_prompt")
    if isinstance(docs, PlacementPlan):
        if strategy is not None or placement is not None:
            raise PromptError("got a PlacementPlan and placement options: the plan is already placed")
        plan = docs
    else:
        given = None if strategy is None and placement is None else PlacementOptions.of(placement, strategy=strategy)
        plan = _place(docs, given, anchors)
    builder = PromptBuilder(wording=wording, anchors=anchors, layout=layout, escaping=escaping)
    return builder.build(plan, question, system=system, instruction=instruction)
