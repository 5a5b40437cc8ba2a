"""Building prompts: placed documents plus a question, anchored, neutralised and laid out.

:class:`PromptBuilder` holds the choices (language and wording, anchors, layout, escaping) and
:meth:`PromptBuilder.build` applies them to documents and a question; :func:`build_prompt` does both
in one call. The user text is laid out as::

    instruction (+ middle-zone note)
    question                      <- only with question_position="before" or "both"
    <document ...> ... </document ...>   (one block per document, in plan order)
    recap of the ids              <- recap=True
    instruction again             <- repeat_instruction=True
    question                      <- question_position="after" (default) or "both"

System text, when given, travels separately (a system message, or the first paragraph of the
plain-text form). Documents, the question, and also system and instruction texts are neutralised,
so the rendered prompt contains exactly the structural tokens litm emitted.

Example:
    >>> p = build_prompt(["a", "b", "c", "d", "e", "f"], "Which?", strategy="edges", middle_marker=True)
    >>> p.ids
    ['doc-1', 'doc-3', 'doc-5', 'doc-6', 'doc-4', 'doc-2']
    >>> [b.slot for b in p.blocks if b.middle]
    [3, 4]
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from litm.errors import PromptError
from litm.placement import Strategy, place
from litm.placement.plan import PlacementPlan
from litm.placement.profile import PositionProfile
from litm.prompt.anchors import AnchorOptions, closing_line, header_line, middle_slots
from litm.prompt.chat_template import ChatTemplate
from litm.prompt.escape import Neutralizer
from litm.prompt.prompt import DocBlock, Prompt
from litm.prompt.templates import PromptTemplate

__all__ = ["QUESTION_POSITIONS", "PromptBuilder", "QuestionPosition", "build_prompt"]

QuestionPosition = Literal["after", "before", "both"]
QUESTION_POSITIONS: tuple[str, ...] = ("after", "before", "both")

_SEP = "\n\n"


class PromptBuilder:
    """Reusable prompt settings; :meth:`build` turns documents and a question into a :class:`Prompt`.

    Wording: ``lang`` (``"en"`` or ``"zh"``) picks a built-in :class:`PromptTemplate`; ``template``
    replaces it (its own ``lang`` wins). ``system`` and ``instruction`` override the system text
    (none by default) and the template's instruction (``""`` for none); ``answer_cue`` overrides the
    plain-text cue (``""`` for none, e.g. when the caller appends its own).

    Anchors: ``positions``, ``scores``, ``sources``, ``closing_ids``, ``middle_marker``, ``recap``
    (see :class:`~litm.prompt.anchors.AnchorOptions`). The middle zone is ``middle_width`` (central
    fraction, default 0.5) or, given ``middle_profile`` (a measured
    :class:`~litm.placement.profile.PositionProfile`), the slots whose weight is in its lowest
    ``middle_threshold`` fraction (see :func:`~litm.prompt.anchors.middle_slots`).

    Layout: ``question_position`` (``"after"``, ``"before"`` or ``"both"``), ``repeat_instruction``.

    Placement: ``strategy`` (a name or :class:`~litm.placement.Strategy`) is applied with
    :func:`~litm.placement.place` and ``placement`` (extra ``place`` keyword arguments, e.g.
    ``{"rank_by": "score"}``); without one, documents keep the order given.

    Escaping: ``special_tokens`` adds tokens to neutralise; ``chat_template`` (a
    :class:`~litm.prompt.chat_template.ChatTemplate` or template string) adds every token that
    template treats as special and enables format ``"jinja"``.

    Example:
        >>> b = PromptBuilder(lang="zh", scores=False)
        >>> p = b.build([{"id": "a", "text": "巴黎在法国。", "score": 0.9}], "巴黎在哪里")
        >>> p.text.splitlines()[2]
        '<文档 编号="a" 位置="1/1">'
    """

    def __init__(
        self,
        *,
        lang: str = "en",
        template: PromptTemplate | None = None,
        system: str | None = None,
        instruction: str | None = None,
        answer_cue: str | None = None,
        positions: bool = True,
        scores: bool = True,
        sources: bool = True,
        closing_ids: bool = True,
        middle_marker: bool = False,
        recap: bool = True,
        middle_width: float = 0.5,
        middle_profile: PositionProfile | None = None,
        middle_threshold: float = 0.5,
        question_position: str = "after",
        repeat_instruction: bool = False,
        strategy: str | Strategy | None = None,
        placement: Mapping[str, Any] | None = None,
        special_tokens: Iterable[str] = (),
        chat_template: ChatTemplate | str | None = None,
    ) -> None:
        if template is None:
            template = PromptTemplate.for_lang(lang)
        elif not isinstance(template, PromptTemplate):
            raise PromptError(f"template must be a PromptTemplate, got {type(template).__name__}")
        for name, value in (("system", system), ("instruction", instruction), ("answer_cue", answer_cue)):
            if value is not None and not isinstance(value, str):
                raise PromptError(f"{name} must be a string or None, got {type(value).__name__}")
        if question_position not in QUESTION_POSITIONS:
            raise PromptError(
                f"question_position must be one of {', '.join(QUESTION_POSITIONS)}, got {question_position!r}"
            )
        if not isinstance(repeat_instruction, bool):
            raise PromptError(f"repeat_instruction must be True or False, got {repeat_instruction!r}")
        if middle_profile is not None and not isinstance(middle_profile, PositionProfile):
            raise PromptError(f"middle_profile must be a PositionProfile, got {type(middle_profile).__name__}")
        middle_slots(3, width=middle_width, threshold=middle_threshold)  # validates both numbers
        if placement is not None and not isinstance(placement, Mapping):
            raise PromptError(f"placement must be a mapping of place() arguments, got {type(placement).__name__}")
        if placement and "strategy" in placement:
            raise PromptError("pass the strategy as strategy=, not inside placement=")
        if isinstance(chat_template, str):
            chat_template = ChatTemplate(chat_template)
        elif chat_template is not None and not isinstance(chat_template, ChatTemplate):
            raise PromptError(f"chat_template must be a ChatTemplate or a string, got {type(chat_template).__name__}")

        self.template = template
        self.system = system
        self.instruction = template.instruction if instruction is None else instruction
        self.answer_cue = template.answer_cue if answer_cue is None else answer_cue
        self.anchors = AnchorOptions(
            positions=positions,
            scores=scores,
            sources=sources,
            closing_ids=closing_ids,
            middle_marker=middle_marker,
            recap=recap,
        )
        self.middle_width = float(middle_width)
        self.middle_profile = middle_profile
        self.middle_threshold = float(middle_threshold)
        self.question_position = question_position
        self.repeat_instruction = repeat_instruction
        self.strategy = strategy
        self.placement = dict(placement or {})
        self.chat_template = chat_template
        tokens = list(special_tokens)
        if chat_template is not None:
            tokens.extend(chat_template.special_tokens())
        self.neutralizer = Neutralizer(tokens, tags=[template.tag])

    def __repr__(self) -> str:
        return (
            f"PromptBuilder(lang={self.template.lang!r}, strategy={self.strategy!r}, "
            f"question_position={self.question_position!r}, anchors={self.anchors!r})"
        )

    def build(
        self,
        docs: Sequence[Any] | PlacementPlan,
        question: str,
        *,
        system: str | None = None,
        instruction: str | None = None,
    ) -> Prompt:
        """Place (if a strategy is set), anchor and lay out ``docs`` around ``question``.

        ``docs`` is anything :func:`~litm.placement.place` accepts (strings, dicts, ``Doc``,
        LangChain / LlamaIndex / Haystack documents) or a :class:`~litm.placement.plan.PlacementPlan`, used
        as is. Ids must be unique (repeated ids raise :class:`~litm.errors.DuplicateIdError`;
        pass ``placement={"dedup": "id"}`` to merge them). ``system`` and ``instruction`` override
        the builder's for this prompt.
        """
        if not isinstance(question, str):
            raise PromptError(f"the question must be a string, got {type(question).__name__}")
        if not question.strip():
            raise PromptError("the question is empty")
        plan = self._plan(docs)
        return self._render(plan, question, system, instruction, self.neutralizer)

    # -- internals ---------------------------------------------------------------------------------

    def _plan(self, docs: Sequence[Any] | PlacementPlan) -> PlacementPlan:
        if isinstance(docs, PlacementPlan):
            if self.strategy is not None:
                raise PromptError("got a PlacementPlan and a strategy: the plan is already placed")
            return docs
        if isinstance(docs, (str, bytes)) or not isinstance(docs, Sequence):
            raise PromptError(f"documents must be a list or a PlacementPlan, got {type(docs).__name__}")
        if self.strategy is None:
            # Already placed by the caller: keep the order, but still read, check and dedup them.
            return place(docs, "none", min_docs=0, **self.placement)
        options = dict(self.placement)
        if self.middle_profile is not None and "profile" not in options:
            options["profile"] = self.middle_profile
        return place(docs, self.strategy, **options)

    def _render(
        self,
        plan: PlacementPlan,
        question: str,
        system: str | None,
        instruction: str | None,
        neutralizer: Neutralizer,
    ) -> Prompt:
        t, a, nz = self.template, self.anchors, neutralizer
        system = self.system if system is None else system
        instruction = self.instruction if instruction is None else instruction
        n = len(plan.slots)
        marked = (
            middle_slots(n, width=self.middle_width, profile=self.middle_profile, threshold=self.middle_threshold)
            if a.middle_marker
            else frozenset()
        )

        intro = nz.neutralize(instruction)
        if marked:
            names = {"tag": t.tag, "zone": t.zone_attr, "middle": t.middle}
            note = _fill(t.middle_note, nz, {k: nz.neutralize(v) for k, v in names.items()})
            # Chinese sentences end in a full-width stop and take no space before the next one.
            joiner = "" if intro.endswith(("。", "！", "？")) else " "  # noqa: RUF001
            intro = f"{intro}{joiner}{note}" if intro else note
        question_line = _fill(t.question, nz, {"question": nz.neutralize(question)})

        sections: list[str] = []
        if intro:
            sections.append(intro)
        if self.question_position in ("before", "both"):
            sections.append(question_line)
        offset = sum(len(s) + len(_SEP) for s in sections)
        blocks: list[DocBlock] = []
        anchors: list[str] = []
        for info in plan.slots:
            middle = info.slot in marked
            header = header_line(info.doc, slot=info.slot, n=n, middle=middle, options=a, template=t, neutralizer=nz)
            closing = closing_line(info.doc, options=a, template=t, neutralizer=nz)
            anchors.extend((header, closing))
            block = f"{header}\n{nz.neutralize(info.doc.text)}\n{closing}"
            blocks.append(DocBlock(info.doc.id, info.slot, info.doc, middle, offset, offset + len(block)))
            sections.append(block)
            offset += len(block) + len(_SEP)
        if a.recap and plan.slots:
            ids = " ".join(_fill(t.recap_id, nz, {"id": nz.neutralize(s.doc.id)}) for s in plan.slots)
            sections.append(_fill(t.recap, nz, {"ids": ids, "count": str(n)}))
        if self.repeat_instruction and instruction:
            sections.append(nz.neutralize(instruction))
        if self.question_position in ("after", "both"):
            sections.append(question_line)

        user = _SEP.join(sections)
        system_text = nz.neutralize(system) if system else None
        cue = nz.neutralize(self.answer_cue) if self.answer_cue else None
        _verify(user, system_text, cue, anchors, nz)

        def rebuild(chat_template: ChatTemplate) -> Prompt:
            wider = nz.extended(chat_template.special_tokens())
            rebuilt = self._render(plan, question, system, instruction, wider)
            return dataclasses.replace(rebuilt, chat_template=chat_template)

        return Prompt(
            system=system_text,
            user=user,
            answer_cue=cue,
            question=question,
            plan=plan,
            blocks=tuple(blocks),
            template=t,
            neutralizer=nz,
            chat_template=self.chat_template,
            _rebuild=rebuild,
        )


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


def build_prompt(
    docs: Sequence[Any] | PlacementPlan,
    question: str,
    *,
    system: str | None = None,
    instruction: str | None = None,
    **options: Any,
) -> Prompt:
    """Build a prompt in one call: ``PromptBuilder(**options).build(docs, question, ...)``.

    Example:
        >>> build_prompt([{"id": "a", "text": "x"}, {"id": "b", "text": "y"}], "Why?").ids
        ['a', 'b']
    """
    return PromptBuilder(**options).build(docs, question, system=system, instruction=instruction)
