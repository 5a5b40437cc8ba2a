"""The one place code context meets litm's token gate, :func:`litm.budget._fit.fit`.

``fit`` keeps the largest best-ranked prefix of documents whose whole prompt fits, and raises
:class:`~litm.errors.ContextBudgetExceeded` when even the prompt with no documents does not. Code context
needs one thing more: the target is never dropped. The adapter pins it inside the builder, so every prompt
``fit`` renders contains the target, "no documents" means "the target alone", and ``fit``'s floor error
becomes :class:`~litm.errors.CodeTargetTooLargeError`. Without a prompt builder, the rendered context
(:func:`~litm.code._result.render_docs`) is what ``fit`` counts.

Example:
    >>> from litm.code._pieces import CodePiece
    >>> words = lambda text: len(text.split())
    >>> mk = lambda k, n: CodePiece(k, "m.py", "python", k, ((n, n),), "x = 1 " * 5, "exact")
    >>> out = fit_pieces([mk("target", 1), mk("caller", 2), mk("callee", 3)], counter=words, budget=50)
    >>> [d.id for d in out.kept], [d.id for d in out.dropped], out.tokens <= 50
    (['target:m.py:1-1', 'caller:m.py:2-2'], ['callee:m.py:3-3'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from litm.budget._fit import fit
from litm.code._pieces import CodePiece
from litm.code._result import render_docs
from litm.errors import CodeTargetTooLargeError, ContextBudgetExceeded, InvalidOptionError
from litm.placement import PlacementOptions, PlacementPlan, place
from litm.placement._documents import Doc
from litm.prompt import Prompt, PromptBuilder
from litm.tokens import get_tokenizer

__all__ = ["Fitted", "fit_pieces"]


@dataclass(frozen=True)
class Fitted:
    kept: list[Doc]  # the target first, then the kept pieces best-ranked first
    dropped: list[Doc]
    tokens: int
    prompt: Prompt | None  # the builder's prompt, or None when the rendered context was counted


@dataclass(frozen=True)
class _Rendered:
    """What ``fit`` expects from a builder: an object with the ``.text`` it counts."""

    text: str


class _ContextBuilder:
    """Renders the target plus the documents ``fit`` tries, as :func:`render_docs` does (question unused)."""

    def __init__(self, target: Doc, fmt: str, order: str) -> None:
        self.target, self.fmt, self.order = target, fmt, order

    def build(self, docs: Sequence[Doc], question: str) -> _Rendered:
        return _Rendered(render_docs([self.target, *docs], self.fmt, self.order))


class _PinnedBuilder:
    """A caller's prompt builder that always gets the target, ranked first, with the documents ``fit`` tries.

    ``fit`` trims by rank (its plan is in rank order); the target joins at rank 1 and the whole context is
    placed by ``order`` (``pyramid`` puts the target last, next to the question).
    """

    def __init__(self, target: Doc, inner: PromptBuilder, order: str) -> None:
        self.target, self.inner, self.order = target, inner, order

    def build(self, plan: PlacementPlan, question: str) -> Prompt:
        placed = place([self.target, *plan.items], self.order, placement=PlacementOptions(min_docs=1))
        return self.inner.build(placed, question)


def _counter(counter: object) -> object:
    if isinstance(counter, str):
        return get_tokenizer(counter)
    return counter


def fit_pieces(
    pieces: Sequence[CodePiece],
    *,
    counter: object,
    budget: int,
    fmt: str = "text",
    order: str = "pyramid",
    builder: PromptBuilder | None = None,
    question: str = "",
    prompt_format: str = "text",
) -> Fitted:
    """Fit ranked ``pieces`` (the target first) into ``budget`` tokens with :func:`litm.budget._fit.fit`.

    ``counter`` is anything ``fit`` accepts, or a model spec string (``"openai:gpt-4"``, ``"local"``).
    With ``builder`` (a :class:`litm.prompt.PromptBuilder`) the whole prompt around ``question`` is counted,
    in ``prompt_format``; otherwise the context rendered in ``fmt`` and placed by ``order``.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidOptionError(f"budget must be a positive number of tokens, got {budget!r}")
    target, *rest = (p.to_doc() for p in pieces)
    gate = _PinnedBuilder(target, builder, order) if builder is not None else _ContextBuilder(target, fmt, order)
    try:
        # strategy "none": fit trims by rank only; the order is the code context's (render_docs / the builder).
        result = fit(
            rest, question, gate, _counter(counter), budget,
            format=prompt_format if builder else "text", strategy="none", placement=PlacementOptions(min_docs=0),
        )  # fmt: skip
    except ContextBudgetExceeded as err:
        alone = err.floor if err.floor is not None else err.prompt_tokens
        raise CodeTargetTooLargeError(
            f"the target {target.source} alone needs {alone} tokens"
            + (" (with the prompt around it)" if builder is not None else "")
            + f", over the budget of {budget}; the target is never cut",
            target_tokens=alone, budget=budget, advice="raise --budget, or target a smaller function",
        ) from None
    return Fitted([target, *result.kept], list(result.dropped), result.tokens, result.prompt if builder else None)
