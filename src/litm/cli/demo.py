"""``litm demo``: the main job on the bundled sample (grows into measure -> place -> answer)."""

from __future__ import annotations

import json
from importlib import resources

import typer

from litm.cli import app
from litm.placement import place
from litm.records import parse_records


def _sample() -> tuple[dict[str, object], list[dict[str, object]]]:
    data = resources.files("litm") / "data"
    question = json.loads((data / "sample_question.json").read_text(encoding="utf-8"))
    docs = parse_records((data / "sample_docs.jsonl").read_text(encoding="utf-8"), source="sample_docs.jsonl")
    return question, docs


@app.command("demo")
def demo_cmd(
    strategy: str = typer.Option("pyramid", "--strategy", "-s", help="Placement strategy to show."),
) -> None:
    """Place a bundled sample of retrieved NQ-Open documents and print the plan."""
    question, docs = _sample()
    typer.echo(f"question: {question['question']}")
    typer.echo(f"{len(docs)} retrieved documents, ranked by score; the gold passage is marked *\n")
    for name in ("none", strategy):
        plan = place(docs, strategy=name, rank_by="score")
        typer.echo(plan.explain())
        gold = next(s for s in plan.slots if s.doc.metadata.get("gold"))
        typer.echo(f"* gold passage {gold.doc.id} (rank {gold.rank}) sits in slot {gold.slot}/{len(plan)}\n")
