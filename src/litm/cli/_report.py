"""``litm report DIR``: bundle probe and benchmark results under DIR into one offline HTML page.

litm report docs/results/bench-nq-gemma3-270m --include docs/results/probe-gemma3-270m
litm report litm-out/bench --refresh      # re-analyse bench.jsonl first (new litm, copied run)
"""

from __future__ import annotations

from pathlib import Path

import typer

from litm.cli import app


@app.command("report")
def report_cmd(
    directory: Path = typer.Argument(..., help="A directory with benchmark and/or probe results."),
    include: list[Path] = typer.Option([], "--include", "-i", help="More result directories to bundle (probe runs)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output HTML file (default DIR/report.html)."),
    title: str | None = typer.Option(None, "--title", help="Page title."),
    refresh: bool = typer.Option(
        False, "--refresh", help="First re-analyse DIR's benchmark rows (summary, Markdown, plots); no model needed."
    ),
) -> None:
    """Write one self-contained HTML page (plots inlined, no scripts, no CDN) from result directories."""
    from litm.bench._report import write_report

    if refresh:
        from litm.bench._outputs import SUMMARY, refresh_outputs

        summary = refresh_outputs(directory).summary_path
        typer.echo(f"summary: {summary} and {summary.with_suffix('.md').name}")
        if summary.name != SUMMARY and not include:
            # A run of compression, psc or ablation arms only: its Markdown summary is the whole result.
            typer.echo("no HTML report: the run measured arms only, not the slot curve a report shows")
            return
    path = write_report(directory, include=include, out=out, title=title)
    typer.echo(f"report: {path}")
