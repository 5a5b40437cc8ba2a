"""``litm demo``: the main job end to end on the embedded model: measure -> place -> answer.

1. Probe the embedded model (Gemma 3 270M, llama.cpp, offline) on a small needle grid and write the
   report, plots and position profile to ``--out`` (``litm-out/demo``).
2. Place the bundled NQ-Open sample (8 retrieved passages, ranked by score) by the measured profile
   and print the plan next to plain rank order.
3. Ask the model the sample question with the placed passages (a completion prompt) and print its answer.

``--quick`` runs a tiny grid (seconds); ``--no-probe`` uses the built-in pyramid profile (or ``--profile``);
``--no-answer`` skips the model call (the placement part needs no model at all).
"""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

import typer

from litm.cli import app
from litm.placement import place
from litm.placement.profile import PositionProfile
from litm.prompt import render_documents
from litm.util.records import parse_records

# The demo grid: a few minutes on 2 CPU cores with prefix reuse; --quick: seconds (used by the tests).
_FULL = {"lengths": (512, 1024, 2048), "depths": (0.0, 0.25, 0.5, 0.75, 1.0), "trials": 4}
_QUICK = {"lengths": (256, 512), "depths": (0.0, 0.5, 1.0), "trials": 2}


def _sample() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = resources.files("litm") / "data"
    question = json.loads((data / "sample_question.json").read_text(encoding="utf-8"))
    docs = parse_records((data / "sample_docs.jsonl").read_text(encoding="utf-8"), source="sample_docs.jsonl")
    return question, docs


def _load(threads: int | None) -> Any:
    from litm.models import load_model

    return load_model("local", **({"n_threads": threads} if threads else {}))


def _probe(out: Path, quick: bool, progress: bool, threads: int | None) -> PositionProfile:
    from litm.cli.probe import _echo_summary
    from litm.probe.grid import ProbeConfig
    from litm.probe.outputs import write_outputs
    from litm.probe.runner import run_probe

    grid = _QUICK if quick else _FULL
    config = ProbeConfig(tasks=("needle",), **grid)  # type: ignore[arg-type]
    n = len(config.lengths) * len(config.depths) * config.trials
    typer.echo(
        f"step 1/3: probing the embedded model: needle task, lengths {', '.join(map(str, config.lengths))} tokens, "
        f"depths {', '.join(f'{d:g}' for d in config.depths)}, {config.trials} trials a cell ({n} calls + "
        f"{config.trials} closed-book)"
    )
    model = _load(threads)
    run = run_probe(model, config, out / "probe", progress=progress, fresh=True, command="litm demo")
    typer.echo(
        f"measured in {run.wall_s:.0f} s; {run.prefill_tokens} of {run.input_tokens} prompt tokens evaluated "
        "(the rest reused from the KV cache by the prefix-sharing schedule)"
    )
    outputs = write_outputs(out / "probe", run.rows, run.settings, context_window=model.context_window)
    _echo_summary(outputs)
    typer.echo(f"report: {outputs.report}\nprofile: {outputs.profile_path}\n")
    return outputs.profile


def _answer(question: dict[str, Any], placed: list[dict[str, Any]], threads: int | None) -> None:
    from litm.eval.scoring import normalize
    from litm.probe.layouts import LAYOUTS

    prompt = LAYOUTS["plain"].render(
        document=render_documents(placed, "liu"),
        question=f"Question: {question['question']}",
        instruction="Write a high-quality answer for the given question using only the provided search results "
        "(some of which might be irrelevant).",
        doc_label="Search results:",
    )
    model = _load(threads)
    start = time.perf_counter()
    done = model.complete(prompt, max_tokens=24)
    answer = done.text.strip().split("\n", 1)[0].strip() if done.text.strip() else ""
    expected = [str(a) for a in question.get("answers", [])]
    correct = any(normalize(a) in normalize(answer) for a in expected if normalize(a))
    took = time.perf_counter() - start
    typer.echo(f"step 3/3: asking {model.name} ({done.input_tokens} prompt tokens, {took:.1f} s)")
    typer.echo(f"answer: {answer or '(empty)'}")
    typer.echo(f"expected: {', '.join(expected)} -> {'correct' if correct else 'not matched'}")


@app.command("demo")
def demo_cmd(
    quick: bool = typer.Option(False, "--quick", help="A tiny probe grid (seconds instead of minutes)."),
    no_probe: bool = typer.Option(False, "--no-probe", help="Skip the probe; use --profile or the pyramid profile."),
    no_answer: bool = typer.Option(False, "--no-answer", help="Skip asking the model the sample question."),
    profile: Path | None = typer.Option(None, "--profile", help="A position profile to place by (skips the probe)."),
    out: Path = typer.Option(Path("litm-out/demo"), "--out", "-o", help="Where the probe writes its report."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the probe's progress bar."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="llama.cpp threads (default: all cores)."),
) -> None:
    """Measure the embedded model's dead zone, place a retrieved sample by it, and ask the question."""
    question, docs = _sample()
    if profile is not None:
        prof, source = PositionProfile.load(profile), f"profile {profile}"
    elif no_probe:
        prof, source = PositionProfile.pyramid(), "the built-in pyramid profile (no probe run)"
    else:
        prof, source = _probe(out, quick, progress, threads), "the measured profile"
    weights = ", ".join(f"{x:g}: {w:.2f}" for x, w in prof.points)
    typer.echo(f"step 2/3: placing by {source} (depth: weight = {weights})")
    typer.echo(f"question: {question['question']}")
    typer.echo(f"{len(docs)} retrieved documents, ranked by score; the gold passage is marked *\n")
    # Both plans report slot weights from the same profile, so the tables compare like with like.
    plans = [place(docs, name, rank_by="score", profile=prof) for name in ("none", "profile")]
    for plan in plans:
        typer.echo(plan.explain())
        gold = next(s for s in plan.slots if s.doc.metadata.get("gold"))
        typer.echo(f"* gold passage {gold.doc.id} (rank {gold.rank}) sits in slot {gold.slot}/{len(plan)}\n")
    if not no_answer:
        _answer(question, list(plans[-1].items), threads)
