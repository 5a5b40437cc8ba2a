"""The benchmark's row: one line of ``bench.jsonl``, one answered prompt, and the fields each phase adds.

Every row has the job's fields (``key``, ``phase``, ``qid``, ...) and the answer's (``output``, ``hit``, ``em``,
``f1``, the call's usage and latency); a phase adds its own: ``slot`` / ``gold_rank`` / ``strategy`` / ``arm`` of
the single-gold design, ``design`` / ``gold_slots`` / ``kind`` of a multi-gold one, the compression arm's token
counts, the psc arm's votes, the quote-first arm's quote, the likelihood metric. A row read back from the file
is this shape because this package wrote it (:func:`rows_of` names that step).

Example:
    >>> row: BenchRow = {"key": "closed|q=3", "phase": "closed", "qid": 3, "hit": False}
    >>> numeric(row, "hit"), numeric(row, "f1")
    (0.0, None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, cast

from litm.errors import EvalError

__all__ = ["BenchRow", "Rows", "field", "number", "numeric", "rows_of"]


class BenchRow(TypedDict, total=False):
    """One ``bench.jsonl`` row (see the module docstring for which phase writes which fields)."""

    # the job
    key: str
    phase: str
    qid: int | str
    fold: int
    question: str
    answers: list[str]
    k: int
    slot: int
    gold_rank: int
    strategy: str
    arm: str
    order: list[int]
    # multi-gold questions
    gold_set: bool
    golds: int
    gold_slots: list[int]
    design: str
    kind: str
    # the answer
    output: str
    first_line: str
    hit: bool
    miss: str | None
    em: bool
    f1: float
    prompt_sha: str
    same_prompt_as: str
    model: str
    mode: str
    format: str
    threads: int | None
    # the call (litm.eval._runs.completion_fields)
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    latency_s: float
    finish_reason: str | None
    sampled: bool
    # the likelihood metric
    likelihood: float
    likelihood_total: float
    answer_logprobs: list[dict[str, object]]
    # the compression arms
    ratio: float
    budget: int
    doc_tokens: int
    original_doc_tokens: int
    docs_kept: int
    gold_kept: int
    answer_kept: bool
    compress_s: float
    # the psc arm
    psc_calls: int
    calls_made: int
    psc_seed: int
    votes: dict[str, int]
    winner: str
    agreement: float
    call_answers: list[str]
    orders: list[list[int]]
    call_gold_slots: list[list[int]]
    first_prompt_sha: str
    # the quote-first arm
    answered: bool
    quote: str | None
    quote_found: bool
    quote_score: float
    quote_gold: bool


Rows = Sequence[BenchRow]


def rows_of(rows: list[dict[str, Any]]) -> list[BenchRow]:
    """Rows read back from ``bench.jsonl`` (JSON objects this package wrote), as benchmark rows: the same list.

    The same list, not a copy: a run's :class:`~litm.eval._results.ResultsLog` keeps appending to it.
    """
    # Each row was written from a BenchRow by this package; re-validating every field of a 100k-row file on
    # each read would cost more than the analysis, and the readers still convert each value they use.
    return cast(list[BenchRow], rows)


def field(row: Mapping[str, object], name: str) -> object:
    """Field ``name`` of a row, named at run time (a metric, or what a table groups by); KeyError without it."""
    return row[name]


def number(row: Mapping[str, object], name: str) -> float:
    """The numeric field ``name`` of a row that must have it (:class:`~litm.errors.EvalError` otherwise)."""
    value = numeric(row, name)
    if value is None:
        raise EvalError(f"row {row.get('key')!r} has no value for {name!r}")
    return value


def numeric(row: Mapping[str, object], name: str) -> float | None:
    """The numeric field ``name`` of a row (booleans count 1 and 0), or None when the row has none.

    >>> numeric({"em": True}, "em"), numeric({"f1": 0.5}, "f1"), numeric({"f1": None}, "f1")
    (1.0, 0.5, None)
    """
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    raise EvalError(f"row field {name!r} should be a number, got {value!r}")
