"""``litm demo``: the RAG pipeline end to end on the embedded model, five stages, each one measured.

1. **Profile**: the model's position profile. By default the committed one (the Gemma 3 270M benchmark's
   accuracy with the gold passage in each of 10 slots, ``src/litm/data/profile-gemma3-270m-nq-k10.json``,
   refreshed from ``docs/results`` by ``scripts/make_demo_data.py``); ``--probe`` runs a quick needle probe.
2. **Retrieval**: a few hundred bundled NQ-Open passages indexed with BM25 in a temporary folder, searched.
3. **Placement** by litm's default strategy (``auto``: the measured profile when there is one, else ``edges``;
   the demo prints which rule it used), the plan showing each slot's measured accuracy.
4. **The anchored prompt fitted to the budget**, counted by the model's own tokenizer.
5. **The answer** with litm's attribution, next to the same question asked in plain rank order, then one
   line of committed evidence (the benchmark's gain with its interval).

The question is the bundled one that ``scripts/pick_demo_question.py`` chose because it shows the effect
(the demo says so, and prints the average gain beside it); ``--question`` asks your own.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import typer

from litm.cli import app
from litm.cli._options import check_strategy
from litm.eval._datasets import nq_rows
from litm.eval._scoring import score_output
from litm.models import Model, load_model
from litm.placement import DEFAULT_STRATEGY, AutoOrder, PositionProfile, get_strategy
from litm.rag import Answer, Pipeline, Prepared, rank_chart
from litm.rag._defaults import DEFAULT_MODEL
from litm.retrieve import BM25, Index

__all__ = ["DEMO_PASSAGES", "DEMO_THREADS", "compare", "demo_index", "demo_pipeline", "demo_rows", "is_correct"]

#: How many bundled NQ-Open passages the demo indexes (the first rows of the bundled file).
DEMO_PASSAGES = 300
#: llama.cpp threads: greedy answers can change with the thread count, so the demo runs with the one the
#: question was picked with.
DEMO_THREADS = 1
_PROBE = {"lengths": (512, 1024, 2048), "depths": (0.0, 0.5, 1.0), "trials": 2}
_QUICK = {"lengths": (256, 512), "depths": (0.0, 0.5, 1.0), "trials": 1}
_HEAD_LINES, _TAIL_LINES = 4, 6


def _data(name: str) -> Any:
    return json.loads((resources.files("litm") / "data" / name).read_text(encoding="utf-8"))


def demo_rows(n: int = DEMO_PASSAGES) -> list[dict[str, Any]]:
    """The bundled NQ-Open rows whose gold passages make the demo corpus."""
    return nq_rows()[:n]


def demo_index(folder: Path, rows: Sequence[Mapping[str, Any]]) -> Index:
    """A BM25-only index of the rows' gold passages (ids ``nq-I``), built in ``folder``."""
    index = Index.create(folder, dense=False)
    index.add_texts(
        {"id": f"nq-{i}", "title": r["ctxs"][0]["title"], "text": r["ctxs"][0]["text"],
         "source": f"nq-open-oracle.jsonl.gz#{i}"}
        for i, r in enumerate(rows)
    )  # fmt: skip
    return index


def demo_pipeline(index: Index, model: Model | str, profile: PositionProfile, budget: int, strategy: str) -> Pipeline:
    """The demo's pipeline: BM25 over ``index``, litm's defaults otherwise (k, answer length, stop)."""
    return Pipeline(BM25(index), strategy, budget=budget, model=model, profile=profile)


def compare(rag: Pipeline, prepared: Prepared) -> tuple[Answer, Answer]:
    """The prepared question answered as placed, and the same retrieval answered in plain rank order."""
    return rag.generate(prepared), rag.replace(strategy="none").ask(prepared.question, hits=prepared.hits)


def is_correct(answer: str, row: Mapping[str, Any]) -> bool:
    """The benchmark's rule: an accepted answer, normalised, is in the answer's normalised first line."""
    return score_output(answer, answers=row["answers"], question=row["question"]).hit


def _timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    out = fn()
    typer.echo(f"  ({label}: {time.perf_counter() - start:.1f} s)")
    return out


def _committed_profile() -> tuple[PositionProfile, int, str]:
    profile = PositionProfile.from_dict(_data("profile-gemma3-270m-nq-k10.json"))
    meta, budget = profile.metadata, _data("demo-evidence.json")["budget"]
    typer.echo(
        f"stage 1/5  position profile of {profile.model}, measured and committed ({meta['source']}):\n"
        f"  {meta['what']}, {meta['questions']} questions, {meta['interval']}"
    )
    hits, n = meta["slot_hits"], meta["slot_n"]
    for i, (lo, hi) in enumerate(meta["slot_intervals"]):
        typer.echo(f"  slot {i + 1:>2}: {hits[i]:>2}/{n[i]} = {hits[i] / n[i]:.2f} [{lo:.2f}, {hi:.2f}]")
    typer.echo(
        "  refresh: `litm demo --probe` runs a quick needle probe instead; `litm bench --model local --k 10 "
        "--questions 100` re-measures this one (hours on 2 cores), then `python scripts/make_demo_data.py`"
    )
    return profile, int(budget["max_input_tokens"]), f"{budget['what']} ({budget['source']})"


def _probed_profile(model: Model, out: Path, quick: bool, progress: bool) -> tuple[PositionProfile, int, str]:
    from litm.cli._probe import _echo_summary
    from litm.probe import ProbeConfig, run_probe, write_outputs

    grid = _QUICK if quick else _PROBE
    config = ProbeConfig(tasks=("needle",), **grid)  # type: ignore[arg-type]
    typer.echo(
        f"stage 1/5  probing {model.name}: needle task, lengths {', '.join(map(str, config.lengths))} tokens, "
        f"depths {', '.join(f'{d:g}' for d in config.depths)}, {config.trials} trial(s) a cell"
    )
    run = run_probe(model, config, out / "probe", progress=progress, fresh=True, command="litm demo --probe")
    outputs = write_outputs(out / "probe", run.rows, run.settings, plots=False, context_window=model.context_window)
    _echo_summary(outputs)
    typer.echo(f"  measured in {run.wall_s:.0f} s; profile: {outputs.profile_path}")
    from litm.budget import max_input_tokens_from

    budget = max_input_tokens_from(outputs.profile, context_window=model.context_window)
    return outputs.profile, budget, "recommended_max_input_tokens of the probe just run"


def _question(question: str | None) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """The question, its bundled row (None for the user's own), and the pick record."""
    if question is not None:
        return question, None, None
    pick = _data("demo-question.json")
    row = demo_rows()[pick["row"]]
    return row["question"], {**row, "gold": f"nq-{pick['row']}#0"}, pick


def _retrieval(answer_hits: Sequence[Any], gold: str | None) -> None:
    for hit in answer_hits:
        mark = " *" if hit.chunk.id == gold else ""
        typer.echo(f"  {hit.rank:>2}. {hit.score:7.3f}  {hit.chunk.id:<9} {hit.chunk.title}{mark}")
    if gold is not None:
        found = [h.rank for h in answer_hits if h.chunk.id == gold]
        typer.echo(f"  * the gold passage ({gold}): " + (f"rank {found[0]}" if found else "not retrieved"))


def _placement(prepared: Prepared, profile: PositionProfile, strategy: str, row: Mapping[str, Any] | None) -> None:
    plan = prepared.plan
    chart = rank_chart(profile, len(plan), strategy)
    typer.echo(f"\nstage 3/5  placement by {strategy}; each slot's weight is the profile's {chart.label}")
    chosen = get_strategy(strategy, profile=profile)
    if isinstance(chosen, AutoOrder):
        typer.echo(f"  default rule used: {chosen.rule}")
    typer.echo("  " + plan.explain().replace("\n", "\n  "))
    slot = next((s for s in plan.slots if row is not None and s.doc.id == row["gold"]), None)
    if slot is not None:
        typer.echo(
            f"  the gold passage (rank {slot.rank}) sits in slot {slot.slot} ({slot.weight:.2f}); in rank order it "
            f"would sit in slot {slot.rank} ({chart.slot_values[slot.rank - 1]:.2f})"
        )
    typer.echo(
        f"  over all ranks, with p(rank r) ~ 1/r: rank order {chart.expected_before:.4f}, {strategy} "
        f"{chart.expected_after:.4f} (the profile's slot accuracy, weighted by how often each rank holds the answer)"
    )


def _fitted(prepared: Prepared, model: Model, budget_source: str, full: bool) -> None:
    fitted = prepared.fit
    typer.echo(
        f"\nstage 4/5  the anchored prompt, fitted to the budget: {prepared.budget} input tokens, {budget_source}"
    )
    how = "exact" if fitted.exact else f"approximate: held with a {fitted.margin:.0%} margin to {fitted.upper}"
    typer.echo(
        f"  {fitted.tokens} tokens counted by {model.name}'s own tokenizer ({model.tokenizer.name}, {how}), "
        f"{fitted.budget} allowed after the answer's reserve; {len(fitted.kept)} of {len(prepared.hits)} "
        f"documents kept" + (f", dropped {', '.join(d.id for d in fitted.dropped)}" if fitted.dropped else "")
    )
    lines = prepared.prompt.text.splitlines()
    shown = lines
    if not full and len(lines) > _HEAD_LINES + _TAIL_LINES:
        skipped = len(lines) - _HEAD_LINES - _TAIL_LINES
        shown = [*lines[:_HEAD_LINES], f"[... {skipped} lines; --show-prompt prints them ...]", *lines[-_TAIL_LINES:]]
    for line in shown:
        typer.echo(f"  | {line[:150]}{'…' if len(line) > 150 else ''}")


def _verdict(answer: Answer, row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "(your own question: no accepted answers to check against)"
    ok = is_correct(answer.text, row)
    return f"-> {'correct' if ok else 'not correct'} (accepted: {' / '.join(row['answers'])})"


def _references(answer: Answer) -> None:
    for ref in answer.citations:
        typer.echo(f"  cited by the model: [{ref.id}] slot {ref.slot} (rank {ref.rank}), {ref.where()}")
    if not answer.citations:
        typer.echo("  the model wrote no [id] citations (a base model); litm's attribution, not the model's:")
        for ref in answer.attribution:
            typer.echo(
                f"    the answer's text is in {ref.id} (slot {ref.slot}, rank {ref.rank}), {ref.source} chars "
                f"{ref.span[0]}-{ref.span[1]}"
                if ref.span
                else f"    {ref.id}"
            )
        if not answer.attribution:
            typer.echo("    the answer's text is in none of the placed documents")


def _answers(rag: Pipeline, prepared: Prepared, model: Model, strategy: str, row: Mapping[str, Any] | None) -> None:
    placed, plain = compare(rag, prepared)
    typer.echo(f"\nstage 5/5  the answer ({model.name}, {placed.completion.latency_s:.1f} s)")
    typer.echo(f"  placed by {strategy}: {placed.text or '(empty)'} {_verdict(placed, row)}")
    _references(placed)
    typer.echo(
        f"  the same question in plain rank order ({plain.completion.latency_s:.1f} s): "
        f"{plain.text or '(empty)'} {_verdict(plain, row)}"
    )


def _evidence(pick: Mapping[str, Any] | None) -> None:
    gain = _data("demo-evidence.json")["gain"]
    lo, hi = gain["ci"]
    placed = gain["expected_accuracy"][gain["strategy"]]
    if pick is not None:
        t = pick["tally"]
        typer.echo(
            f"\nthis question was chosen because it shows the effect: scripts/pick_demo_question.py asked "
            f"{t['scanned']} bundled questions both ways ({pick['threads']} thread); placement alone right "
            f"{t['placed_only']}, rank order alone right {t['rank_only']}, both {t['both']}, neither {t['neither']}. "
            "One question shows what placement can do, not how often it helps; that is the average below."
        )
        if margins := pick.get("margins"):
            typer.echo(
                f"both answers are clear greedy decisions (a near tie can flip on another CPU): the placed "
                f"answer's first token leads the runner-up by {margins['placed']:.2f} nats, and in rank order the "
                f"likeliest first token leads the right answer's by {margins['rank_order']:.2f}"
            )
    typer.echo(
        f"on average the gain is {gain['gain']:+.3f} [{lo:+.3f}, {hi:+.3f}] ({gain['interval']}): expected accuracy "
        f"{gain['expected_accuracy']['none']:.4f} in rank order -> {placed:.4f} with "
        f"{gain['strategy']}, {gain['questions']} NQ-Open questions, k = {gain['k']}, {gain['model']}, "
        f"{gain['weighting'].split(':')[0]} ({gain['source']})"
    )


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
    began = time.perf_counter()
    model = load_model(model_spec, **({"n_threads": threads} if model_spec.startswith("local") else {}))
    if probe:
        profile, budget, budget_source = _probed_profile(model, out, quick, progress)
    else:
        profile, budget, budget_source = _committed_profile()
    if model.name != profile.model:
        typer.echo(f"  note: this profile was measured on {profile.model}, not on {model.name}")
    text, row, pick = _question(question)
    rows = demo_rows()
    with tempfile.TemporaryDirectory(prefix="litm-demo-") as tmp:
        typer.echo(f"\nstage 2/5  retrieval: {len(rows)} bundled NQ-Open passages, BM25 index in a temporary folder")
        index = _timed("indexed", lambda: demo_index(Path(tmp) / "index", rows))
        rag = demo_pipeline(index, model, profile, budget, strategy)
        typer.echo(f"  question: {text}")
        hits = _timed("searched", lambda: rag.retrieve(text))
        _retrieval(hits, row["gold"] if row else None)
        prepared = rag.prepare(text, hits=hits)
        _placement(prepared, profile, strategy, row)
        _fitted(prepared, model, budget_source, show_prompt)
        if no_answer:
            typer.echo("\nstage 5/5  skipped (--no-answer)")
        else:
            _answers(rag, prepared, model, strategy, row)
    _evidence(pick)
    typer.echo(f"\ndemo finished in {time.perf_counter() - began:.0f} s")
