"""Fit retrieved documents into a token budget before anything is sent.

The gate counts the *whole rendered prompt* (anchors, separators, system text, question, chat-format
overhead) with the model's own tokenizer, drops the lowest-ranked documents first, re-applies the placement
to the survivors, and raises :class:`~litm.errors.ContextBudgetExceeded` only when even the prompt with no
documents does not fit. How many documents survive is found by binary search over the ranking, so a fit
costs about ``2 + log2(n)`` renders and counts, not one per eviction.

Example:
    >>> from litm.prompt import PromptBuilder
    >>> words = lambda text: len(text.split())
    >>> docs = [{"id": f"d{i}", "text": "lorem " * 30} for i in range(10)]
    >>> r = fit(docs, "Which one?", PromptBuilder(), words, max_input_tokens=200)
    >>> r.tokens <= 200, [d.id for d in r.dropped][:2]
    (True, ['d4', 'd5'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from litm.budget.counting import Counter, as_counter
from litm.errors import ContextBudgetExceeded, LitmError
from litm.placement.documents import Doc
from litm.placement.ranking import Dedup, RankBy, rank
from litm.util.sentences import split_sentences

__all__ = ["FitResult", "fit"]

@dataclass(frozen=True)
class FitResult:
    """What the gate decided: the prompt that fits, its token count, and what was left out.

    ``dropped`` lists the removed documents best-ranked first; ``truncated`` is the id of a document kept
    only in part (with ``truncate=True``); ``count_calls`` is how many times the tokenizer was asked.
    """

    prompt: Any
    tokens: int
    budget: int
    floor: int | None  # tokens with no documents; None when everything fit and it was not needed
    kept: list[Doc]
    dropped: list[Doc]
    truncated: str | None = None
    count_calls: int = 0
    dropped_items: list[Any] = field(default_factory=list)


def fit(
    docs: Sequence[Any],
    question: str,
    builder: Any,
    counter: Any,
    max_input_tokens: int,
    reserve_output_tokens: int = 0,
    *,
    format: str = "text",
    rank_by: RankBy = "input",
    higher_is_better: bool = True,
    dedup: Dedup | None = None,
    truncate: bool = False,
) -> FitResult:
    """Return the largest best-ranked prefix of ``docs`` whose full prompt fits the budget.

    ``builder`` renders documents and a question into a prompt (a :class:`litm.prompt.PromptBuilder`, or any
    object with ``build(docs, question)`` returning something with ``.text`` and ``.messages(format)``).
    ``counter`` is the model or tokenizer whose tokens are counted (or ``callable(text) -> int``). The budget
    is ``max_input_tokens - reserve_output_tokens``. With ``format="text"`` the prompt text is counted; with a
    chat format (``"openai"``, ``"anthropic"``, ...) its messages are, chat overhead included. With
    ``truncate=True`` the best dropped document is kept cut at a sentence boundary when part of it fits.
    """
    for name, value in (("max_input_tokens", max_input_tokens), ("reserve_output_tokens", reserve_output_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise LitmError(f"{name} must be a non-negative integer, got {value!r}")
    budget = max_input_tokens - reserve_output_tokens
    if budget <= 0:
        raise ContextBudgetExceeded(
            f"reserve_output_tokens={reserve_output_tokens} leaves no input budget of max_input_tokens="
            f"{max_input_tokens}",
            prompt_tokens=0, budget=budget, advice="lower reserve_output_tokens or raise max_input_tokens",
        )
    if not isinstance(question, str):
        raise LitmError(f"question must be str, got {type(question).__name__}")
    if not callable(getattr(builder, "build", None)):
        raise LitmError(f"builder must have a build(docs, question) method, got {type(builder).__name__}")
    count = as_counter(counter)
    ranking = rank(list(docs), rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup)
    ranked = [r.doc for r in ranking.ranked]
    items = [r.item for r in ranking.ranked]
    render = _renderer(builder, question, format, count)

    n = len(ranked)
    full_prompt, full = render(ranked)
    if full <= budget:
        return FitResult(full_prompt, full, budget, None, ranked, [], None, count.calls)
    empty_prompt, floor = render([])
    if floor > budget:
        raise ContextBudgetExceeded(
            f"the prompt needs {floor} tokens with no documents at all (system, instructions and question), "
            f"over the budget of {budget}",
            prompt_tokens=full, budget=budget, floor=floor,
            advice="raise max_input_tokens, lower reserve_output_tokens, or shorten the system text or question",
        )
    # Invariant: lo documents fit (verified by a count), hi documents do not.
    lo, hi, best = 0, n, (empty_prompt, floor)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        prompt, tokens = render(ranked[:mid])
        if tokens <= budget:
            lo, best = mid, (prompt, tokens)
        else:
            hi = mid
    kept = ranked[:lo]
    truncated: str | None = None
    if truncate and lo < n:
        cut = _truncate(ranked[lo], kept, render, budget)
        if cut is not None:
            doc, best = cut
            kept = [*kept, doc]
            truncated = doc.id
    first_dropped = lo + 1 if truncated else lo
    dropped, dropped_items = ranked[first_dropped:], items[first_dropped:]
    return FitResult(best[0], best[1], budget, floor, kept, dropped, truncated, count.calls, dropped_items)


def _renderer(
    builder: Any, question: str, fmt: str, count: Counter
) -> Callable[[list[Doc]], tuple[Any, int]]:
    def render(subset: list[Doc]) -> tuple[Any, int]:
        prompt = builder.build(subset, question)
        return prompt, count_rendered(prompt, fmt, count)

    return render


def count_rendered(prompt: Any, fmt: str, count: Counter) -> int:
    """Count a prompt as it will be sent in ``fmt``: a string (text, chatml, jinja) or chat messages."""
    if fmt == "text":
        return count.text(prompt.text)
    rendered = prompt.messages(fmt)
    if isinstance(rendered, str):
        return count.text(rendered)
    if isinstance(rendered, dict):  # Anthropic: the system prompt travels beside the messages
        system = rendered.get("system")
        msgs = list(rendered.get("messages", []))
        return count.messages(([{"role": "system", "content": system}] if system else []) + msgs)
    return count.messages(rendered)


def _truncate(
    doc: Doc, kept: list[Doc], render: Callable[[list[Doc]], tuple[Any, int]], budget: int
) -> tuple[Doc, tuple[Any, int]] | None:
    """The longest sentence prefix of ``doc`` that still fits next to ``kept``, or None."""
    sentences = split_sentences(doc.text)
    lo, hi, best = 0, len(sentences), None
    # Binary search on the number of whole sentences kept; hi (the whole document) is known not to fit.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        cut = Doc(
            text=" ".join(sentences[:mid]), id=doc.id, score=doc.score, title=doc.title, source=doc.source,
            metadata={**doc.metadata, "truncated": True},
        )
        result = render([*kept, cut])
        if result[1] <= budget:
            lo, best = mid, (cut, result)
        else:
            hi = mid
    return best
