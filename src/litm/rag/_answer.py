"""What :meth:`litm.rag.Pipeline.ask` returns: the answer, where it came from, and what it took.

Two kinds of :class:`Reference`, never mixed up:

* ``citation``: a document the model cited as ``[id]`` in its answer, mapped back through the prompt's
  anchors (:meth:`litm.Prompt.citations`). Chat models asked to cite write these.
* ``attribution``: litm's own grounding (:mod:`litm.rag._attribution`): a placed document that contains the
  answer's text, or a sentence that holds most of its content words (``score`` says how much). A base model
  writes no citations, so this is how its answer is traced to a source; it says where the answer's support
  is, not what the model read.

Each reference carries the document's source, title and character offsets in that source (``start``,
``end``: the chunk is ``source_text[start:end]``), so a citation points back into the file.

:func:`read_reply` reads the answer out of a model's reply. A reply made of bracketed groups and nothing else
(``[notes.md#0]``: small chat models asked to cite did this for most questions) is not an answer: a chat model
is asked once more, in the same conversation, for the answer in words; if it still writes none, the answer is
empty and :attr:`Answer.note` says so, rather than a citation being printed as the answer.

Example:
    >>> from litm.placement import place
    >>> plan = place([{"id": "a", "text": "Paris is in France.", "source": "fr.md"}], "none")
    >>> ref = Reference.from_slot("citation", plan.slots[0])
    >>> ref.kind, ref.id, ref.source, ref.slot, ref.rank
    ('citation', 'a', 'fr.md', 1, 1)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from litm.budget import FitResult
from litm.compress import Compressed
from litm.models import Completion, Model
from litm.placement import Doc, PlacementPlan
from litm.placement._plan import SlotInfo
from litm.prompt import Prompt
from litm.rag._attribution import Grounding
from litm.retrieve import Hit
from litm.spend._money import format_usd

__all__ = ["Answer", "Prepared", "Reference", "ReferenceKind", "Reply", "bracketed_only", "read_reply"]

ReferenceKind = Literal["citation", "attribution"]


def _offset(doc: Doc, name: str) -> int | None:
    value = doc.metadata.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Reference:
    """A document the answer points to: cited by the model (``kind="citation"``) or found by litm to contain
    the answer (``kind="attribution"``; ``span`` is then the supporting span's offsets in the source file, or in
    the document when it carries no source offsets, and ``score`` the share of the answer's content words in it,
    1.0 for the answer verbatim)."""

    kind: ReferenceKind
    id: str
    slot: int
    rank: int
    source: str | None
    title: str | None
    start: int | None
    end: int | None
    span: tuple[int, int] | None = None
    doc: Doc | None = field(default=None, repr=False, compare=False)
    score: float | None = None

    @classmethod
    def from_slot(
        cls, kind: ReferenceKind, slot: SlotInfo, span: tuple[int, int] | None = None, score: float | None = None
    ) -> Reference:
        """The reference to the document in ``slot`` of a plan."""
        doc = slot.doc
        return cls(
            kind, doc.id, slot.slot, slot.rank, doc.source, doc.title, _offset(doc, "start"), _offset(doc, "end"),
            span, doc, score,
        )  # fmt: skip

    @classmethod
    def from_grounding(cls, grounding: Grounding, plan: PlacementPlan) -> Reference:
        """litm's attribution of the answer to one placed document."""
        slot = plan.slots[grounding.slot - 1]
        if grounding.source_start is not None and grounding.source_end is not None:
            span = (grounding.source_start, grounding.source_end)
        else:
            span = (grounding.start, grounding.end)
        return cls.from_slot("attribution", slot, span, grounding.score)

    def where(self) -> str:
        """``source [start:end]`` (or the id when the document has no source)."""
        at = f" [{self.start}:{self.end}]" if self.start is not None and self.end is not None else ""
        return f"{self.source or self.id}{at}"

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind, "id": self.id, "slot": self.slot, "rank": self.rank, "source": self.source,
            "title": self.title, "start": self.start, "end": self.end,
            "span": list(self.span) if self.span is not None else None, "score": self.score,
        }  # fmt: skip


@dataclass(frozen=True)
class Prepared:
    """A question made ready to send (:meth:`litm.rag.Pipeline.prepare`): the retrieved ``hits``, the gate's
    decision ``fit`` (the placed, counted prompt), the ``budget`` held and where it came from, and the
    timings so far (``load``, ``retrieve``, ``fit``)."""

    question: str
    hits: tuple[Hit, ...]
    fit: FitResult
    budget: int
    budget_source: str
    timings: Mapping[str, float]
    #: What ``Pipeline(compress=...)`` kept of each retrieved chunk before the gate (None: not compressed).
    compression: Compressed | None = None

    @property
    def prompt(self) -> Prompt:
        """The prompt that will be sent."""
        prompt: Prompt = self.fit.prompt
        return prompt

    @property
    def plan(self) -> PlacementPlan:
        """Where each kept document is placed."""
        return self.prompt.plan


@dataclass(frozen=True)
class Answer:
    """One answered question, with everything needed to check it.

    ``text`` is the model's answer (stripped); ``citations`` the documents it cited as ``[id]``,
    ``unknown_citations`` bracketed ids that match no placed document; ``attribution`` litm's grounding of
    the answer in the placed documents (see the module docstring). ``prepared`` is what was sent: the
    retrieved ``hits`` (best first), the gate's ``fit`` (``fit.tokens`` counted by the model's own
    tokenizer, ``fit.kept`` / ``fit.dropped``), the ``plan`` and the ``budget`` held. ``completion`` is the
    model's reply with its measured usage. ``cost_micros`` is what the call cost in micro-dollars by litm's
    price table, None when no price is known (``cost_note`` says why). ``timings`` holds each stage's
    wall-clock seconds (``load``, only when the model was loaded for this question, ``retrieve``, ``fit``,
    ``generate``, ``attribute``, and their ``total``).
    """

    question: str
    text: str
    citations: tuple[Reference, ...]
    attribution: tuple[Reference, ...]
    prepared: Prepared
    completion: Completion
    model: str
    retriever: str
    timings: Mapping[str, float]
    cost_micros: int | None = None
    cost_note: str = ""
    unknown_citations: tuple[str, ...] = ()
    #: Why :attr:`text` is not simply the reply: the model was asked again, or wrote no answer ("" otherwise).
    note: str = ""
    #: The replies before :attr:`completion` (a reply of citations alone, when the model was asked again).
    earlier: tuple[Completion, ...] = ()

    @property
    def hits(self) -> tuple[Hit, ...]:
        """The retrieved chunks, best first."""
        return self.prepared.hits

    @property
    def fit(self) -> FitResult:
        """The token gate's decision."""
        return self.prepared.fit

    @property
    def prompt(self) -> Prompt:
        """The prompt that was sent."""
        return self.prepared.prompt

    @property
    def plan(self) -> PlacementPlan:
        """Where each kept document was placed (rank, slot, slot weight, reason)."""
        return self.prepared.plan

    @property
    def strategy(self) -> str:
        return self.plan.strategy

    @property
    def budget(self) -> int:
        """The input-token budget held (the answer's reserve included)."""
        return self.prepared.budget

    @property
    def tokens(self) -> int:
        """The prompt's token count by the model's own tokenizer (what the budget held)."""
        return self.fit.tokens

    @property
    def cost_usd(self) -> str | None:
        """The cost as ``$D.CC``, None when unknown."""
        return None if self.cost_micros is None else format_usd(self.cost_micros)

    @property
    def references(self) -> tuple[Reference, ...]:
        """The model's citations when it wrote any, else litm's attribution."""
        return self.citations or self.attribution

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready summary: answer, references, plan, tokens, cost, timings (not the prompt text)."""
        fit = self.fit
        return {
            "question": self.question,
            "answer": self.text,
            "citations": [r.to_dict() for r in self.citations],
            "unknown_citations": list(self.unknown_citations),
            "attribution": [r.to_dict() for r in self.attribution],
            "model": self.model,
            "retriever": self.retriever,
            "strategy": self.strategy,
            "hits": [_hit(h) for h in self.hits],
            "plan": self.plan.to_dict(),
            "tokens": {
                "prompt": fit.tokens,
                "exact": fit.exact,
                "upper": fit.upper,
                "budget": self.budget,
                "budget_source": self.prepared.budget_source,
                "kept": len(fit.kept),
                "dropped": [d.id for d in fit.dropped],
                "input": self.completion.input_tokens,
                "cached": self.completion.cached_tokens,
                "output": self.completion.output_tokens,
            },
            "cost_micros": self.cost_micros,
            "cost_usd": self.cost_usd,
            "cost_note": self.cost_note,
            "sampled": self.completion.sampled,
            "note": self.note,
            "calls": 1 + len(self.earlier),
            "timings": dict(self.timings),
        }


def _hit(hit: Hit) -> dict[str, object]:
    return {
        "rank": hit.rank,
        "id": hit.chunk.id,
        "source": hit.chunk.source,
        "score": hit.score,
        "higher_is_better": hit.higher_is_better,
    }


# A bracketed group in the brackets citations are written in (ASCII, lenticular, full-width).
_GROUP = re.compile(r"[\[\u3010\uff3b][^\[\]\u3010\u3011\uff3b\uff3d\n]*[\]\u3011\uff3d]")


def bracketed_only(reply: str) -> bool:
    """Whether ``reply`` holds nothing but bracketed groups (and punctuation or spaces between them).

    Such a reply is not an answer, whether the groups cite documents (``[notes.md#0]``) or not.

    >>> bracketed_only("[notes.md#0]"), bracketed_only(" [a], [b]."), bracketed_only("Nine months [a].")
    (True, True, False)
    >>> bracketed_only("")
    False
    """
    if not _GROUP.search(reply):
        return False
    rest = _GROUP.sub("", reply)
    return all(ch.isspace() or unicodedata.category(ch)[0] in "PS" for ch in rest)


def _unwrapped(reply: str, prompt: Prompt) -> str:
    """The contents of ``reply``'s bracketed groups that cite no placed document (``[1991]`` -> ``1991``)."""
    groups = [m.group(0)[1:-1].strip() for m in _GROUP.finditer(reply)]
    return "; ".join(g for g in groups if g and not prompt.citations(f"[{g}]").cited)


@dataclass(frozen=True)
class Reply:
    """What :func:`read_reply` read: the answer ``text`` ("" when there is none), every reply the model gave
    (``completions``, the last one answered), the text to read citations from (``cited_text``: the answer, or
    every reply read when the model was asked again, since it cited in the first), and a ``note`` saying what
    was done ("" when the first reply was an answer)."""

    text: str
    completions: tuple[Completion, ...]
    note: str = ""
    cited_text: str = ""


def read_reply(
    model: Model,
    prompt: Prompt,
    completion: Completion,
    *,
    max_tokens: int,
    stop: Sequence[str] = (),
) -> Reply:
    """The answer in ``completion``, the reply of ``model`` to ``prompt``; asks a chat model again when needed.

    A base model's answer is the first non-empty line it wrote (the benchmark's rule), a chat model's its whole
    reply. A reply of bracketed groups only (see :func:`bracketed_only`) is not an answer: a chat model gets the
    template's ``reread`` follow-up after its own reply, once, when that fits its context window with
    ``max_tokens`` to answer. If no answer comes, the answer is what the groups hold that cites no document
    (``[1991]`` reads as ``1991``), or empty, and the note says so.
    """
    chat = model.supports_chat

    def answer_of(done: Completion) -> str:
        text = done.text.strip()
        return text if chat else text.split("\n", 1)[0].strip()

    text = answer_of(completion)
    if not bracketed_only(text):
        return Reply(text, (completion,), cited_text=text)
    first = text
    if chat:
        follow_up = [
            *prompt.to_openai(),
            {"role": "assistant", "content": completion.text.strip()},
            {"role": "user", "content": prompt.template.reread},
        ]
        if model.count_tokens(follow_up) + max_tokens <= model.context_window:
            again = model.complete(follow_up, max_tokens=max_tokens, stop=list(stop))
            text = answer_of(again)
            asked = f"the model replied {first!r} (brackets only, no answer) and was asked again"
            both = f"{first}\n{text}"
            if not bracketed_only(text):
                return Reply(text, (completion, again), asked, both)
            return _no_answer(text, prompt, (completion, again), f"{asked}; it replied {text!r}", both)
        return _no_answer(text, prompt, (completion,), f"the model replied {first!r}; asking again would not fit")
    return _no_answer(text, prompt, (completion,), f"the model replied {first!r}")


def _no_answer(
    text: str, prompt: Prompt, completions: tuple[Completion, ...], said: str, cited: str | None = None
) -> Reply:
    inner = _unwrapped(text, prompt)
    cited_text = text if cited is None else cited
    if inner:
        return Reply(inner, completions, f"{said}: its brackets held {inner!r}, taken as the answer", cited_text)
    return Reply("", completions, f"{said}: no answer text, only citations", cited_text)
