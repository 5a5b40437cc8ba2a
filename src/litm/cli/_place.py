"""``litm place``: reorder ranked documents (JSON Lines in, JSON Lines out)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._input import load_input
from litm.cli._options import DedupOpt, RankByOpt, check_strategy
from litm.placement import PlacementOptions, PositionProfile, place
from litm.placement._registry import DEFAULT_STRATEGY
from litm.placement._strategy import DEFAULT_MIN_DOCS
from litm.util._files import atomic_write


@app.command("place")
def place_cmd(
    path: Path | None = typer.Argument(None, help="JSON Lines or JSON array of documents; '-' or omitted: stdin."),
    strategy: str = typer.Option(
        DEFAULT_STRATEGY, "--strategy", "-s", callback=check_strategy, help="Placement strategy (a registered name)."
    ),
    rank_by: RankByOpt = typer.Option(RankByOpt.input, "--rank-by", help="Trust input order, or sort by score."),
    lower_is_better: bool = typer.Option(False, "--lower-is-better", help="Scores are distances (lower = better)."),
    top_k: int | None = typer.Option(None, "--top-k", min=0, help="Keep only the K best-ranked documents."),
    dedup: DedupOpt | None = typer.Option(None, "--dedup", help="Merge duplicates by id or normalised content."),
    min_docs: int | None = typer.Option(
        None,
        "--min-docs",
        min=0,
        help=f"Below this many documents keep the rank order [default: the strategy's; {DEFAULT_MIN_DOCS}, "
        "none for langchain].",
    ),
    profile: Path | None = typer.Option(None, "--profile", help="Position profile JSON (drives 'profile')."),
    explain: bool = typer.Option(False, "--explain", help="Print the plan as a table on stderr."),
    plan_json: Path | None = typer.Option(None, "--plan-json", help="Also write the plan as JSON to this file."),
) -> None:
    """Place documents where the model looks; writes the input records, reordered, as JSON Lines.

    Example: litm place --strategy pyramid --rank-by score docs.jsonl --explain
    """
    records = load_input(path)
    prof = PositionProfile.load(profile) if profile is not None else None
    options = PlacementOptions(
        strategy=strategy, rank_by=rank_by.value, higher_is_better=not lower_is_better,
        dedup=dedup.value if dedup else None, top_k=top_k, min_docs=min_docs, profile=prof,
    )  # fmt: skip
    plan = place(records, placement=options)
    # The plan file first, whole or not at all: a path that cannot be written fails before anything is printed.
    if plan_json is not None:
        atomic_write(plan_json, plan.to_json(indent=2) + "\n")
    out = sys.stdout
    for item in plan.items:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
    if explain:
        typer.echo(plan.explain(), err=True)
