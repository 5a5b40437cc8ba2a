"""``litm rag INDEX "question"``: retrieve, place, assemble, gate and answer, then print the answer, where it
came from and the plan (:class:`litm.rag.Pipeline`; the same defaults as Python)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._options import BackendOpt, RetrieverOpt, budget_flags, check_strategy
from litm.consistency import PscAnswer
from litm.consistency import ask as ask_psc
from litm.models import load_model
from litm.rag import Answer, Pipeline, Reference
from litm.rag._defaults import DEFAULT_ANSWER_TOKENS, DEFAULT_K, DEFAULT_MODEL, DEFAULT_STRATEGY


def _support(ref: Reference) -> str:
    if ref.span is None:
        return "the answer is in it"
    where = f"characters {ref.span[0]}-{ref.span[1]} of {ref.source or ref.id}"
    if ref.score is None or ref.score >= 1.0:
        return f"the answer is at {where}"
    # A match by content words: the span says the same in other words, which the score qualifies.
    return f"{where} hold {ref.score:.0%} of the answer's content words"


def _references(answer: Answer) -> list[str]:
    if answer.citations:
        lines = ["citations (the model's own, mapped back through the anchors):"]
        lines += [f"  [{r.id}] {r.where()}  slot {r.slot}, rank {r.rank}" for r in answer.citations]
    elif answer.attribution:
        lines = ["attribution (litm's, not the model's citation: the placed documents that support the answer):"]
        lines += [f"  {r.id} {r.where()}  slot {r.slot}, rank {r.rank}; {_support(r)}" for r in answer.attribution]
    else:
        lines = ["no citations, and no placed document holds the answer, verbatim or in other words"]
    if answer.unknown_citations:
        lines.append(f"cited ids that match no placed document: {', '.join(answer.unknown_citations)}")
    return lines


def _summary(answer: Answer, explain: bool) -> list[str]:
    fit, done = answer.fit, answer.completion
    exact = "exact" if fit.exact else f"approximate, held with a {fit.margin:.0%} margin to {fit.upper}"
    slots = "  ".join(f"{s.slot}:{s.doc.id}(rank {s.rank})" for s in answer.plan.slots)
    lines = [f"plan ({answer.strategy}): {slots}"]
    if explain:
        lines += ["", "retrieved (" + answer.retriever + "):"]
        lines += [f"  {h.rank:>3}. {h.score:.4f} {h.chunk.id} {h.chunk.source} [{h.chunk.start}:{h.chunk.end}]"
                  for h in answer.hits]  # fmt: skip
        lines += ["", answer.plan.explain()]
    lines.append(
        f"tokens: prompt {fit.tokens} ({exact}), budget {answer.budget} ({answer.prepared.budget_source}) with "
        f"{fit.budget} after the answer's reserve; {len(fit.kept)} of {len(answer.hits)} documents kept"
        + (f", dropped {', '.join(d.id for d in fit.dropped)}" if fit.dropped else "")
    )
    squeezed = answer.prepared.compression or fit.compression
    if squeezed is not None:
        lines.append(squeezed.summary())
    lines.append(f"model: {answer.model}, {done.input_tokens} in / {done.output_tokens} out"
                 + (", sampled" if done.sampled else ", greedy"))  # fmt: skip
    lines.append(f"cost: {answer.cost_usd or 'unknown'} ({answer.cost_note})")
    if explain:
        lines.append("timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in answer.timings.items()))
    return lines


def _psc_lines(out: PscAnswer) -> list[str]:
    votes = ", ".join(f"{k!r} {v}" for k, v in out.votes.items()) or "none (every call answered nothing)"
    lines = [
        f"answer: {out.answer or '(none)'}",
        f"votes: {votes}; agreement {out.agreement:.0%} of {out.n_calls} calls (ties go to the earliest call)",
        "calls (the documents in prompt order):",
    ]
    lines += [f"  {i}. {c.answer or '(empty)'}  <- {' '.join(c.ids)}" for i, c in enumerate(out.calls)]
    lines.append(f"tokens: {out.input_tokens} in ({out.cached_tokens} cached) / {out.output_tokens} out")
    return lines


@app.command("rag")
def rag_cmd(
    index: Path = typer.Argument(..., help="Index folder made by `litm index`."),
    question: str = typer.Argument(..., help="The question to answer from the index."),
    strategy: str = typer.Option(DEFAULT_STRATEGY, "--strategy", "-s", callback=check_strategy, help="Placement."),
    budget: int | None = typer.Option(
        None, "--budget", "-b", min=1, help="Input-token budget (default: the profile's measured one, or the window)."
    ),
    model: str = typer.Option(DEFAULT_MODEL, "--model", "-m", help="Model spec (default: the embedded model)."),
    k: int = typer.Option(DEFAULT_K, "--k", "-k", min=1, help="Chunks to retrieve."),
    retriever: RetrieverOpt = typer.Option(
        RetrieverOpt.auto, "--retriever", "-r", help="auto: hybrid when the index has vectors, else bm25."
    ),
    rerank: bool = typer.Option(False, "--rerank", help="Re-score the top 50 candidates with the dense model."),
    backend: BackendOpt = typer.Option(BackendOpt.numpy, "--backend", help="Vector search for dense retrieval."),
    profile: Path | None = typer.Option(None, "--profile", help="A position profile (litm probe / litm bench)."),
    max_answer_tokens: int = typer.Option(DEFAULT_ANSWER_TOKENS, "--max-tokens", min=1, help="Answer length."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="llama.cpp threads (local models)."),
    explain: bool = typer.Option(False, "--explain", help="Also the hits, the plan table and the stage timings."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as one JSON object."),
    compress: str | None = typer.Option(
        None, "--compress", help="Compress the chunks for the question first: a ratio (4x) or document tokens (600)."
    ),
    compress_scorer: str = typer.Option("embed", "--compress-scorer", help="Compression scorer: embed, lm, retriever."),
    psc: int = typer.Option(
        0, "--psc", min=0, help="Permutation self-consistency: ask in this many document orders, keep the majority."
    ),
) -> None:
    """Answer a question from an index: the answer, its citations (or litm's attribution) and the plan.

    Example: litm index ./docs --out idx && litm rag idx "how do I rotate the keys?"
    """
    loaded = load_model(model, **({"n_threads": threads} if threads and model.startswith("local") else {}))
    pipeline = Pipeline.from_index(
        index, retriever=retriever.value, rerank="dense" if rerank else None, backend=backend.value,
        strategy=strategy, budget=budget, model=loaded, k=k, profile=profile, max_answer_tokens=max_answer_tokens,
        compress=compress, compress_scorer=compress_scorer,
    )  # fmt: skip
    if psc:
        with budget_flags(max_input_tokens="--budget", reserve_output_tokens="--max-tokens"):
            voted = ask_psc(pipeline, question, calls=psc)
        if as_json:
            typer.echo(json.dumps(voted.to_dict(), ensure_ascii=False))
            return
        for line in _psc_lines(voted):
            typer.echo(line)
        return
    with budget_flags(max_input_tokens="--budget", reserve_output_tokens="--max-tokens"):
        answer = pipeline.ask(question)
    if as_json:
        typer.echo(json.dumps(answer.to_dict(), ensure_ascii=False))
        return
    typer.echo(f"answer: {answer.text or '(none)'}")
    if answer.note:
        typer.echo(f"note: {answer.note}")
    for line in [*_references(answer), *_summary(answer, explain)]:
        typer.echo(line)
