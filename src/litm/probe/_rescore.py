"""Score stored outputs again under the current rules, without calling the model.

Scoring is a deterministic function of a row's output and its prompt, and every row stores both (the
output verbatim, the prompt as a recipe), so when the rules improve (a new miss class, say) a finished
run is rescored instead of rerun. The task instance is regenerated from the row's seed and the run's
settings and checked against the row's question; the document is rebuilt from the recipe.

Example:
    >>> rows = rescore_rows(read_rows("out/results.jsonl"), settings["config"])  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

from litm.errors import ProbeError
from litm.probe._analysis import check_row
from litm.probe._corpus import Corpus
from litm.probe._grid import ProbeConfig
from litm.probe._items import ItemTask
from litm.probe._recipe import rebuild_document
from litm.probe._registry import get_task
from litm.probe._rows import ProbeRow, score_fields
from litm.util._files import atomic_write

__all__ = ["config_from_settings", "rescore_rows", "write_rows"]


def config_from_settings(config: Mapping[str, Any]) -> ProbeConfig:
    """A :class:`ProbeConfig` from ``run.json``'s ``config`` (unknown keys of other versions ignored)."""
    known = {f.name for f in fields(ProbeConfig)}
    kwargs: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in config.items() if k in known}
    return ProbeConfig(**kwargs)


def rescore_rows(
    rows: Sequence[Mapping[str, Any]], config: Mapping[str, Any], corpus: Corpus | None = None
) -> list[ProbeRow]:
    """Rows with their scored fields recomputed (hit, score, miss, copied position, observations)."""
    cfg = config_from_settings(config)
    out: list[ProbeRow] = []
    for number, row in enumerate(rows, start=1):
        check_row(row, number)
        try:
            out.append(_rescore(row, cfg, corpus))
        except ProbeError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # Rows are written by litm: a field missing or of the wrong type means the file was damaged.
            raise ProbeError(f"results row {number}: cannot rescore it, a field is damaged ({exc!r})") from None
    return out


def _rescore(row: Mapping[str, Any], cfg: ProbeConfig, corpus: Corpus | None) -> ProbeRow:
    task = get_task(str(row["task"]), k=cfg.k, second_depth=cfg.chain_depth)
    depth = row.get("depth")
    inst = task.instance(int(row["seed"]), 0.5 if depth is None else float(depth), cfg.depths)
    if inst.question != row.get("question"):
        raise ProbeError(f"row {row['key']}: its question no longer regenerates (task code changed); rerun it")
    recipe = row["recipe"]
    document, positions = "", {}
    if row.get("kind") == "trial":
        document = rebuild_document(recipe, corpus)
        doc = recipe.get("document") or {}
        if isinstance(task, ItemTask):
            items, gold = task.arrange(inst, int(doc["n"]), float(doc["depth"]))
            positions = task.positions(items, gold)
    scored = score_fields(
        inst,
        str(row["output"]),
        str(row.get("finish_reason", "stop")),
        kind=str(row.get("kind")),
        depth=depth,
        document=document,
        distractor_positions=positions,
    )
    # A row the probe wrote (check_row passed), with its scored fields replaced.
    return cast(ProbeRow, {**row, **scored})


def write_rows(path: str | Path, rows: Sequence[ProbeRow]) -> None:
    """Replace a results file atomically (written beside it, then renamed over it)."""
    atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
