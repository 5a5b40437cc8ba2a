"""Turn benchmark rows into files: ``bench-summary.json`` and ``.md``, profiles, PNG plots and ``report.html``.

Example:
    >>> out = write_outputs("out/", rows, settings)  # doctest: +SKIP
    >>> out.summary["by_k"]["10"]["questions"]        # doctest: +SKIP
    100
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litm.bench._ablation_summary import write_ablation_outputs
from litm.bench._analysis import call_totals, fold_profiles, summarize
from litm.bench._compression_summary import write_compression_outputs
from litm.bench._consistency import write_psc_outputs
from litm.bench._design import STRATEGIES, quote_markdown, quote_summary
from litm.bench._goldsets import goldset_markdown, goldset_summary
from litm.bench._likelihood import likelihood_summary
from litm.bench._markdown import summary_markdown
from litm.bench._rows import BenchRow, rows_of
from litm.bench._settings import RESULTS, SETTINGS
from litm.errors import EvalError
from litm.eval._results import read_rows

__all__ = ["SUMMARY", "SUMMARY_MD", "BenchOutputs", "refresh_outputs", "write_outputs", "write_run_outputs"]

SUMMARY = "bench-summary.json"
SUMMARY_MD = "bench-summary.md"


@dataclass
class BenchOutputs:
    """The summary and the files written for it."""

    summary: dict[str, Any]
    summary_path: Path
    plots: list[Path] = field(default_factory=list)
    report: Path | None = None
    #: The compression, psc and ablation summaries written beside it, by arm kind.
    arm_summaries: dict[str, Path] = field(default_factory=dict)


def write_outputs(
    out_dir: str | Path, rows: Sequence[BenchRow], settings: Mapping[str, Any], *, plots: bool = True
) -> BenchOutputs:
    """Analyse ``rows``; write the summary (JSON and Markdown), each fold's profile, plots and the HTML report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    single = [r for r in rows if not r.get("gold_set")]
    summary = summarize(single, settings)
    strategies = tuple((settings.get("config") or {}).get("strategies") or STRATEGIES)
    for k, by_k in summary["by_k"].items():
        by_k["likelihood"] = likelihood_summary(single, int(k), strategies)
    multi = [r for r in rows if r.get("gold_set")]
    if multi:
        summary["gold_sets"] = goldset_summary(multi)
        summary["calls"] = call_totals(rows)
    quotes = quote_summary(rows)
    if quotes:
        summary["quote_first"] = quotes
    summary_path = out / SUMMARY
    summary_path.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    markdown = summary_markdown(summary)
    if multi:
        markdown += "\n" + "\n".join(goldset_markdown(summary["gold_sets"]))
    if quotes:
        markdown += "\n" + "\n".join(quote_markdown(quotes))
    (out / SUMMARY_MD).write_text(markdown, encoding="utf-8")
    for k in summary["by_k"]:
        for fold, profile in fold_profiles(single, int(k)).items():
            profile.save(out / f"bench-profile-k{k}-fold{fold}.json")
    result = BenchOutputs(summary, summary_path)
    if plots:
        from litm.bench._plots import write_plots
        from litm.bench._report import write_report

        result.plots = write_plots(summary, out)
        result.report = write_report(out)
    return result


def refresh_outputs(out_dir: str | Path, *, plots: bool = True) -> BenchOutputs:
    """Re-analyse a finished (or running) benchmark from its ``bench.jsonl`` and ``run.json``, without a model.

    For a run made by an older litm, or copied from another machine: the summary, Markdown, profiles, plots and
    report are written again from the rows. A run of compression, psc or ablation arms only gets its own summary
    (``compress-summary``, ``psc-summary``, ``ablation-summary``) and no slot-curve summary, plots or report. The
    rows are only read, never repaired, so a run still writing to the directory is left alone (its torn last line
    is skipped).

    >>> refresh_outputs("docs/results/bench-nq-gemma3-270m").summary["by_k"]["10"]["questions"]  # doctest: +SKIP
    100
    """
    out = Path(out_dir)
    if not (out / RESULTS).is_file():
        raise EvalError(f"no benchmark rows ({RESULTS}) in {out} to refresh from")
    settings: dict[str, object] = {}
    if (out / SETTINGS).is_file():
        try:
            settings = json.loads((out / SETTINGS).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise EvalError(f"{out / SETTINGS} is not valid JSON: {exc}") from None
    seen: set[str] = set()
    rows: list[BenchRow] = []
    for row in rows_of(read_rows(out / RESULTS)):
        key = str(row.get("key"))
        if key not in seen:  # the first answer wins, as when the run resumes
            seen.add(key)
            rows.append(row)
    return write_run_outputs(out, rows, settings, plots=plots)


def write_run_outputs(
    out_dir: str | Path, rows: Sequence[BenchRow], settings: Mapping[str, Any], *, plots: bool = True
) -> BenchOutputs:
    """What ``litm bench`` writes for a run of ``settings``' config: the compression, psc and ablation summaries
    its arms ask for (``arm_summaries``) and, unless it ran those arms only, the full summary, profiles, plots
    and report. A run of those arms only has no slot sweep, so a full summary would report a slot curve it never
    measured: its result is the last arm summary written."""
    out = Path(out_dir)
    config = settings.get("config") or {}
    written: dict[str, Path] = {}
    if config.get("compress_arms"):
        written["compression"] = write_compression_outputs(out, rows, settings)
    if config.get("psc_calls"):
        written["psc"] = write_psc_outputs(out, rows, settings)
    if config.get("ablation_only"):
        written["ablation"] = write_ablation_outputs(out, rows, settings)
    if written and any(config.get(f) for f in ("compress_only", "psc_only", "ablation_only")):
        path = list(written.values())[-1].with_suffix(".json")
        return BenchOutputs(json.loads(path.read_text(encoding="utf-8")), path, arm_summaries=written)
    result = write_outputs(out, rows, settings, plots=plots)
    result.arm_summaries = written
    return result
