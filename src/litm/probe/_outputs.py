"""Turn a run's rows into its files: ``profile.json``, ``summary.json``, PNG plots and ``report.html``.

Example:
    >>> out = write_outputs("out/", rows, settings)  # doctest: +SKIP
    >>> out.profile.metadata["recommended_max_input_tokens"]  # doctest: +SKIP
    2048
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litm.errors import ProbeError
from litm.placement._profile import PositionProfile
from litm.probe._analysis import DEFAULT_ALPHA, DEFAULT_RATIO, TaskAnalysis, analyze
from litm.probe._export import summary, to_profile
from litm.probe._rows import rows_of

__all__ = ["ProbeOutputs", "write_outputs"]


@dataclass
class ProbeOutputs:
    """The analyses and the files written for them."""

    analyses: dict[str, TaskAnalysis]
    profile: PositionProfile
    profile_path: Path
    summary_path: Path
    plots: list[Path] = field(default_factory=list)
    report: Path | None = None


def write_outputs(
    out_dir: str | Path,
    rows: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    *,
    plots: bool = True,
    report: bool = True,
    context_window: int | None = None,
    ratio: float = DEFAULT_RATIO,
    alpha: float = DEFAULT_ALPHA,
    extra: Sequence[str] = (),
) -> ProbeOutputs:
    """Analyse ``rows`` (a run's, or read back from its ``results.jsonl``) and write the profile (of the first
    task), summary, plots and report."""
    out = Path(out_dir)
    rows = rows_of(rows)
    config = settings.get("config") or {}
    tasks = [t for t in config.get("tasks", []) if any(r.get("task") == t and r.get("kind") == "trial" for r in rows)]
    analyses = analyze(rows, tasks=tasks or None, alpha=alpha, ratio=ratio)
    primary = next((a for a in analyses.values() if a.lengths), None)
    if primary is None:
        raise ProbeError("no finished trials to analyse")
    model = settings.get("model") or {}
    profile = to_profile(
        primary,
        model=model.get("name"),
        settings={
            "model_spec": model.get("spec"),
            "mode": model.get("mode"),
            "config": config,
            "corpus": settings.get("corpus"),
            "command": settings.get("command"),
        },
        context_window=context_window,
        others=analyses,
    )
    profile_path = out / "profile.json"
    profile.save(profile_path)
    summary_path = out / "summary.json"
    summary_path.write_text(
        json.dumps({t: summary(a) for t, a in analyses.items()}, indent=2, default=str) + "\n", encoding="utf-8"
    )
    result = ProbeOutputs(analyses, profile, profile_path, summary_path)
    if plots:
        from litm.probe._plots import write_plots

        result.plots = write_plots(analyses, out, model=str(model.get("name", "")))
    if report:
        from litm.probe._report import write_report

        result.report = write_report(
            out, analyses, rows, settings, plots=result.plots, context_window=context_window, extra=extra
        )
    return result
