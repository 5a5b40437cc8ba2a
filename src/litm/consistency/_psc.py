"""Permutation self-consistency (Tang et al. 2023, arXiv 2310.07712): ask with the context shuffled, then vote.

:func:`psc` builds one prompt per document order (:func:`~litm.consistency._permute.permutations`, call 0 in the
order given) with the same :class:`~litm.prompt.PromptBuilder`, so the orders are the only difference; sends them with
:func:`litm.models.complete_many`, which runs a remote model's calls concurrently (at most ``concurrency`` at
once, default the model's own) and an in-process llama.cpp model's one after another; reads each reply's first
line as its answer and aggregates by normalised majority (:func:`~litm.consistency.vote`).

On a local model the calls share a prefix: everything before the first document (the chat template's head and
the instruction; the question too with ``Layout(question_position="before")`` or ``"both"``) is the same in
every order, and llama.cpp's KV reuse (``reuse_prefix``, on by default) keeps it between consecutive calls in
whole ``n_batch`` chunks, which :attr:`PscAnswer.cached_tokens` reports. The documents themselves differ from
call to call, so ``m`` calls cost close to ``m`` times one prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from litm.consistency._permute import DEFAULT_CALLS, check_calls, permutations
from litm.consistency._result import PscAnswer, PscCall
from litm.consistency._vote import vote
from litm.errors import InvalidOptionError, InvalidOptionTypeError, UnsupportedTypeError
from litm.eval._scoring import first_line, normalize
from litm.models import Model, complete_many
from litm.models._base import PromptLike
from litm.placement._documents import to_docs
from litm.prompt import Prompt, PromptBuilder
from litm.prompt._anchor_rule import PLAIN_ANCHORS

__all__ = ["DEFAULT_BUILDER", "psc"]

#: The prompt when none is given: Liu et al.'s format, the benchmark's ``plain`` arm, whose replies are a short
#: answer (a builder that asks for ``[id]`` citations makes two calls citing different slots vote apart).
DEFAULT_BUILDER = PromptBuilder(anchors=PLAIN_ANCHORS)


def psc(
    docs: Sequence[object],
    question: str,
    model: Model,
    *,
    calls: int = DEFAULT_CALLS,
    seed: int = 0,
    keep_first: bool = True,
    builder: PromptBuilder | None = None,
    max_tokens: int = 32,
    stop: str | Sequence[str] = ("\n",),
    concurrency: int | None = None,
    as_input: Callable[[Prompt], PromptLike] | None = None,
    answer_of: Callable[[str], str] = first_line,
) -> PscAnswer:
    """Answer ``question`` from ``docs`` ``calls`` times, each time with the documents in another seeded order,
    and return the majority answer (see the module docstring).

    ``docs`` are anything :func:`litm.place` reads (strings, dicts, :class:`~litm.placement.Doc`, framework
    documents), in the order call 0 uses (``keep_first``); ``builder`` renders every call (default Liu et al.'s
    format, as the benchmark's ``plain`` arm); ``as_input`` turns a built prompt into what the model is sent
    (default the :class:`~litm.prompt.Prompt` itself, which each model renders natively; the benchmark sends its
    text as one chat turn); ``answer_of`` reads the answer out of a reply (default its first line). Decoding is greedy;
    ``max_tokens`` and ``stop`` go to every call. Bad input raises a typed error
    before any call: :class:`~litm.errors.InvalidOptionError` for ``calls`` outside 1..32 or no documents,
    :class:`~litm.errors.InvalidOptionTypeError` for a wrong type, :class:`~litm.errors.PromptError` for an
    empty question.

    Example:
        >>> from litm.models import load_model
        >>> docs = ["Paris is the capital of France.", "Rome is the capital of Italy.", "Bern is in Switzerland."]
        >>> out = psc(docs, "What is the capital of France?", load_model("local"), calls=3)  # doctest: +SKIP
        >>> out.answer, out.votes, out.n_calls, out.orders[0]                                # doctest: +SKIP
        ('Paris', {'paris': 3}, 3, (0, 1, 2))
    """
    if not isinstance(model, Model):
        raise UnsupportedTypeError(f"model must be a litm Model (litm.models.load_model), got {type(model).__name__}")
    n = check_calls(calls)
    if builder is None:
        builder = DEFAULT_BUILDER
    elif not isinstance(builder, PromptBuilder):
        raise InvalidOptionTypeError(f"builder must be a PromptBuilder, got {type(builder).__name__}")
    for name, hook in (("as_input", as_input), ("answer_of", answer_of)):
        if hook is not None and not callable(hook):
            raise InvalidOptionTypeError(f"{name} must be callable, got {type(hook).__name__}")
    read = to_docs(docs)
    if not read:
        raise InvalidOptionError("psc needs at least one document to permute, got none")
    orders = permutations(len(read), n, seed=seed, keep_first=keep_first)
    # Every prompt is built before the first call, so a bad question or document fails with nothing spent.
    prompts = [builder.build([read[i] for i in order], question) for order in orders]
    inputs = [p if as_input is None else as_input(p) for p in prompts]
    stops = [stop] if isinstance(stop, str) else list(stop)
    done = complete_many(
        model, inputs, concurrency=concurrency, max_tokens=max_tokens, stop=stops, temperature=0.0, seed=0
    )
    answers = [answer_of(c.text) for c in done]
    made = tuple(
        PscCall(order, tuple(read[i].id for i in order), answer, normalize(answer), c, p)
        for order, answer, c, p in zip(orders, answers, done, prompts, strict=True)
    )
    return PscAnswer.of(made, vote(answers), seed)
