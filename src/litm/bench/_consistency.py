"""The ``psc`` arm of the benchmark: permutation self-consistency on the plain prompt, paired with the plain prompt.

For each question and gold slot (a single-gold question: its gold passage at each of ``psc_slots``, the
distractors in retriever order around it, as in the slot prompts) or gold-set design (a multi-gold question:
each of ``psc_designs``), :func:`litm.consistency.psc` asks ``psc_calls`` times with the documents in seeded
orders (call 0 in the slot prompt's own order, so it *is* the plain prompt of that slot, byte for byte; the
seed is the question's, so every slot of a question uses the same orders of positions) and votes. The row is
scored like every other arm (:func:`~litm.eval._scoring.score_output` on the winning answer: first-line hit, EM,
F1) and records the cost: calls, input / cached / output tokens summed over the calls, and each call's answer,
order and where the gold passage sat. A stopped run resumes at the first (question, slot) without a row.

:func:`psc_summary` pairs each ``psc`` row with the plain row of the same question, ``k`` and slot (or design),
from this run or its ``baseline``: accuracy difference with a 95% interval and an exact McNemar test, and the
cost ratio in input tokens. Where neither has that plain row (no baseline, or questions beyond it), the row's
own call 0 is the plain answer: the plain prompt byte for byte, answered greedily, scored as every row is
(``plain_from_call0`` counts these pairs; on the committed NQ run call 0 gave the baseline's answer in every
one of the 90 prompts both had).

Example:
    >>> from litm.bench._data import Passage, QAItem
    >>> item = QAItem("q1", "Who?", ("Ada",), Passage("g", "Gold", "Ada did it."),
    ...               tuple(Passage(f"d{i}", f"D{i}", "Not this.") for i in range(3)))
    >>> psc_keys(item, 4, 5, (1, 4), ("middle",))
    ['psc|k=4|q=q1|s=4|m=5', 'psc|k=4|q=q1|s=1|m=5']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from litm.bench._config import BenchConfig
from litm.bench._data import QAItem
from litm.bench._design import LIU_INSTRUCTION, MULTIHOP_INSTRUCTION, gold_slots, seed_of
from litm.bench._jobs import Job
from litm.bench._rows import BenchRow, Rows, numeric, rows_of
from litm.consistency import PscAnswer, psc
from litm.consistency._psc import DEFAULT_BUILDER
from litm.eval._results import ResultsLog, read_rows
from litm.eval._scoring import exact_match, score_output, token_f1
from litm.eval._stats import mcnemar_exact, mean_ci, round_p, wilson
from litm.models import Completion, Model
from litm.models._base import PromptLike
from litm.placement import Doc
from litm.prompt import Prompt, PromptBuilder, Wording
from litm.util._progress import Progress

__all__ = ["PSC_PHASE", "PSC_SUMMARY", "psc_keys", "psc_markdown", "psc_stage", "psc_summary", "write_psc_outputs"]

PSC_PHASE = "psc"
PSC_SUMMARY = "psc-summary"
#: Builds a result row from a job and its (aggregated) completion: the runner's own, so psc rows are scored and
#: described exactly as the other arms' rows are.
RowMaker = Callable[[Job, Completion], dict[str, object]]


Place = tuple[str, list[int], dict[str, object]]


def _places(item: QAItem, k: int, slots: Sequence[int], designs: Sequence[str]) -> list[Place]:
    """``(key part, gold slots, row fields)`` per slot (single gold, last slot first as the slot prompts run) or
    design (multi-gold)."""
    if item.more_golds:
        base = {"gold_set": True, "golds": len(item.golds), "kind": item.kind}
        at = {d: gold_slots(d, k, len(item.golds)) for d in designs}
        return [(f"d={d}", at[d], {**base, "design": d, "gold_slots": at[d]}) for d in designs]
    return [(f"s={s}", [s], {"slot": s, "gold_rank": s}) for s in sorted(slots, reverse=True)]


def psc_keys(item: QAItem, k: int, calls: int, slots: Sequence[int], designs: Sequence[str]) -> list[str]:
    """The row keys of a question's psc prompts, in the order they are answered."""
    return [f"psc|k={k}|q={item.qid}|{label}|m={calls}" for label, _, _ in _places(item, k, slots, designs)]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _aggregate(out: PscAnswer) -> Completion:
    """The psc answer as one completion: the winning call's text, the usage and latency of all calls."""
    calls = out.calls
    win = calls[out.winner].completion if out.winner >= 0 else calls[0].completion
    return Completion(
        text=win.text, input_tokens=out.input_tokens, output_tokens=out.output_tokens, latency_s=out.latency_s,
        finish_reason=win.finish_reason, model=win.model, cached_tokens=out.cached_tokens,
        cache_write_tokens=sum(c.completion.cache_write_tokens for c in calls),
        sampled=any(c.completion.sampled for c in calls),
    )  # fmt: skip


def psc_stage(
    model: Model, config: BenchConfig, items: Sequence[QAItem], log: ResultsLog, *, chat: bool, row: RowMaker,
    bar: Progress,
) -> int:  # fmt: skip
    """Run the psc arm for every question, ``k`` and slot (or design) without a row in ``log``; append each row
    as its calls finish. Returns how many rows were written."""
    builders: dict[str, PromptBuilder] = {}

    def as_input(p: Prompt) -> PromptLike:
        # The bench's own form of a prompt: its text, as one chat turn for an instruct model.
        return [{"role": "user", "content": p.text}] if chat else p.text

    written = 0
    for k in config.ks:
        slots = config.checkpoints(k, config.psc_slots)
        todo = [(it, key) for it in items for key in psc_keys(it, k, config.psc_calls, slots, config.psc_designs)
                if key not in log]  # fmt: skip
        task = bar.add_task(f"psc k={k} m={config.psc_calls}", total=len(todo))
        for item in items:
            instruction = MULTIHOP_INSTRUCTION if item.more_golds else LIU_INSTRUCTION
            if instruction not in builders:
                builders[instruction] = DEFAULT_BUILDER.replace(wording=Wording(instruction=instruction))
            seed = seed_of(item.qid) + config.seed
            for label, gold_at, where in _places(item, k, slots, config.psc_designs):
                key = f"psc|k={k}|q={item.qid}|{label}|m={config.psc_calls}"
                if key in log:
                    continue
                passages = item.golds_at(gold_at, k)
                # Ids by retriever position; the plain (Liu) format shows each document's slot, not its id.
                docs = [Doc(text=p.text, id=f"doc-{i}", title=p.title) for i, p in enumerate(passages, start=1)]
                out = psc(
                    docs, item.question, model, calls=config.psc_calls, seed=seed, builder=builders[instruction],
                    max_tokens=config.max_tokens, stop=("\n",), as_input=as_input,
                )  # fmt: skip
                prompts = [c.prompt.text for c in out.calls]
                golds = {f"doc-{s}" for s in gold_at}
                meta = {
                    "phase": PSC_PHASE, "k": k, **where, "strategy": "none", "arm": PSC_PHASE,
                    "psc_calls": config.psc_calls, "calls_made": out.n_calls, "psc_seed": seed, "votes": out.votes,
                    "winner": out.winner, "agreement": round(out.agreement, 4),
                    "call_answers": [c.answer for c in out.calls], "orders": [list(c.order) for c in out.calls],
                    "call_gold_slots": [[i for i, d in enumerate(c.ids, start=1) if d in golds] for c in out.calls],
                    "first_prompt_sha": _sha(prompts[0]),
                }  # fmt: skip
                # The job's prompt is every call's prompt: its hash names the set, never one plain prompt.
                log.append(row(Job(key, "\n\x1e".join(prompts), item, meta), _aggregate(out)))
                written += 1
                bar.advance(task)
    return written


def _plain_key(r: BenchRow) -> tuple[object, ...] | None:
    """Where a plain row sits: (k, slot or design, qid) for a slot row or a design row, else None."""
    if r.get("phase") == "slot":
        return (r.get("k"), f"s={r.get('slot')}", str(r.get("qid")))
    if r.get("phase") == "design" and r.get("arm", "plain") == "plain":
        return (r.get("k"), f"d={r.get('design')}", str(r.get("qid")))
    return None


#: The key suffix of a plain row read off a psc row's call 0.
_CALL0 = "|call=0"


def _call0_plain(r: BenchRow) -> BenchRow | None:
    """The plain row a ``psc`` row carries in its call 0 (the plain prompt, byte for byte), scored as the runner
    scores a row; None for a row that is not a psc row or has no call answers.

    Its input tokens are the mean per call: the calls read permutations of the same documents.
    """
    answers = r.get("call_answers")
    if r.get("phase") != PSC_PHASE or not isinstance(answers, list) or not answers or not isinstance(answers[0], str):
        return None
    accepted = [str(a) for a in r.get("answers") or []]
    score = score_output(answers[0], answers=accepted, question=str(r.get("question", "")))
    calls = numeric(r, "calls_made") or float(len(answers))
    return {"key": f"{r.get('key')}{_CALL0}", "arm": "plain", "hit": score.hit,
            "em": exact_match(score.first_line, accepted), "f1": round(token_f1(score.first_line, accepted), 4),
            "input_tokens": round((numeric(r, "input_tokens") or 0.0) / calls)}  # fmt: skip


def _paired(a: Sequence[float], b: Sequence[float], binary: bool) -> dict[str, float]:
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean, lo, hi = mean_ci(diffs)
    better, worse = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    out: dict[str, float] = {"diff": round(mean, 4), "lo": round(lo, 4), "hi": round(hi, 4), "better": better,
                             "worse": worse, "n": len(diffs)}  # fmt: skip
    if binary:
        out["p_value"] = round_p(mcnemar_exact(better, worse))
    return out


def _acc(values: Sequence[float], binary: bool) -> dict[str, float]:
    if binary:
        hits = int(sum(values))
        lo, hi = wilson(hits, len(values))
        return {"acc": round(hits / len(values), 4), "lo": round(lo, 4), "hi": round(hi, 4), "n": len(values)}
    mean, lo, hi = mean_ci(values)
    return {"mean": round(mean, 4), "lo": round(lo, 4), "hi": round(hi, 4), "n": len(values)}


def psc_summary(rows: Rows, baseline: Rows = ()) -> dict[str, object]:
    """Per ``k``, calls and slot (or design): the psc arm against the plain prompt, paired by question.

    >>> base = [{"phase": "slot", "k": 3, "qid": q, "slot": 2, "hit": q == 1, "em": False, "f1": 0.0,
    ...          "input_tokens": 100, "prompt_sha": "x"} for q in (1, 2)]
    >>> rows = [{"phase": "psc", "k": 3, "qid": q, "slot": 2, "psc_calls": 3, "calls_made": 3, "hit": True,
    ...          "em": False, "f1": 0.0, "input_tokens": 300, "cached_tokens": 30, "agreement": 1.0,
    ...          "first_prompt_sha": "x"} for q in (1, 2)]
    >>> cell = psc_summary(rows, base)["by_k"]["3"]["m=3"]["s=2"]
    >>> cell["vs_plain"]["hit"]["diff"], cell["cost"]["input_ratio"], cell["same_first_prompt"]
    (0.5, 3.0, 2)
    """
    plain: dict[tuple[object, ...], BenchRow] = {}
    for r in [*baseline, *rows]:
        where = _plain_key(r)
        if where is not None:
            plain[where] = r
    groups: dict[str, dict[str, dict[str, list[tuple[BenchRow, BenchRow]]]]] = {}
    for r in rows:
        if r.get("phase") != PSC_PHASE:
            continue
        label = f"d={r['design']}" if r.get("gold_set") else f"s={r.get('slot')}"
        match = plain.get((r.get("k"), label, str(r.get("qid")))) or _call0_plain(r)
        if match is None:
            continue
        cells = groups.setdefault(str(r.get("k")), {}).setdefault(f"m={r.get('psc_calls')}", {})
        cells.setdefault(label, []).append((r, match))
    out: dict[str, dict[str, dict[str, object]]] = {}
    for k, by_m in sorted(groups.items(), key=lambda kv: int(kv[0])):
        for m, cells in by_m.items():
            for label, pairs in sorted(cells.items()):
                metrics = ("em", "f1", "hit") if label.startswith("d=") else ("hit", "em", "f1")
                psc_cells: dict[str, dict[str, float]] = {}
                plain_cells: dict[str, dict[str, float]] = {}
                vs_plain: dict[str, dict[str, float]] = {}
                for metric in metrics:
                    binary = metric != "f1"
                    a = [numeric(p, metric) or 0.0 for p, _ in pairs]
                    b = [numeric(q, metric) or 0.0 for _, q in pairs]
                    psc_cells[metric] = _acc(a, binary)
                    plain_cells[metric] = _acc(b, binary)
                    vs_plain[metric] = _paired(a, b, binary)
                cell: dict[str, object] = {"questions": len(pairs), "psc": psc_cells, "plain": plain_cells,
                                           "vs_plain": vs_plain}  # fmt: skip
                psc_in = sum(float(p.get("input_tokens") or 0) for p, _ in pairs)
                plain_in = sum(float(q.get("input_tokens") or 0) for _, q in pairs)
                cell["cost"] = {
                    "calls": round(sum(float(p.get("calls_made") or 0) for p, _ in pairs) / len(pairs), 3),
                    "input_tokens": round(psc_in / len(pairs), 1),
                    "plain_input_tokens": round(plain_in / len(pairs), 1),
                    "input_ratio": round(psc_in / plain_in, 3) if plain_in else None,
                    "cached_share": round(sum(float(p.get("cached_tokens") or 0) for p, _ in pairs) / psc_in, 4)
                    if psc_in else None,
                    "output_tokens": round(sum(float(p.get("output_tokens") or 0) for p, _ in pairs) / len(pairs), 1),
                }  # fmt: skip
                cell["agreement"] = round(sum(float(p.get("agreement") or 0) for p, _ in pairs) / len(pairs), 4)
                # Call 0 is the plain prompt itself: the same bytes, so (greedy) the same answer.
                cell["same_first_prompt"] = sum(p.get("first_prompt_sha") == q.get("prompt_sha") for p, q in pairs)
                cell["plain_from_call0"] = sum(str(q.get("key", "")).endswith(_CALL0) for _, q in pairs)
                out.setdefault(k, {}).setdefault(m, {})[label] = cell
    return {"by_k": out}


def psc_markdown(summary: Mapping[str, Any]) -> str:
    """The summary as Markdown tables, one per ``k`` and call count."""
    lines = ["# Permutation self-consistency (psc) against the plain prompt", ""]
    for k, by_m in summary.get("by_k", {}).items():
        for m, cells in by_m.items():
            lines += [
                f"## k = {k}, {m}", "",
                "| where | n | metric | plain | psc | psc - plain [95% CI] | up / down | p | input x | agreement |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]  # fmt: skip
            for label, c in cells.items():
                metric = "em" if label.startswith("d=") else "hit"
                p, q, d = c["plain"][metric], c["psc"][metric], c["vs_plain"][metric]
                lines.append(
                    f"| {label} | {c['questions']} | {metric} | {p['acc']:.3f} | {q['acc']:.3f} | "
                    f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}] | {d['better']} / {d['worse']} | "
                    f"{d.get('p_value', '')} | {c['cost']['input_ratio']} | {c['agreement']:.2f} |"
                )
            lines.append("")
    return "\n".join(lines)


def write_psc_outputs(out_dir: str | Path, rows: Rows, settings: Mapping[str, Any]) -> Path:
    """Write ``psc-summary.json`` and ``.md`` into ``out_dir``, pairing with the run's baseline (if any)."""
    out = Path(out_dir)
    base_dir = (settings.get("config") or {}).get("baseline")
    baseline = rows_of(read_rows(Path(base_dir) / "bench.jsonl")) if base_dir else []
    summary = {**psc_summary(rows, baseline), "baseline": base_dir}
    path = out / f"{PSC_SUMMARY}.json"
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / f"{PSC_SUMMARY}.md").write_text(psc_markdown(summary) + "\n", encoding="utf-8")
    return path
