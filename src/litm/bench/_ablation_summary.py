"""What an ablation-only run shows: each prompt arm against the plain prompt of the same question and slot.

An ablation-only run (``BenchConfig(ablation_only=True)``, ``litm bench --ablation-only``) answers the arms and
the plain prompts they pair with, not the slot sweep, so the full summary's slot curve and strategy headline
would be computed from a few slots and mislead. This summary keeps only what the run measured, in the same
shape as the full summary's keys (``by_k.<k>.ablation``, ``ablation_vs_plain``, ``ablation_vs_default``;
``gold_sets.by_k.<k>.arms`` for multi-gold questions), so whatever reads those keys reads both.

Example:
    >>> rows = [{"phase": "slot", "k": 3, "qid": q, "slot": 2, "hit": q == 1} for q in (1, 2, 3)]
    >>> rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": 2, "arm": "minimal", "hit": q != 3}
    ...          for q in (1, 2, 3)]
    >>> s = ablation_summary(rows)["by_k"]["3"]
    >>> s["pairs"], s["ablation_vs_plain"]["minimal"]["better"]
    (3, 1)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from litm.bench._ablation import ablation_cells, ablation_vs_plain
from litm.bench._analysis import call_totals
from litm.bench._goldsets import goldset_arms_markdown, goldset_summary
from litm.bench._markdown import ablation_markdown
from litm.bench._rows import Rows

__all__ = ["ABLATION_SUMMARY", "ablation_summary", "ablation_summary_markdown", "write_ablation_outputs"]

ABLATION_SUMMARY = "ablation-summary"


def ablation_summary(rows: Rows, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ablation arms of ``rows`` against plain (and the element arms against ``default``), per ``k``."""
    settings = settings or {}
    by_k: dict[str, object] = {}
    for k in sorted({int(r["k"]) for r in rows if r.get("phase") == "ablation" and not r.get("gold_set")}):
        cells = ablation_cells(rows, k)
        by_k[str(k)] = {
            # Prompts (question, slot) with every arm answered: the ones compared.
            "pairs": sum(c.n for c in (cells.get("plain") or {}).values()),
            "ablation": {arm: {str(s): c.to_dict() for s, c in v.items()} for arm, v in cells.items()},
            "ablation_vs_plain": ablation_vs_plain(rows, k),
            "ablation_vs_default": ablation_vs_plain(rows, k, base="default"),
        }
    multi = goldset_summary(rows)["by_k"]
    blocks = multi.items() if isinstance(multi, dict) else ()
    gold = {k: {"arms": s["arms"]} for k, s in blocks if s.get("arms")}
    return {"model": settings.get("model"), "command": settings.get("command"), "by_k": by_k,
            "gold_sets": {"by_k": gold}, "calls": call_totals(rows)}  # fmt: skip


def ablation_summary_markdown(summary: Mapping[str, Any]) -> str:
    """:func:`ablation_summary` as Markdown: the run's command, then each ``k``'s arms against plain."""
    model = summary.get("model") or {}
    out = [f"# Anchor ablation: {model.get('name', 'model')} ({model.get('spec', '?')})", ""]
    if summary.get("command"):
        out += ["```bash", str(summary["command"]), "```", ""]
    for k, s in summary["by_k"].items():
        out += [f"## k = {k}: {s['pairs']} prompts with every arm", "", *ablation_markdown(s)]
    for k, s in summary["gold_sets"]["by_k"].items():
        out += [f"## Multi-gold questions, k = {k}", *goldset_arms_markdown(s["arms"]), ""]
    return "\n".join(out).rstrip() + "\n"


def write_ablation_outputs(out_dir: str | Path, rows: Rows, settings: Mapping[str, Any]) -> Path:
    """Write ``ablation-summary.json`` and ``.md`` into ``out_dir``; returns the Markdown file's path."""
    out = Path(out_dir)
    summary = ablation_summary(rows, settings)
    (out / f"{ABLATION_SUMMARY}.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / f"{ABLATION_SUMMARY}.md").write_text(ablation_summary_markdown(summary), encoding="utf-8")
    return out / f"{ABLATION_SUMMARY}.md"
