"""``litm demo``: the RAG pipeline end to end on the embedded model, five stages, each one measured.

The stages, the bundled corpus, question and evidence are :func:`litm.probe._demo.run_demo`'s; this module
parses the options and prints.
"""

from __future__ import annotations

from pathlib import Path

import typer

from litm.cli import app
from litm.cli._options import check_strategy
from litm.placement._registry import DEFAULT_STRATEGY
from litm.probe._demo import DEMO_THREADS, run_demo
from litm.rag._defaults import DEFAULT_MODEL


@app.command("demo")
def demo_cmd(
    probe: bool = typer.Option(False, "--probe", help="Measure the profile with a quick needle probe first."),
    quick: bool = typer.Option(False, "--quick", help="With --probe: a tiny grid (seconds; for tests)."),
    question: str | None = typer.Option(None, "--question", "-q", help="Ask your own question of the sample."),
    model_spec: str = typer.Option(DEFAULT_MODEL, "--model", "-m", help="Model spec (default: the embedded one)."),
    strategy: str = typer.Option(DEFAULT_STRATEGY, "--strategy", "-s", callback=check_strategy, help="Placement."),
    no_answer: bool = typer.Option(False, "--no-answer", help="Stop after stage 4 (no model call)."),
    show_prompt: bool = typer.Option(False, "--show-prompt", help="Print the whole prompt."),
    out: Path = typer.Option(Path("litm-out/demo"), "--out", "-o", help="Where --probe writes its report."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="The probe's progress bar."),
    threads: int = typer.Option(DEMO_THREADS, "--threads", min=1, help="llama.cpp threads (local models)."),
) -> None:
    """The RAG pipeline in five measured stages on the embedded model: profile, retrieve, place, fit, answer."""
    run_demo(
        typer.echo, model=model_spec, question=question, strategy=strategy, probe=probe, quick=quick,
        answer=not no_answer, show_prompt=show_prompt, out=out, progress=progress, threads=threads,
    )  # fmt: skip
