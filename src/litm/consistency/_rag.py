"""Permutation self-consistency over a RAG pipeline: retrieve, fit and place once, then ask in several orders."""

from __future__ import annotations

import re

from litm.consistency._permute import DEFAULT_CALLS, check_calls
from litm.consistency._psc import psc
from litm.consistency._result import PscAnswer
from litm.errors import UnsupportedTypeError
from litm.eval._scoring import first_line
from litm.rag import Pipeline
from litm.rag._defaults import BASE_MODEL_STOP

__all__ = ["ask", "uncited"]

# A bracketed group: a citation such as [notes.md#0] or [2], which would split the vote between two calls that
# give the same answer but cite the document at its slot in different orders.
_GROUP = re.compile(r"\[[^\[\]]*\]")


def uncited(reply: str) -> str:
    """The answer a reply votes with: its first line without bracketed citations.

    >>> uncited("Paris [fr.md#0] [2].\\nMore text")
    'Paris .'
    """
    return " ".join(_GROUP.sub(" ", first_line(reply)).split())


def ask(
    pipeline: Pipeline,
    question: str,
    *,
    calls: int = DEFAULT_CALLS,
    seed: int = 0,
    concurrency: int | None = None,
) -> PscAnswer:
    """Answer ``question`` with ``pipeline`` by permutation self-consistency.

    The pipeline retrieves, fits and places once (:meth:`~litm.rag.Pipeline.prepare`: the gate keeps what fits the
    budget); :func:`~litm.consistency.psc` then asks ``calls`` times with the kept documents in seeded orders,
    call 0 in the placed order (so call 0 sends the prompt :meth:`~litm.rag.Pipeline.ask` sends), with the
    pipeline's builder (its chat form for a chat model), answer length and stop sequences. Each call's answer is
    the first non-empty line of its reply, and votes without its ``[id]`` citations (:func:`uncited`).
    ``calls`` is checked before anything is retrieved.

    Example:
        >>> from litm.rag import Pipeline
        >>> out = ask(Pipeline.from_index("idx"), "When did the tower open?", calls=3)  # doctest: +SKIP
        >>> out.answer, out.votes, out.n_calls                                          # doctest: +SKIP
        ('1889', {'1889': 3}, 3)
    """
    if not isinstance(pipeline, Pipeline):
        raise UnsupportedTypeError(f"pipeline must be a litm.rag.Pipeline, got {type(pipeline).__name__}")
    check_calls(calls)
    prepared = pipeline.prepare(question)
    model = pipeline.model
    chat = model.supports_chat
    builder = pipeline.builder.for_chat() if chat else pipeline.builder
    # The pipeline's own stops; by default a base model stops at a blank line (it may open with a newline) and a
    # chat model at the end of its turn. Either way the answer is the first non-empty line.
    stop = pipeline.stop if pipeline.stop is not None else (() if chat else BASE_MODEL_STOP)
    return psc(
        prepared.prompt.documents, prepared.question, model, calls=calls, seed=seed, builder=builder,
        max_tokens=pipeline.max_answer_tokens, stop=stop, concurrency=concurrency, answer_of=uncited,
    )  # fmt: skip
