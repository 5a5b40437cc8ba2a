"""The benchmark design: question folds, where each strategy puts the gold passage, and the prompts.

Accuracy is measured once per *final slot* (gold passage in slot ``s``, the distractors in BM25 order
around it). A strategy's accuracy at gold rank ``r`` is then read off the slot it sends rank ``r`` to:
:func:`gold_slot` asks :func:`litm.placement.place` itself, so the derivation uses exactly the orders
users get. ``random`` is a seeded shuffle per question; ``profile`` is driven by a profile measured on
the *other* fold of questions (cross-fitting: no question's own answers shape its placement).

Example:
    >>> gold_slot("none", 10, 3), gold_slot("edges", 10, 2), gold_slot("pyramid", 10, 1)
    (3, 10, 10)
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from litm.bench._data import Passage, QAItem
from litm.bench._rows import BenchRow
from litm.errors import InvalidOptionError
from litm.models import Completion, Model
from litm.models._local import LocalModel
from litm.placement import Doc, PlacementOptions, PositionProfile, Strategy, place
from litm.placement._registry import get_strategy
from litm.placement._strategies import RandomOrder
from litm.prompt import AnchorOptions, Layout, PromptBuilder, PromptTemplate, Wording, parse_quoted_answer

__all__ = [
    "ANCHOR_ELEMENT_ARMS",
    "ARMS",
    "FIXED_STRATEGIES",
    "GOLD_DESIGNS",
    "LIU_INSTRUCTION",
    "MULTIHOP_INSTRUCTION",
    "NQ_ARMS",
    "QUOTE_ARM",
    "QUOTE_TOKENS",
    "STRATEGIES",
    "ArmReply",
    "arm_input",
    "arm_reply",
    "arm_tokens_per_doc",
    "arrangement",
    "build_prompt",
    "closed_book_prompt",
    "complete_arm",
    "fold_of",
    "gold_slot",
    "gold_slots",
    "quote_markdown",
    "quote_prefilled",
    "quote_summary",
    "rank_score",
    "read_arm_reply",
    "seed_of",
    "strategy_for",
]

#: Strategies benchmarked, in report order; ``profile`` needs a measured profile, ``random`` a seed.
STRATEGIES: tuple[str, ...] = ("none", "edges", "pyramid", "langchain", "profile", "random")
FIXED_STRATEGIES: tuple[str, ...] = ("edges", "pyramid", "langchain")
#: The anchor-element arms: ``default`` with exactly one element changed, and the bare minimum. Four remove
#: an element the default shows: the ``position="3/10"`` attribute, the ``score`` attribute, the recap line of
#: ids, the id in the closing tag. The default shows no middle-zone marker, so ``default+middle`` *adds* it (the
#: ``zone="middle"`` attribute and the note after the instruction). ``minimal``: the id and the title only (no
#: position, score, closing id or recap; the title is the document's own text, which ``plain`` shows too),
#: escaped like every arm.
ANCHOR_ELEMENT_ARMS: tuple[str, ...] = (
    "default-position",
    "default-score",
    "default-recap",
    "default-closing",
    "default+middle",
    "minimal",
)
#: The quote-first arm: ``plain`` (Liu's format and instruction) plus the request to quote the supporting
#: sentence first (:attr:`litm.prompt.Wording.quote_first`); scored by the answer after ``Answer:``.
QUOTE_ARM = "quote-first"
#: Tokens a quote-first reply may spend on its quote, on top of the run's ``max_tokens`` for the answer.
QUOTE_TOKENS = 64
#: Prompt arms of the anchor ablation. ``plain``: Liu et al.'s format; ``anchored``: litm's anchors as the
#: committed runs tested them (middle marker on, recap off, raw scores); ``default``: the full anchors litm
#: shipped as ``AnchorOptions()`` before issue 41 (xml, position, relevance score, closing id, recap line, no
#: middle marker); ``minimal`` is what ``AnchorOptions()`` ships now (the id and title); ``bracket``: the field
#: report's style, ``[DOC_ID: x | REL_SCORE: s]`` ... ``[/DOC_ID: x]`` with the middle-zone marker;
#: ``-both``: the question before and after the documents; :data:`ANCHOR_ELEMENT_ARMS`: one anchor element of
#: ``default`` at a time; :data:`QUOTE_ARM`. Every arm keeps the same instruction (quote-first adds its request).
ARMS: tuple[str, ...] = (
    "plain", "plain-both", "anchored", "anchored-both", "default", "bracket", *ANCHOR_ELEMENT_ARMS, QUOTE_ARM,
)  # fmt: skip
#: The NQ ablation arms of the committed Gemma runs (the default of ``BenchConfig.ablation_arms``).
NQ_ARMS: tuple[str, ...] = ("plain-both", "anchored", "anchored-both")
#: Where the gold documents of a multi-gold question go (see :func:`gold_slots`).
GOLD_DESIGNS: tuple[str, ...] = ("early", "middle", "split", "late")
#: The multi-hop instruction: Liu's, plus a request for a short answer, so exact match and F1 can score it.
MULTIHOP_INSTRUCTION = (
    "Write a short answer for the given question using only the provided search results (some of which might "
    "be irrelevant; the answer may need more than one of them). Answer with a few words only, no explanation."
)

LIU_INSTRUCTION = PromptTemplate.for_lang("en").liu_instruction
_CLOSED_BOOK_INSTRUCTION = "Write a high-quality answer for the given question."


def seed_of(qid: object) -> int:
    """The seed of a question's ``random`` placement: its id when numeric (NQ row indices), else a stable CRC-32.

    >>> seed_of(17), seed_of("17"), seed_of("5a8b57f25542995d1e6f1371")
    (17, 17, 3974347783)
    """
    text = str(qid)
    return int(text) if text.isdigit() else zlib.crc32(text.encode("utf-8"))


def fold_of(index: int) -> int:
    """The cross-fitting fold (0 or 1) of the ``index``-th question: alternating, so any prefix is balanced."""
    return index % 2


def strategy_for(name: str, *, seed: int = 0, profile: PositionProfile | None = None) -> Strategy:
    """The :class:`~litm.placement.Strategy` for a benchmark strategy name (``random`` seeded per question)."""
    if name == "random":
        return RandomOrder(seed)
    if name == "profile" and profile is None:
        raise InvalidOptionError("the profile strategy needs a measured profile")
    return get_strategy(name, profile=profile)


def arrangement(name: str, k: int, *, seed: int = 0, profile: PositionProfile | None = None) -> list[int]:
    """Rank (1-based) in each final slot when ``name`` places ``k`` ranked documents, via :func:`place`.

    >>> arrangement("edges", 6)
    [1, 3, 5, 6, 4, 2]
    """
    # Distinct string stand-ins (place() reads strings as documents); min_docs=0 so tiny k is placed too.
    items = [f"rank-{r}" for r in range(1, k + 1)]
    options = PlacementOptions(strategy_for(name, seed=seed, profile=profile), profile=profile, min_docs=0)
    plan = place(items, placement=options)
    return [int(str(x).removeprefix("rank-")) for x in plan.items]


def gold_slot(name: str, k: int, gold_rank: int, *, seed: int = 0, profile: PositionProfile | None = None) -> int:
    """The final slot (1-based) where strategy ``name`` puts the document of retrieval rank ``gold_rank``."""
    return arrangement(name, k, seed=seed, profile=profile).index(gold_rank) + 1


def rank_score(rank: int) -> float:
    """The retriever score the anchored arm shows for a rank: 1.0 for rank 1, 0.05 less per rank (synthetic)."""
    return round(max(1.0 - 0.05 * (rank - 1), 0.05), 2)


# Liu et al.'s format through litm's own renderer: "Document [i](Title: t) text" lines, their instruction,
# the question after (and, for "-both", before) the documents, no recap. The committed benchmark runs were
# made with exactly these bytes (tests/test_bench_design.py checks them against the recorded prompt hashes).
# Every arm spells out each anchor flag, so that a change of AnchorOptions' defaults cannot change the bytes
# of an arm whose rows are committed.
_FULL = AnchorOptions(positions=True, scores=True, sources=True, closing_ids=True, middle_marker=False, recap=True)
_PLAIN = _FULL.replace(style="liu", recap=False)
# litm's own anchors (ids, scores, position, closing tags, middle marker); Liu's instruction so that only
# the formatting differs from the plain arm. No recap line: it invites "[id]" answers. The synthetic rank
# scores are shown as given ("raw"), as in the committed runs.
_ANCHORED = _FULL.replace(middle_marker=True, recap=False, score_as="raw")
# The anchors litm shipped as AnchorOptions() until issue 41's ablation: xml, position, score, title, closing
# id, recap line.
_DEFAULT = _FULL
_ANCHORS: dict[str, AnchorOptions] = {
    "plain": _PLAIN,
    "anchored": _ANCHORED,
    "default": _DEFAULT,
    "bracket": _FULL.replace(style="bracket", middle_marker=True),
    "default-position": _DEFAULT.replace(positions=False),
    "default-score": _DEFAULT.replace(scores=False),
    "default-recap": _DEFAULT.replace(recap=False),
    "default-closing": _DEFAULT.replace(closing_ids=False),
    "default+middle": _DEFAULT.replace(middle_marker=True),
    "minimal": _DEFAULT.replace(positions=False, scores=False, closing_ids=False, recap=False),
    QUOTE_ARM: _PLAIN,
}


@lru_cache(maxsize=32)
def _builder(style: str, both: bool, instruction: str) -> PromptBuilder:
    return PromptBuilder(
        wording=Wording(instruction=instruction, quote_first=style == QUOTE_ARM),
        anchors=_ANCHORS[style],
        layout=Layout(question_position="both" if both else "after"),
    )


def _liu(docs: Sequence[Passage], question: str, *, both: bool, instruction: str, style: str = "plain") -> str:
    payload = [Doc(text=d.text, id=f"doc-{i}", title=d.title) for i, d in enumerate(docs, start=1)]
    return _builder(style, both, instruction).build(payload, question).text


def _anchored(docs: Sequence[Passage], ranks: Sequence[int], question: str, *, style: str, both: bool,
              instruction: str) -> str:  # fmt: skip
    payload: list[dict[str, object]] = [
        {"id": f"doc-{r}", "title": d.title, "text": d.text, "score": rank_score(r)}
        for d, r in zip(docs, ranks, strict=True)
    ]
    return _builder(style, both, instruction).build(payload, question).text


def build_prompt(
    docs: Sequence[Passage],
    ranks: Sequence[int],
    question: str,
    arm: str = "plain",
    *,
    instruction: str = LIU_INSTRUCTION,
) -> str:
    """The completion prompt for documents in final order (``ranks``: each one's retrieval rank).

    ``plain`` is Liu et al.'s format ("Document [i](Title: ...) text", question after); the other arms use
    :class:`~litm.prompt.PromptBuilder`'s anchors (see :data:`ARMS`; their ids and scores come from the
    retrieval rank); ``-both`` also puts the question before the documents.

    >>> d = [Passage(0, "T", "Paris is in France.")]
    >>> build_prompt(d, [1], "Where is Paris?").splitlines()[2]
    'Document [1](Title: T) Paris is in France.'
    >>> build_prompt(d, [1], "Where is Paris?", "bracket").splitlines()[2]
    '[DOC_ID: doc-1 | REL_SCORE: 1 | POSITION: 1/1 | TITLE: T]'
    """
    if arm not in ARMS:
        raise InvalidOptionError(f"unknown prompt arm {arm!r}; choose from {', '.join(ARMS)}")
    both = arm.endswith("-both")
    style = arm.removesuffix("-both")
    if style in ("plain", QUOTE_ARM):
        return _liu(docs, question, both=both, instruction=instruction, style=style)
    return _anchored(docs, ranks, question, style=style, both=both, instruction=instruction)


class ArmReply(NamedTuple):
    """How an arm's prompt is answered: the reply's token cap, its stop sequences, and whether the likelihood
    metric applies (it scores an accepted answer right after the prompt, where a quote-first reply has its quote)."""

    max_tokens: int
    stop: tuple[str, ...]
    likelihood: bool


def arm_reply(arm: str, max_tokens: int) -> ArmReply:
    """The settings of a one-call reply of ``arm`` in a run answering in ``max_tokens``: every arm stops at the
    end of its first line, except quote-first sent without a prefill (to a chat API, see :func:`complete_arm`),
    whose answer follows the quote on the next line (it stops at a blank line or a new ``Question:`` /
    ``Quote:``, and gets :data:`QUOTE_TOKENS` more for the quote).

    >>> arm_reply("default", 16)
    ArmReply(max_tokens=16, stop=('\\n',), likelihood=True)
    >>> arm_reply("quote-first", 16)
    ArmReply(max_tokens=80, stop=('\\n\\n', '\\nQuestion:', '\\nQuote:'), likelihood=False)
    """
    if arm == QUOTE_ARM:
        return ArmReply(max_tokens + QUOTE_TOKENS, ("\n\n", "\nQuestion:", "\nQuote:"), False)
    return ArmReply(max_tokens, ("\n",), True)


def quote_prefilled(model: Model, *, chat: bool) -> bool:
    """Whether a quote-first reply of ``model`` starts inside the quote (the prompt ended with ``Quote:``): in
    completion format always; in chat format when litm renders the model's chat template itself (a local
    model, see :func:`arm_input`). A remote chat API gets the user turn alone.

    >>> from litm.models import load_model
    >>> api = load_model("openai:gpt-4o-mini")
    >>> quote_prefilled(api, chat=True), quote_prefilled(api, chat=False)
    (False, True)
    """
    return not chat or isinstance(model, LocalModel)


def arm_input(arm: str, prompt: str, model: Model, *, chat: bool) -> str | list[dict[str, str]]:
    """What ``model`` is sent for an arm's ``prompt``: the text itself (completion format) or one user turn
    (chat format). A quote-first prompt in chat format to a local model is sent as its chat template renders
    that turn, followed by the ``Quote:`` prefill, so its reply starts inside the quote as in completion
    format (small chat models asked in the turn alone answered in one sentence and quoted nothing).

    >>> from litm.models import load_model
    >>> arm_input("quote-first", "Question: why?\\nQuote:", load_model("openai:gpt-4o-mini"), chat=True)
    [{'role': 'user', 'content': 'Question: why?\\nQuote:'}]
    """
    if not chat:
        return prompt
    turn = [{"role": "user", "content": prompt}]
    if arm != QUOTE_ARM or not isinstance(model, LocalModel):
        return turn
    text = model.render_messages(turn)
    # complete() adds the BOS token itself where the model has one; the template wrote it as text.
    bos = model.template.bos_token if model.template is not None else ""
    if bos and text.startswith(bos):
        text = text[len(bos) :]
    return text + PromptTemplate.for_lang("en").quote_cue


def complete_arm(
    model: Model, arm: str, prompt: str, *, chat: bool, max_tokens: int
) -> tuple[Completion, str | list[dict[str, str]] | None]:
    """Answer an arm's ``prompt`` greedily; returns the completion and the prompt an accepted answer would follow
    directly (what the likelihood metric scores after; None when there is none).

    Every arm but quote-first: one call, stopped at the end of the first line. Quote-first, where the reply
    starts inside the quote (:func:`quote_prefilled`): the quote is generated to the end of its line (at most
    :data:`QUOTE_TOKENS` tokens); unless it already holds ``Answer:``, the prompt, the quote and ``\\nAnswer:``
    are continued for the answer's line (a second call, which a local model answers from its KV cache: small
    models ended their turn after the quote), and the completion's text is the quote, ``\\nAnswer:`` and the
    answer. Quote-first to a remote chat API: one call of ``max_tokens`` plus :data:`QUOTE_TOKENS` tokens,
    stopped at a blank line (:func:`arm_reply`), and no likelihood.

    >>> from litm.models import Completion, Model
    >>> class Quoting(Model):  # a base model that quotes, then answers
    ...     name, supports_chat, context_window, tokenizer = "quoting", False, 4096, None
    ...     def _generate(self, request):
    ...         said = " Paris is in France." if request.prompt.endswith("Quote:") else " France"
    ...         return Completion(said, 1, 1, 0.0, "stop")
    >>> done, before = complete_arm(Quoting(), "quote-first", "Where?\\nQuote:", chat=False, max_tokens=8)
    >>> done.text, before
    (' Paris is in France.\\nAnswer: France', 'Where?\\nQuote: Paris is in France.\\nAnswer:')
    """
    sent = arm_input(arm, prompt, model, chat=chat)
    if arm != QUOTE_ARM or not quote_prefilled(model, chat=chat):
        reply = arm_reply(arm, max_tokens)
        done = model.complete(sent, max_tokens=reply.max_tokens, stop=list(reply.stop), temperature=0.0, seed=0)
        return done, sent if reply.likelihood else None
    assert isinstance(sent, str)  # a prefilled prompt is text
    quote = model.complete(sent, max_tokens=QUOTE_TOKENS, stop=["\n"], temperature=0.0, seed=0)
    marker = PromptTemplate.for_lang("en").answer_marker
    if marker.casefold() in quote.text.casefold():
        return quote, None
    follow = f"{sent}{quote.text.rstrip()}\n{marker}"
    answer = model.complete(follow, max_tokens=max_tokens, stop=["\n"], temperature=0.0, seed=0)
    both = dataclasses.replace(
        answer,
        text=f"{quote.text.rstrip()}\n{marker}{answer.text}",
        input_tokens=quote.input_tokens + answer.input_tokens,
        cached_tokens=quote.cached_tokens + answer.cached_tokens,
        output_tokens=quote.output_tokens + answer.output_tokens,
        latency_s=quote.latency_s + answer.latency_s,
    )
    return both, follow


def read_arm_reply(arm: str, output: str, item: QAItem, *, prefilled: bool) -> tuple[str, dict[str, object]]:
    """The text an arm's reply is scored by (its first line is), and the row fields the arm adds.

    Every arm but quote-first: the output as it is, no fields. Quote-first: the answer after ``Answer:``
    (:func:`litm.prompt.parse_quoted_answer`; ``prefilled``: the reply continues the ``Quote:`` cue, see
    :func:`quote_prefilled`), so the quote is never scored as the answer; the fields say whether the reply
    reached the marker (``answered``), what it quoted, whether the quote is in one of the question's passages
    (``quote_found``, ``quote_score``) and whether that passage is a gold one (``quote_gold``).

    >>> item = QAItem("q", "Where is Paris?", ("France",), Passage(0, "Paris", "Paris is in France."), ())
    >>> read_arm_reply("quote-first", " Paris is in France.\\nAnswer: France", item, prefilled=True)[0]
    'France'
    >>> read_arm_reply("plain", "France", item, prefilled=True)
    ('France', {})
    """
    if arm != QUOTE_ARM:
        return output, {}
    docs = [{"id": f"gold-{i}", "text": p.text} for i, p in enumerate(item.golds)]
    docs += [{"id": f"other-{i}", "text": p.text} for i, p in enumerate(item.distractors)]
    q = parse_quoted_answer(output, docs, prefilled=prefilled)
    fields = {
        "answered": q.marker_found,
        "quote": q.quote,
        "quote_found": q.quote_found,
        "quote_score": q.score,
        "quote_gold": q.quote_found and str(q.doc_id).startswith("gold-"),
    }
    return q.answer, fields


def quote_summary(rows: Sequence[BenchRow]) -> dict[str, dict[str, dict[str, object]]]:
    """How the quote-first replies went, per ``k`` and gold slot (or gold-set design): replies, and the share
    that reached ``Answer:``, whose quote is in one of the question's passages, in a gold one, and that were right
    (first-line match). Empty without quote-first rows. The arm against plain is in the ablation tables.

    >>> rows = [{"phase": "ablation", "arm": "quote-first", "k": 4, "slot": 2, "answered": True,
    ...          "quote_found": q < 2, "quote_gold": q < 1, "hit": q < 1} for q in range(4)]
    >>> quote_summary(rows)["4"]["slot 2"]
    {'n': 4, 'answered': 1.0, 'quote_found': 0.5, 'quote_gold': 0.25, 'hit': 0.25}
    """
    groups: dict[str, dict[str, list[BenchRow]]] = {}
    for r in rows:
        if r.get("phase") == "ablation" and r.get("arm") == QUOTE_ARM:
            where = f"slot {r['slot']}" if r.get("slot") is not None else f"design {r.get('design')}"
            groups.setdefault(str(r.get("k")), {}).setdefault(where, []).append(r)
    fields = ("answered", "quote_found", "quote_gold", "hit")
    return {
        k: {
            where: {"n": len(got), **{f: round(sum(bool(r.get(f)) for r in got) / len(got), 4) for f in fields}}
            for where, got in sorted(by.items(), key=lambda x: (len(x[0]), x[0]))
        }
        for k, by in groups.items()
    }


def quote_markdown(summary: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Markdown lines for :func:`quote_summary` (none when it is empty)."""
    lines: list[str] = []
    for k, by in summary.items():
        lines += [f"## Quote-first replies, k={k}", ""]
        lines += ["| where | replies | reached Answer: | quote in a passage | quote from a gold passage | right |"]
        lines += ["| --- | --- | --- | --- | --- | --- |"]
        for where, c in by.items():
            shares = " | ".join(f"{c[f]:.2f}" for f in ("answered", "quote_found", "quote_gold", "hit"))
            lines.append(f"| {where} | {c['n']} | {shares} |")
        lines.append("")
    return lines


def arm_tokens_per_doc(
    docs: Sequence[Passage],
    question: str,
    count: Callable[[str], int],
    arms: Sequence[str] = ARMS,
    *,
    instruction: str = LIU_INSTRUCTION,
) -> dict[str, float]:
    """Tokens per document each arm's prompt spends beyond ``plain``'s, for ``docs`` in this order (rank =
    slot), ``question`` and ``instruction``, counted by ``count`` (a tokenizer's ``count``). The cost of one
    anchor element is ``default``'s value minus that of the arm without it (``default+middle``: the arm's minus
    ``default``'s). ``scripts/anchor_tokens.py`` prints it for the committed runs with Gemma's and Qwen's
    tokenizers.

    >>> words = lambda text: len(text.split())
    >>> docs = [Passage(i, f"T{i}", "Some text.") for i in range(4)]
    >>> cost = arm_tokens_per_doc(docs, "Why?", words, ["plain", "default", "default-recap"])
    >>> cost["plain"], cost["default"] - cost["default-recap"]
    (0.0, 2.0)
    """
    ranks = list(range(1, len(docs) + 1))
    if not docs:
        raise InvalidOptionError("measuring anchor tokens needs at least one document")
    base = count(build_prompt(docs, ranks, question, instruction=instruction))
    return {
        arm: (count(build_prompt(docs, ranks, question, arm, instruction=instruction)) - base) / len(docs)
        for arm in arms
    }


def gold_slots(design: str, k: int, golds: int) -> list[int]:
    """The final slots of ``golds`` gold documents among ``k`` under a design: ``early`` (the first slots),
    ``middle`` (the central ones), ``split`` (spread from the first slot to the last) or ``late`` (the last).

    >>> [gold_slots(d, 10, 2) for d in GOLD_DESIGNS]
    [[1, 2], [5, 6], [1, 10], [9, 10]]
    >>> gold_slots("split", 10, 4), gold_slots("middle", 10, 4)
    ([1, 4, 7, 10], [4, 5, 6, 7])
    """
    if not 1 <= golds < k:
        raise InvalidOptionError(f"a gold-set design needs 1 <= golds < k, got {golds} golds for k = {k}")
    if design == "early":
        return list(range(1, golds + 1))
    if design == "late":
        return list(range(k - golds + 1, k + 1))
    if design == "middle":
        start = (k - golds) // 2 + 1
        return list(range(start, start + golds))
    if design == "split":
        if golds == 1:
            return [1]
        return sorted({round(1 + i * (k - 1) / (golds - 1)) for i in range(golds)})
    raise InvalidOptionError(f"unknown gold-set design {design!r}; choose from {', '.join(GOLD_DESIGNS)}")


def closed_book_prompt(question: str) -> str:
    """Liu et al.'s closed-book prompt: the question and no documents."""
    return f"{_CLOSED_BOOK_INSTRUCTION}\n\nQuestion: {question}\nAnswer:"
