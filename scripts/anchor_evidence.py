"""Write ``docs/anchor-evidence.md``: every committed prompt arm against the plain prompt, and the default's.

Reads every ``docs/results/*/bench-summary.json`` that has an anchor ablation:

* NQ runs (``litm bench``, slot design): each arm paired with ``plain`` on the same question and gold slot
  (``ablation_vs_plain``): the accuracy difference by hits with its paired bootstrap 95% interval and, where the
  run scored it, the gold answer's likelihood difference with its interval. Each anchor-element arm is also
  paired with the full ``default`` (``ablation_vs_default``).
* Gold-set runs (2Wiki, HotpotQA): each arm's paired difference from ``plain`` at the design it ran in, by
  exact match (em), token F1, hit and likelihood (``gold_sets.arms.<design>.vs_plain``), and the element arms'
  difference from ``default`` (``vs_default``).

Ablation-only runs (``litm bench --ablation-only``) are read from their ``ablation-summary.json``, which holds
the same keys. A run grown by questions on the same arm, model, data, k and slots replaces the smaller cell.

A cell is *below* when its interval lies entirely below 0, *above* when entirely above. The page ends with the
rule litm's default follows (:func:`litm.prompt.anchors_for`): a model with committed cells of litm's id-and-title
format (the ``minimal`` arm, ``AnchorOptions()``) against plain gets ``minimal`` when it was above plain on one and
below on none, else plain; any other model gets plain. ``tests/test_anchor_evidence.py`` regenerates the page and
fails when the committed one is stale; ``tests/test_anchor_rule.py`` fails when litm's shipped table
(``MEASURED_ANCHORS`` in ``src/litm/prompt/_anchor_rule.py``) differs from the rule applied to these runs.

Usage:
    python scripts/anchor_evidence.py            # rewrite docs/anchor-evidence.md
    python scripts/anchor_evidence.py --check    # exit 1 when the committed page is stale
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from strategy_evidence import RESULTS, ROOT, data_name, model_name, page_main, read_summary, summaries

PAGE = ROOT / "docs" / "anchor-evidence.md"
#: Arm columns in the order of ``litm.bench``'s arm list (``plain`` is the baseline of every cell).
ARMS = ("default", "bracket", "default-position", "default-score", "default-recap", "default-closing",
        "default+middle", "minimal", "quote-first", "anchored", "plain-both", "anchored-both")  # fmt: skip
GOLD_METRICS = ("em", "f1", "hit", "likelihood")
#: The arm a measured model may get instead of plain: litm's id-and-title blocks (``AnchorOptions()``).
CANDIDATE = "minimal"


@dataclass(frozen=True)
class ArmCell:
    """One arm's difference from its baseline arm on one metric of one run, with its 95% interval."""

    run: str
    model: str
    data: str
    k: int
    where: str
    metric: str
    arm: str
    base: str
    diff: float
    lo: float
    hi: float
    pairs: int

    @property
    def verdict(self) -> str:
        return "below" if self.hi < 0 else "above" if self.lo > 0 else "null"


def cells(results: Path = RESULTS) -> list[ArmCell]:
    """Every committed arm-versus-plain and element-versus-default cell, each measured cell once.

    A run copied to add arms carries its original's cells (the same model, data, k, slots and questions): each
    such cell is counted once, from the run that paired the most questions, the original on a tie. A copy
    that is still running pairs fewer, so it never counts an arm twice.
    """
    best: dict[tuple[object, ...], ArmCell] = {}
    for run, summary in _all_summaries(results):
        for c in _run_cells(run, summary):
            key = (c.model, c.data, c.k, c.where, c.metric, c.arm, c.base)
            if key not in best or c.pairs > best[key].pairs:
                best[key] = c
    return sorted(best.values(), key=lambda c: c.run)


def _all_summaries(results: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every full run's bench summary, then every ablation-only run's ablation summary."""
    yield from summaries(results)
    for path in sorted(results.glob("*/ablation-summary.json")):
        yield path.parent.name, read_summary(path)


def _run_cells(run: str, summary: Mapping[str, Any]) -> Iterator[ArmCell]:
    model, data = model_name(summary), data_name(str(summary.get("command", "")))
    for k, block in (summary.get("by_k") or {}).items():
        ran = {arm: sorted(int(s) for s in at) for arm, at in (block.get("ablation") or {}).items()}
        for base, table in (("plain", block.get("ablation_vs_plain")), ("default", block.get("ablation_vs_default"))):
            for arm, v in (table or {}).items():
                where = "slot " + ", ".join(map(str, ran.get(arm, [])))
                if "diff" in v:
                    yield ArmCell(run, model, data, int(k), where, "hits", arm, base, v["diff"], v["lo"], v["hi"],
                                  v["pairs"])  # fmt: skip
                if v.get("likelihood"):
                    mean, lo, hi = v["likelihood"]
                    yield ArmCell(run, model, data, int(k), where, "likelihood", arm, base, mean, lo, hi, v["pairs"])
    for k, block in ((summary.get("gold_sets") or {}).get("by_k") or {}).items():
        for design, arms in (block.get("arms") or {}).items():
            for base, table in (("plain", arms.get("vs_plain")), ("default", arms.get("vs_default"))):
                for arm, by_metric in (table or {}).items():
                    for metric in GOLD_METRICS:
                        d = by_metric.get(metric)
                        if d:
                            yield ArmCell(run, model, data, int(k), f"{design} design", metric, arm, base,
                                          d["diff"], d["lo"], d["hi"], d["n"])  # fmt: skip


def model_defaults(rows: list[ArmCell]) -> dict[str, str]:
    """Each model with a committed ``minimal``-against-plain cell, and the arm the rule gives it: ``minimal`` when
    it was above plain on one of that model's cells and below on none, else ``plain``."""
    out: dict[str, str] = {}
    for model in sorted({c.model for c in rows if c.arm == CANDIDATE and c.base == "plain"}):
        mine = [c for c in rows if c.model == model and c.arm == CANDIDATE and c.base == "plain"]
        good = any(c.verdict == "above" for c in mine) and not any(c.verdict == "below" for c in mine)
        out[model] = CANDIDATE if good else "plain"
    return out


def run_specs(results: Path = RESULTS) -> dict[str, str]:
    """The model spec each committed run was made with (``litm bench --model``), by run."""
    return {run: str((summary.get("model") or {}).get("spec") or "") for run, summary in _all_summaries(results)}


def shipped_arm() -> str:
    """The benchmark arm whose anchors are exactly the ones litm ships (``AnchorOptions()``)."""
    from litm.bench._design import _ANCHORS
    from litm.prompt import AnchorOptions

    return next(arm for arm in ARMS if _ANCHORS.get(arm) == AnchorOptions())


def _cell(c: ArmCell | None) -> str:
    if c is None:
        return "-"
    mark = {"below": " **below**", "above": " **above**", "null": ""}[c.verdict]
    return f"{c.diff:+.3f} [{c.lo:+.3f}, {c.hi:+.3f}]{mark}"


def _table(rows: list[ArmCell], base: str) -> list[str]:
    mine = [c for c in rows if c.base == base]
    arms = [a for a in ARMS if any(c.arm == a for c in mine)]
    by_key: dict[tuple[str, str, str], dict[str, ArmCell]] = {}
    for c in mine:
        by_key.setdefault((c.run, c.where, c.metric), {})[c.arm] = c
    lines = [
        "| run | model | data | k | where | metric | " + " | ".join(f"`{a}`" for a in arms) + " |",
        "|---|---|---|---:|---|---|" + "---|" * len(arms),
    ]
    for (run, where, metric), got in by_key.items():
        first = next(iter(got.values()))
        lines.append(f"| [{run}](results/{run}/README.md) | {first.model} | {first.data} | {first.k} | {where} "
                     f"| {metric} | " + " | ".join(_cell(got.get(a)) for a in arms) + " |")  # fmt: skip
    return lines


def render(results: Path = RESULTS) -> str:
    """The Markdown page, generated from the committed bench summaries."""
    rows = cells(results)
    shipped = shipped_arm()
    lines = [
        "# Anchor evidence: prompt arms against the plain prompt, by the committed runs",
        "",
        "<!-- Generated by scripts/anchor_evidence.py from docs/results/*/bench-summary.json; do not edit by",
        "     hand. tests/test_anchor_evidence.py fails when this page is stale. -->",
        "",
        "Each cell is an arm's difference from `plain` (Liu et al.'s format: the same documents, order and",
        "instruction) on the same questions, with its paired 95% interval; **below** / **above** mark an interval",
        "entirely below / above 0. NQ runs: hits at the gold slots the ablation ran, and the gold answer's mean",
        "log-likelihood per token. Gold-set runs (2Wiki, HotpotQA): exact match (em), token F1, hit and likelihood",
        "at the design the arms ran in. What the arms are and what each element costs in tokens:",
        "[prompts.md](prompts.md).",
        "",
        *_table(rows, "plain"),
        "",
        "## Tally against plain",
        "",
        "| arm | cells | above | below |",
        "|---|---:|---:|---:|",
    ]
    for arm in ARMS:
        mine = [c for c in rows if c.arm == arm and c.base == "plain"]
        if mine:
            above, below = sum(c.verdict == "above" for c in mine), sum(c.verdict == "below" for c in mine)
            lines.append(f"| `{arm}` | {len(mine)} | {above} | {below} |")
    elements = [c for c in rows if c.base == "default"]
    if elements:
        lines += ["", "## Each anchor element against the full default", "", *_table(rows, "default")]
    against = [c for c in rows if c.arm == shipped and c.base == "plain"]
    below = sorted(f"{c.run} ({c.metric} {c.diff:+.3f})" for c in against if c.verdict == "below")
    lines += [
        "",
        "## The default by model",
        "",
        f"litm's id-and-title blocks (`AnchorOptions()`) are the `{shipped}` arm: below plain in {len(below)} of "
        f"{len(against)} cells" + (f" ({'; '.join(below)})." if below else ".") + " No other format beats plain",
        "on every model, so a prompt gets its model's measured format: a model with `minimal` cells against plain",
        "gets `minimal` when it was above plain on one and below on none, else plain. Any other model gets plain",
        "(Liu et al.'s format), the only format no committed run found below plain. `MEASURED_ANCHORS` in",
        "`src/litm/prompt/_anchor_rule.py` ships this table, and `tests/test_anchor_rule.py` fails when the two",
        "differ.",
        "",
        f"| model | `{CANDIDATE}` cells against plain | above | below | default |",
        "|---|---:|---:|---:|---|",
    ]
    for model, arm in model_defaults(rows).items():
        mine = [c for c in rows if c.model == model and c.arm == CANDIDATE and c.base == "plain"]
        above, low = sum(c.verdict == "above" for c in mine), sum(c.verdict == "below" for c in mine)
        lines.append(f"| {model} | {len(mine)} | {above} | {low} | `{arm}` |")
    lines += [
        "| any other model | - | - | - | `plain` |",
        "",
        "Regenerate with `python scripts/anchor_evidence.py` after committing a run.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return page_main(__doc__, PAGE, render, "anchor_evidence.py", argv)


if __name__ == "__main__":
    raise SystemExit(main())
