"""What ``litm demo`` runs: the RAG pipeline end to end on the embedded model, five stages, each one measured.

1. **Profile**: the model's position profile. By default the committed one (the Gemma 3 270M benchmark's
   accuracy with the gold passage in each of 10 slots, ``src/litm/data/profile-gemma3-270m-nq-k10.json``,
   refreshed from ``docs/results`` by ``scripts/make_demo_data.py``); ``--probe`` runs a quick needle probe.
2. **Retrieval**: a few hundred bundled NQ-Open passages indexed with BM25 in a temporary folder, searched.
3. **Placement** by litm's default strategy (``auto``: the measured profile when there is one, else ``edges``;
   the demo prints which rule it used), the plan showing each slot's measured accuracy.
4. **The anchored prompt fitted to the budget**, counted by the model's own tokenizer, in the anchors litm gives
   the model (its measured format, else Liu et al.'s; the demo prints which rule it used).
5. **The answer** with litm's attribution, next to the same question asked in plain rank order, then one
   line of committed evidence (the benchmark's gain with its interval).

The question is the bundled one that ``scripts/pick_demo_question.py`` chose because it shows the effect
(the demo says so, and prints the average gain beside it); ``--question`` asks your own.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NotRequired, TypedDict, TypeVar

from litm.budget._limits import max_input_tokens_from
from litm.eval._datasets import NQRow, nq_rows
from litm.eval._scoring import score_output
from litm.models import Model, load_model
from litm.placement import PositionProfile
from litm.placement._auto import AutoOrder
from litm.placement._registry import DEFAULT_STRATEGY, get_strategy
from litm.probe._command import summary_lines
from litm.probe._grid import ProbeConfig
from litm.probe._outputs import write_outputs
from litm.probe._runner import run_probe
from litm.rag import Answer, Pipeline, Prepared, rank_chart
from litm.rag._defaults import DEFAULT_MODEL
from litm.retrieve import BM25, Hit, Index

__all__ = [
    "DEMO_PASSAGES",
    "DEMO_THREADS",
    "compare",
    "demo_index",
    "demo_pipeline",
    "demo_rows",
    "is_correct",
    "run_demo",
]

Echo = Callable[[str], None]
T = TypeVar("T")

#: How many bundled NQ-Open passages the demo indexes (the first rows of the bundled file).
DEMO_PASSAGES = 300
#: llama.cpp threads: greedy answers can change with the thread count, so the demo runs with the one the
#: question was picked with.
DEMO_THREADS = 1
#: The probe grids of ``--probe`` and ``--probe --quick``: lengths, depths, trials.
_PROBE = ((512, 1024, 2048), (0.0, 0.5, 1.0), 2)
_QUICK = ((256, 512), (0.0, 0.5, 1.0), 1)
_HEAD_LINES, _TAIL_LINES = 4, 6


def _data(name: str) -> Any:
    # A committed JSON file (the profile, the evidence, the pick): arbitrary JSON, read by its keys.
    return json.loads((resources.files("litm") / "data" / name).read_text(encoding="utf-8"))


class DemoPick(TypedDict):
    """The committed pick (``litm/data/demo-question.json``, by ``scripts/pick_demo_question.py``): the bundled
    row asked, the threads it was picked with, the scan's tally and the greedy margins (read by the demo)."""

    row: int
    threads: int
    tally: dict[str, int]
    margins: NotRequired[dict[str, float]]


class AskedRow(TypedDict):
    """The bundled row the demo asks: its question, accepted answers and the gold passage's chunk id."""

    question: str
    answers: list[str]
    gold: str


def demo_rows(n: int = DEMO_PASSAGES) -> list[NQRow]:
    """The bundled NQ-Open rows whose gold passages make the demo corpus."""
    return nq_rows()[:n]


def demo_index(folder: Path, rows: Sequence[NQRow]) -> Index:
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


def is_correct(answer: str, row: NQRow | AskedRow) -> bool:
    """The benchmark's rule: an accepted answer, normalised, is in the answer's normalised first line."""
    return score_output(answer, answers=row["answers"], question=row["question"]).hit


def _timed(echo: Echo, label: str, fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    out = fn()
    echo(f"  ({label}: {time.perf_counter() - start:.1f} s)")
    return out


def _committed_profile(echo: Echo) -> tuple[PositionProfile, int, str]:
    profile = PositionProfile.from_dict(_data("profile-gemma3-270m-nq-k10.json"))
    meta, budget = profile.metadata, _data("demo-evidence.json")["budget"]
    echo(
        f"stage 1/5  position profile of {profile.model}, measured and committed ({meta['source']}):\n"
        f"  {meta['what']}, {meta['questions']} questions, {meta['interval']}"
    )
    hits, n = meta["slot_hits"], meta["slot_n"]
    for i, (lo, hi) in enumerate(meta["slot_intervals"]):
        echo(f"  slot {i + 1:>2}: {hits[i]:>2}/{n[i]} = {hits[i] / n[i]:.2f} [{lo:.2f}, {hi:.2f}]")
    echo(
        "  refresh: `litm demo --probe` runs a quick needle probe instead; `litm bench --model local --k 10 "
        "--questions 100` re-measures this one (hours on 2 cores), then `python scripts/make_demo_data.py`"
    )
    return profile, int(budget["max_input_tokens"]), f"{budget['what']} ({budget['source']})"


def _probed_profile(echo: Echo, model: Model, out: Path, quick: bool, progress: bool) -> (
    tuple[PositionProfile, int, str]
):  # fmt: skip
    lengths, depths, trials = _QUICK if quick else _PROBE
    config = ProbeConfig(tasks=("needle",), lengths=lengths, depths=depths, trials=trials)
    echo(
        f"stage 1/5  probing {model.name}: needle task, lengths {', '.join(map(str, config.lengths))} tokens, "
        f"depths {', '.join(f'{d:g}' for d in config.depths)}, {config.trials} trial(s) a cell"
    )
    run = run_probe(model, config, out / "probe", progress=progress, fresh=True, command="litm demo --probe")
    outputs = write_outputs(out / "probe", run.rows, run.settings, plots=False, context_window=model.context_window)
    for line in summary_lines(outputs):
        echo(line)
    echo(f"  measured in {run.wall_s:.0f} s; profile: {outputs.profile_path}")
    budget = max_input_tokens_from(outputs.profile, context_window=model.context_window)
    return outputs.profile, budget, "recommended_max_input_tokens of the probe just run"


def _question(question: str | None) -> tuple[str, AskedRow | None, DemoPick | None]:
    """The question, its bundled row (None for the user's own), and the pick record (committed JSON)."""
    if question is not None:
        return question, None, None
    pick: DemoPick = _data("demo-question.json")
    row = demo_rows()[pick["row"]]
    asked: AskedRow = {"question": row["question"], "answers": row["answers"], "gold": f"nq-{pick['row']}#0"}
    return row["question"], asked, pick


def _retrieval(echo: Echo, answer_hits: Sequence[Hit], gold: str | None) -> None:
    for hit in answer_hits:
        mark = " *" if hit.chunk.id == gold else ""
        echo(f"  {hit.rank:>2}. {hit.score:7.3f}  {hit.chunk.id:<9} {hit.chunk.title}{mark}")
    if gold is not None:
        found = [h.rank for h in answer_hits if h.chunk.id == gold]
        echo(f"  * the gold passage ({gold}): " + (f"rank {found[0]}" if found else "not retrieved"))


def _placement(echo: Echo, prepared: Prepared, profile: PositionProfile, strategy: str, row: AskedRow | None) -> (
    None
):  # fmt: skip
    plan = prepared.plan
    chart = rank_chart(profile, len(plan), strategy)
    echo(f"\nstage 3/5  placement by {strategy}; each slot's weight is the profile's {chart.label}")
    chosen = get_strategy(strategy, profile=profile)
    if isinstance(chosen, AutoOrder):
        echo(f"  default rule used: {chosen.rule}")
    echo("  " + plan.explain().replace("\n", "\n  "))
    slot = next((s for s in plan.slots if row is not None and s.doc.id == row["gold"]), None)
    if slot is not None:
        echo(
            f"  the gold passage (rank {slot.rank}) sits in slot {slot.slot} ({slot.weight:.2f}); in rank order it "
            f"would sit in slot {slot.rank} ({chart.slot_values[slot.rank - 1]:.2f})"
        )
    echo(
        f"  over all ranks, with p(rank r) ~ 1/r: rank order {chart.expected_before:.4f}, {strategy} "
        f"{chart.expected_after:.4f} (the profile's slot accuracy, weighted by how often each rank holds the answer)"
    )


def _fitted(echo: Echo, rag: Pipeline, prepared: Prepared, model: Model, budget_source: str, full: bool) -> None:
    fitted = prepared.fit
    echo(
        f"\nstage 4/5  the anchored prompt, fitted to the budget: {prepared.budget} input tokens, {budget_source}"
    )
    anchors = rag.builder.anchors_for(prepared.plan.model)
    echo(f"  anchors: the {anchors.options.style} style; default rule used: {anchors.rule}")
    how = "exact" if fitted.exact else f"approximate: held with a {fitted.margin:.0%} margin to {fitted.upper}"
    echo(
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
        echo(f"  | {line[:150]}{'…' if len(line) > 150 else ''}")


def _verdict(answer: Answer, row: AskedRow | None) -> str:
    if row is None:
        return "(your own question: no accepted answers to check against)"
    ok = is_correct(answer.text, row)
    return f"-> {'correct' if ok else 'not correct'} (accepted: {' / '.join(row['answers'])})"


def _references(echo: Echo, answer: Answer) -> None:
    for ref in answer.citations:
        echo(f"  cited by the model: [{ref.id}] slot {ref.slot} (rank {ref.rank}), {ref.where()}")
    if not answer.citations:
        echo("  the model wrote no [id] citations (a base model); litm's attribution, not the model's:")
        for ref in answer.attribution:
            echo(
                f"    the answer's text is in {ref.id} (slot {ref.slot}, rank {ref.rank}), {ref.source} chars "
                f"{ref.span[0]}-{ref.span[1]}"
                if ref.span
                else f"    {ref.id}"
            )
        if not answer.attribution:
            echo("    the answer's text is in none of the placed documents")


def _answers(echo: Echo, rag: Pipeline, prepared: Prepared, model: Model, strategy: str, row: AskedRow | None) -> (
    None
):  # fmt: skip
    placed, plain = compare(rag, prepared)
    echo(f"\nstage 5/5  the answer ({model.name}, {placed.completion.latency_s:.1f} s)")
    echo(f"  placed by {strategy}: {placed.text or '(empty)'} {_verdict(placed, row)}")
    _references(echo, placed)
    echo(
        f"  the same question in plain rank order ({plain.completion.latency_s:.1f} s): "
        f"{plain.text or '(empty)'} {_verdict(plain, row)}"
    )


def _evidence(echo: Echo, pick: DemoPick | None) -> None:
    gain = _data("demo-evidence.json")["gain"]
    lo, hi = gain["ci"]
    placed = gain["expected_accuracy"][gain["strategy"]]
    if pick is not None:
        t = pick["tally"]
        echo(
            f"\nthis question was chosen because it shows the effect: scripts/pick_demo_question.py asked "
            f"{t['scanned']} bundled questions both ways ({pick['threads']} thread); placement alone right "
            f"{t['placed_only']}, rank order alone right {t['rank_only']}, both {t['both']}, neither {t['neither']}. "
            "One question shows what placement can do, not how often it helps; that is the average below."
        )
        if margins := pick.get("margins"):
            echo(
                f"both answers are clear greedy decisions (a near tie can flip on another CPU): the placed "
                f"answer's first token leads the runner-up by {margins['placed']:.2f} nats, and in rank order the "
                f"likeliest first token leads the right answer's by {margins['rank_order']:.2f}"
            )
    echo(
        f"on average the gain is {gain['gain']:+.3f} [{lo:+.3f}, {hi:+.3f}] ({gain['interval']}): expected accuracy "
        f"{gain['expected_accuracy']['none']:.4f} in rank order -> {placed:.4f} with "
        f"{gain['strategy']}, {gain['questions']} NQ-Open questions, k = {gain['k']}, {gain['model']}, "
        f"{gain['weighting'].split(':')[0]} ({gain['source']})"
    )


def run_demo(
    echo: Echo,
    *,
    model: str = DEFAULT_MODEL,
    question: str | None = None,
    strategy: str = DEFAULT_STRATEGY,
    probe: bool = False,
    quick: bool = False,
    answer: bool = True,
    show_prompt: bool = False,
    out: Path = Path("litm-out/demo"),
    progress: bool = True,
    threads: int = DEMO_THREADS,
) -> None:
    """The RAG pipeline in five measured stages on ``model``: profile (the committed one, or a quick needle
    probe written under ``out`` with ``probe``), retrieve, place, fit, and (with ``answer``) answer. Each
    stage's lines go to ``echo`` as it finishes."""
    began = time.perf_counter()
    llm = load_model(model, **({"n_threads": threads} if model.startswith("local") else {}))
    if probe:
        profile, budget, budget_source = _probed_profile(echo, llm, out, quick, progress)
    else:
        profile, budget, budget_source = _committed_profile(echo)
    if llm.name != profile.model:
        echo(f"  note: this profile was measured on {profile.model}, not on {llm.name}")
    text, row, pick = _question(question)
    rows = demo_rows()
    with tempfile.TemporaryDirectory(prefix="litm-demo-") as tmp:
        echo(f"\nstage 2/5  retrieval: {len(rows)} bundled NQ-Open passages, BM25 index in a temporary folder")
        index = _timed(echo, "indexed", lambda: demo_index(Path(tmp) / "index", rows))
        rag = demo_pipeline(index, llm, profile, budget, strategy)
        echo(f"  question: {text}")
        hits = _timed(echo, "searched", lambda: rag.retrieve(text))
        _retrieval(echo, hits, row["gold"] if row else None)
        prepared = rag.prepare(text, hits=hits)
        _placement(echo, prepared, profile, strategy, row)
        _fitted(echo, rag, prepared, llm, budget_source, show_prompt)
        if not answer:
            echo("\nstage 5/5  skipped (--no-answer)")
        else:
            _answers(echo, rag, prepared, llm, strategy, row)
    _evidence(echo, pick)
    echo(f"\ndemo finished in {time.perf_counter() - began:.0f} s")
