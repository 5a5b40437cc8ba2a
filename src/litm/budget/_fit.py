"""Fit retrieved documents into a token budget before anything is sent.

The gate counts the *whole rendered prompt* (anchors, separators, system text, question, chat-format
overhead) with the model's tokenizer, drops the lowest-ranked documents first, places the survivors, and
raises :class:`~litm.errors.ContextBudgetExceeded` only when even the prompt with no documents does not fit.
When the tokenizer is not exact the count carries a safety margin (:mod:`litm.budget._margin`) and the
bound ``upper = ceil(tokens x (1 + margin))`` is what must fit. How many documents survive is found by
binary search over the ranking, so a fit costs about ``2 + log2(n)`` renders and counts.

Ranking and placement are configured here, in one place: a :class:`~litm.placement.PlacementOptions`
(``placement=``), with ``strategy=`` and ``rank_by=`` as shorthands. Ranking decides what the budget drops (the
lowest-ranked documents first), placement where the survivors go; both come from the one value, so the gate
cannot drop the best document while the prompt ranks by score.

Example:
    >>> from litm.prompt import PromptBuilder
    >>> docs = [{"id": f"d{i}", "text": "lorem ipsum " * 30, "score": i / 10} for i in range(10)]
    >>> r = fit(docs, "Which one?", PromptBuilder(), "openai:gpt-4", max_input_tokens=250, rank_by="score")
    >>> r.upper <= 250, r.exact, [d.id for d in r.kept]
    (True, True, ['d9', 'd8', 'd7'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from litm.budget._counting import Counter, as_counter
from litm.budget._margin import describe_count, margin_of, upper_of
from litm.compress import Compressed, Scorer, compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import get_scorer
from litm.errors import CompressionError, ContextBudgetExceeded, InvalidOptionError, PromptError, UnsupportedTypeError
from litm.models.tokenizers import TokenCount
from litm.placement import Doc, PlacementOptions, Strategy, place
from litm.placement._options import RankByOption
from litm.placement._place import rank
from litm.placement._ranking import Dropped
from litm.util._sentences import split_sentences

__all__ = ["FitResult", "count_rendered", "fit"]

Render = Callable[[list[Doc]], tuple[Any, TokenCount]]


@dataclass(frozen=True)
class FitResult:
    """What the gate decided: the prompt that fits, its token count, and what was left out.

    ``tokens`` is the count of the prompt as it will be sent; ``exact`` says whether that count equals the
    model's own, ``margin`` is the safety margin applied when it does not (0.0 when exact) and ``upper``
    the bound ``ceil(tokens x (1 + margin))`` that was held to ``budget``. ``floor`` is the count with no
    documents (None when everything fit and it was not needed). ``dropped`` lists the documents the budget
    removed, best-ranked first (``dropped_items`` the caller's own objects); ``excluded`` what ranking removed
    before the budget (duplicates, beyond ``top_k``); ``truncated`` the id of a document kept only in part
    (``truncate=True``); ``count_calls`` how many times the tokenizer was asked; ``compression`` what
    ``compress=`` cut from each document (None when nothing was compressed).
    """

    prompt: Any
    tokens: int
    budget: int
    floor: int | None
    kept: list[Doc]
    dropped: list[Doc]
    truncated: str | None = None
    count_calls: int = 0
    dropped_items: list[Any] = field(default_factory=list)
    exact: bool = True
    margin: float = 0.0
    upper: int = 0
    excluded: tuple[Dropped, ...] = ()
    compression: Compressed | None = None


def fit(
    docs: Sequence[object],
    question: str,
    builder: object,
    counter: object,
    max_input_tokens: int,
    reserve_output_tokens: int = 0,
    *,
    format: str = "text",
    strategy: str | Strategy | None = None,
    rank_by: RankByOption | None = None,
    placement: PlacementOptions | None = None,
    truncate: bool = False,
    compress: str | Scorer | None = None,
) -> FitResult:
    """Return the largest best-ranked prefix of ``docs`` whose full prompt fits the budget, placed.

    ``builder`` renders a placed :class:`~litm.placement.PlacementPlan` and a question into a prompt (a
    :class:`litm.prompt.PromptBuilder`, or any object with ``build(plan, question)`` returning something with
    ``.text`` and ``.messages(format)``). ``counter`` is what counts: a litm tokenizer or model, a model spec
    (``"openai:gpt-4"``, ``"local"``), or ``callable(text) -> int`` (counted as approximate). The budget is
    ``max_input_tokens - reserve_output_tokens``. With ``format="text"`` the prompt text is counted; with
    ``"openai"`` or ``"anthropic"`` the request those messages make, chat overhead included; ``"chatml"``
    and ``"jinja"`` count the rendered string.

    Ranking and placement: ``placement`` (a :class:`~litm.placement.PlacementOptions`, default its defaults:
    ``auto``, the given order), with ``strategy`` and ``rank_by`` as shorthands that override its fields, as in
    :func:`~litm.placement.place`. With ``truncate=True`` the best dropped document is kept cut at a sentence
    boundary when part of it fits.

    ``compress`` (a scorer name, ``"embed"``, ``"lm"`` or ``"retriever"``, or a :class:`~litm.compress.Scorer`)
    puts question-aware compression before dropping: when the documents do not fit, their sentences are
    chosen for the question (:func:`litm.compress.compress`) until the whole prompt fits, and only when even
    that cannot fit are documents dropped by rank. ``FitResult.compression`` says what was cut and why.
    """
    budget = _budget(max_input_tokens, reserve_output_tokens)
    if not isinstance(question, str):
        raise PromptError(f"question must be str, got {type(question).__name__}")
    build = getattr(builder, "build", None)
    if not callable(build):
        raise UnsupportedTypeError(f"builder must have a build(plan, question) method, got {type(builder).__name__}")
    options = PlacementOptions.of(placement, strategy=strategy, rank_by=rank_by)
    count = as_counter(counter)
    ranking = rank(list(docs), placement=options)
    ranked = [r.doc for r in ranking.ranked]
    items = [r.item for r in ranking.ranked]
    render = _renderer(build, question, format, count, options)

    def result(
        prompt: Any, counted: TokenCount, kept: list[Doc], first_dropped: int, floor: int | None,
        truncated: str | None = None,
    ) -> FitResult:
        return FitResult(
            prompt, counted.tokens, budget, floor, kept=kept, dropped=ranked[first_dropped:], truncated=truncated,
            count_calls=count.calls, dropped_items=items[first_dropped:], exact=counted.exact,
            margin=margin_of(counted), upper=upper_of(counted), excluded=ranking.dropped,
        )  # fmt: skip

    n = len(ranked)
    full_prompt, full = render(ranked)
    if upper_of(full) <= budget:
        return result(full_prompt, full, ranked, n, floor=None)
    empty_prompt, floor = render([])
    if upper_of(floor) > budget:
        raise ContextBudgetExceeded(
            f"the prompt needs {describe_count(floor)} with no documents at all (system, instructions and "
            f"question), over the budget of {budget}",
            prompt_tokens=full.tokens, budget=budget, floor=floor.tokens, margin=margin_of(full),
            upper=upper_of(full),
            advice="raise max_input_tokens, lower reserve_output_tokens, or shorten the system text or question",
        )  # fmt: skip
    if compress is not None and n:
        squeezed = _compress_to_fit(ranked, question, compress, count, render, budget, floor)
        if squeezed is not None:
            kept_docs, (prompt, counted), done = squeezed
            kept_ids = {d.id for d in kept_docs}
            lost = [i for i, d in enumerate(ranked) if d.id not in kept_ids]
            return FitResult(
                prompt, counted.tokens, budget, floor.tokens, kept=kept_docs, dropped=[ranked[i] for i in lost],
                count_calls=count.calls, dropped_items=[items[i] for i in lost], exact=counted.exact,
                margin=margin_of(counted), upper=upper_of(counted), excluded=ranking.dropped, compression=done,
            )  # fmt: skip
    # Invariant: lo documents fit (verified by a count), hi documents do not.
    lo, hi, best = 0, n, (empty_prompt, floor)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        prompt, counted = render(ranked[:mid])
        if upper_of(counted) <= budget:
            lo, best = mid, (prompt, counted)
        else:
            hi = mid
    kept = ranked[:lo]
    if truncate and lo < n:
        cut = _truncate(ranked[lo], kept, render, budget)
        if cut is not None:
            doc, (prompt, counted) = cut
            return result(prompt, counted, [*kept, doc], lo + 1, floor=floor.tokens, truncated=doc.id)
    return result(best[0], best[1], kept, lo, floor=floor.tokens)


def _compress_to_fit(
    ranked: list[Doc],
    question: str,
    scorer: str | Scorer,
    count: Counter,
    render: Render,
    budget: int,
    floor: TokenCount,
) -> tuple[list[Doc], tuple[Any, TokenCount], Compressed] | None:
    """The ranked documents compressed to the largest token target whose whole prompt fits (verified by a
    count, like every other fit), or None when no compression fits."""
    # Memoized: each bisection step compresses the same documents again, so each sentence is counted once.
    target_counter = TargetCounter.of(count.tokenizer).memoized()
    the_scorer = get_scorer(scorer)  # once: the scores are cached on it across the renders below
    texts = sum(target_counter(d.text) for d in ranked)
    # Bisect the documents' token target: the largest whose rendered prompt fits (anchors and separators
    # depend on how many documents survive, so only a render says). About log2(budget) renders.
    lo, hi = 0, min(budget - upper_of(floor), texts)
    best: tuple[list[Doc], tuple[Any, TokenCount], Compressed] | None = None
    while hi > lo:
        target = (lo + hi + 1) // 2
        try:
            done = compress(ranked, question, tokenizer=target_counter, target=target, scorer=the_scorer)
        except CompressionError:
            lo = target  # below the shortest sentence: nothing smaller can hold one either
            continue
        rendered = render(done.kept_docs)
        if upper_of(rendered[1]) <= budget:
            best, lo = (done.kept_docs, rendered, done), target
        else:
            hi = target - 1
    return best


def _budget(max_input_tokens: int, reserve_output_tokens: int) -> int:
    for name, value in (("max_input_tokens", max_input_tokens), ("reserve_output_tokens", reserve_output_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidOptionError(f"{name} must be a non-negative integer, got {value!r}")
    budget = max_input_tokens - reserve_output_tokens
    if budget <= 0:
        raise ContextBudgetExceeded(
            f"reserve_output_tokens={reserve_output_tokens} leaves no input budget of max_input_tokens="
            f"{max_input_tokens}",
            prompt_tokens=0, budget=budget, advice="lower reserve_output_tokens or raise max_input_tokens",
        )  # fmt: skip
    return budget


def _renderer(build: Callable[..., Any], question: str, fmt: str, count: Counter, options: PlacementOptions) -> Render:
    # The survivors are already ranked (and deduplicated, cut to top_k): place them by rank and hand the builder
    # the plan (never re-placed). The ranking's direction goes along: the plan rescales scores to the relevance
    # the prompt shows.
    by_rank = options.replace(rank_by="input", dedup=None, top_k=None)

    def render(subset: list[Doc]) -> tuple[Any, TokenCount]:
        plan = place(subset, placement=by_rank)
        prompt = build(plan, question)
        return prompt, count_rendered(prompt, fmt, count)

    return render


def count_rendered(prompt: Any, fmt: str, count: Counter) -> TokenCount:
    """Count a prompt as it will be sent in ``fmt``: a string (text, chatml, jinja) or a chat request."""
    if fmt == "text":
        return count.count_text(prompt.text)
    rendered = prompt.messages(fmt)
    if isinstance(rendered, str):
        return count.count_text(rendered)
    if fmt == "anthropic":  # the system prompt travels beside the messages
        return count.count_request(rendered, "anthropic")
    return count.count_request({"messages": rendered}, "openai-chat")


def _truncate(doc: Doc, kept: list[Doc], render: Render, budget: int) -> tuple[Doc, tuple[Any, TokenCount]] | None:
    """The longest sentence prefix of ``doc`` that still fits next to ``kept``, or None."""
    sentences = split_sentences(doc.text)
    lo, hi, best = 0, len(sentences), None
    # Binary search on the number of whole sentences kept; hi (the whole document) is known not to fit.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        cut = Doc(
            text=" ".join(sentences[:mid]), id=doc.id, score=doc.score, title=doc.title, source=doc.source,
            metadata={**doc.metadata, "truncated": True},
        )  # fmt: skip
        rendered = render([*kept, cut])
        if upper_of(rendered[1]) <= budget:
            lo, best = mid, (cut, rendered)
        else:
            hi = mid
    return best
