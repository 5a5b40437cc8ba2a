"""A results row: the scored fields of an output, and the whole row of one call with its prompt's recipe.

Example:
    >>> from litm.probe._tasks import NeedleTask
    >>> inst = NeedleTask().instance(seed=0, depth=0.5, depths=(0.0, 0.5, 1.0))
    >>> fields = score_fields(inst, " " + inst.answers[0] + ".", "stop", kind="trial", depth=0.5, document="",
    ...                       distractor_positions={})
    >>> fields["hit"], fields["observations"]
    (True, [[0.5, True]])
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypedDict, cast

from litm.errors import ProbeError
from litm.eval._runs import completion_fields
from litm.eval._scoring import score_output
from litm.models._base import Completion, Model
from litm.probe._prepare import Prepared
from litm.probe._tasks import TaskInstance, layout_recipe

__all__ = [
    "PROBE_VERSION",
    "SCORING_VERSION",
    "ProbeRow",
    "ScoreFields",
    "depth_of",
    "make_row",
    "rows_of",
    "score_fields",
]

#: 2: a length's filler extends the shorter lengths' (``ProbeConfig.filler="nested"``), the sequential
#: stopping rule, and rows record ``cache_write_tokens``. A recipe of either version rebuilds the same way:
#: it lists the document's units explicitly.
PROBE_VERSION = 2
# Bumped when the scoring rules change; ``litm probe report --rescore`` rescores older rows.
SCORING_VERSION = 2


class ScoreFields(TypedDict):
    """The scored fields of a row: what the scoring rules decide (recomputed by a rescore)."""

    first_line: str
    hit: bool
    score: float
    miss: str | None
    copied_position: float | None
    # [depth, found] per evidence sentence of a trial row (the sequential rule and the analysis read them)
    observations: list[list[float]]
    scoring_version: int


class ProbeRow(TypedDict, total=False):
    """One ``results.jsonl`` row: the cell, the prompt's size and recipe, the output, its score and the call."""

    key: str
    kind: str
    task: str
    length: int
    depth: float | None
    trial: int
    layout: str
    seed: int
    prompt_tokens: int
    exact_length: bool
    actual_depths: list[float]
    question: str
    answers: list[str]
    output: str
    # ScoreFields
    first_line: str
    hit: bool
    score: float
    miss: str | None
    copied_position: float | None
    observations: list[list[float]]
    scoring_version: int
    # CompletionFields
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    latency_s: float
    finish_reason: str
    sampled: bool
    cache_write_tokens: int
    max_tokens: int
    mode: str
    model: str
    prompt_sha256: str
    recipe: dict[str, object]
    time: str


def rows_of(rows: Sequence[Mapping[str, Any]]) -> Sequence[ProbeRow]:
    """Rows read back from ``results.jsonl`` (JSON objects the probe wrote), as probe rows: the same sequence."""
    # Written from ProbeRows by make_row; the analysis checks each row it reads (check_row) and converts each
    # value it uses, so the fields are not re-validated here.
    return cast(Sequence[ProbeRow], rows)


def depth_of(row: ProbeRow) -> float:
    """A trial row's needle depth (a closed-book row has none: :class:`~litm.errors.ProbeError`)."""
    depth = row.get("depth")
    if depth is None:
        raise ProbeError(f"results row {row.get('key')!r} has no depth")
    return float(depth)


def score_fields(
    inst: TaskInstance,
    output: str,
    finish_reason: str,
    *,
    kind: str,
    depth: float | None,
    document: str,
    distractor_positions: Mapping[str, float],
) -> ScoreFields:
    """The scored fields of a row (also used to rescore stored outputs after the rules change)."""
    s = score_output(
        output,
        answers=inst.answers,
        question=inst.question,
        targets=[v for _, v in inst.targets],
        distractors=(*inst.distractors, *distractor_positions),
        distractor_positions=distractor_positions,
        document=document,
        truncated=finish_reason == "length",
    )
    observations: list[list[float]] = []
    if kind == "trial":
        if inst.targets:
            observations = [[d, bool(f)] for (d, _), f in zip(inst.targets, s.found, strict=True)]
        elif depth is None:
            raise ProbeError(f"a trial of {inst.task} needs a depth")
        else:
            observations = [[depth, s.hit]]
    return {
        "first_line": s.first_line,
        "hit": s.hit,
        "score": round(s.score, 4),
        "miss": s.miss,
        "copied_position": None if s.copied_position is None else round(s.copied_position, 4),
        "observations": observations,
        "scoring_version": SCORING_VERSION,
    }


def make_row(p: Prepared, done: Completion, model: Model, mode: str) -> ProbeRow:
    """The results row of one call: cell, output, score, miss class, cost, and the recipe of its prompt."""
    spec, inst, built = p.spec, p.instance, p.built
    scored = score_fields(
        inst,
        done.text,
        done.finish_reason,
        kind=spec.kind,
        depth=spec.depth,
        document=built.document,
        distractor_positions=built.distractor_positions,
    )
    recipe: dict[str, object] = {
        "version": PROBE_VERSION,
        "task": spec.task,
        "seed": spec.seed,
        "layout": layout_recipe(p.layout),
        "instruction": inst.instruction,
        "doc_label": inst.doc_label,
        "question": inst.question,
        "answer_prefix": inst.answer_prefix,
        **built.recipe,
    }
    return {
        "key": spec.key,
        "kind": spec.kind,
        "task": spec.task,
        "length": spec.length,
        "depth": spec.depth,
        "trial": spec.trial,
        "layout": spec.layout,
        "seed": spec.seed,
        "prompt_tokens": built.prompt_tokens,
        "exact_length": built.exact,
        "actual_depths": [round(d, 4) for d in built.actual_depths],
        "question": inst.question,
        "answers": list(inst.answers),
        "output": done.text,
        **scored,
        **completion_fields(done),
        "cache_write_tokens": done.cache_write_tokens,
        "max_tokens": p.max_tokens,
        "mode": mode,
        "model": model.name,
        "prompt_sha256": hashlib.sha256(built.prompt.encode("utf-8")).hexdigest(),
        "recipe": recipe,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
    }
