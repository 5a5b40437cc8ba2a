"""What the compression arms show: accuracy by gold slot against the uncompressed prompt, paired by question.

Per arm and ratio, at each gold slot measured: hits (first-line match) and the likelihood of the gold answer,
each paired with the *original* prompt of the same question and slot (the baseline run's slot row): the mean
per-question difference with a 95% interval, how many questions moved each way, and an exact McNemar (hits) or
sign test (likelihood). Each arm is also paired with ``drop`` (whole documents dropped by rank) at the same
ratio and slot. The shape of the curve: the worst slot, the spread between the best and the worst, and the
expected accuracy when the retriever ranks the gold passage at ``r`` with ``p(r) ~ 1/r`` (read off the
measured slots, linearly interpolated between them, for the original as well, so the two are comparable).
Multi-gold questions are compared per gold-set design by EM, F1 and likelihood.

Example:
    >>> base = [{"phase": "slot", "k": 3, "qid": q, "slot": s, "hit": s != 2, "likelihood": -1.0}
    ...         for q in (1, 2) for s in (1, 2, 3)]
    >>> rows = [{"phase": "compress", "k": 3, "qid": q, "slot": s, "arm": "embed", "ratio": 4.0, "hit": True,
    ...          "likelihood": -0.5, "answer_kept": True, "doc_tokens": 10, "original_doc_tokens": 40}
    ...         for q in (1, 2) for s in (1, 2, 3)]
    >>> s = compression_summary(rows, base)["by_k"]["3"]
    >>> s["arms"]["embed@4"]["slots"]["2"]["vs_original"]["hits"]["better"], s["arms"]["embed@4"]["spread"]
    (2, 0.0)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from litm.bench._analysis import rank_weights
from litm.bench._likelihood import paired_difference
from litm.bench._rows import BenchRow, Rows, numeric, rows_of
from litm.eval._results import read_rows
from litm.eval._stats import mcnemar_exact, mean_ci, round_p, wilson

__all__ = ["COMPRESS_SUMMARY", "compression_markdown", "compression_summary", "write_compression_outputs"]

COMPRESS_SUMMARY = "compress-summary"


def _paired_hits(a: Mapping[str, bool], b: Mapping[str, bool]) -> dict[str, object] | None:
    """``a`` minus ``b`` over the questions both have: accuracy difference with a 95% interval, McNemar."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    diffs = [float(a[q]) - float(b[q]) for q in common]
    mean, lo, hi = mean_ci(diffs)
    better = sum(d > 0 for d in diffs)
    worse = sum(d < 0 for d in diffs)
    return {"diff": mean, "lo": lo, "hi": hi, "better": better, "worse": worse, "n": len(common),
            "p_value": round_p(mcnemar_exact(better, worse))}  # fmt: skip


def _paired_values(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, object] | None:
    common = sorted(set(a) & set(b))
    return paired_difference([a[q] - b[q] for q in common]) if common else None


def _expected(acc: Mapping[int, float], k: int) -> float | None:
    """Expected accuracy under p(r) ~ 1/r from the measured slots, linear between them (flat beyond the ends)."""
    if not acc:
        return None
    slots = sorted(acc)
    total = 0.0
    for r, w in enumerate(rank_weights("decaying", k), start=1):
        if r <= slots[0]:
            v = acc[slots[0]]
        elif r >= slots[-1]:
            v = acc[slots[-1]]
        else:
            hi = next(s for s in slots if s >= r)
            lo = max(s for s in slots if s <= r)
            v = acc[lo] if hi == lo else acc[lo] + (acc[hi] - acc[lo]) * (r - lo) / (hi - lo)
        total += w * v
    return round(total, 4)


def _shape(acc: Mapping[int, float], k: int) -> dict[str, object]:
    if not acc:
        return {}
    worst = min(acc, key=lambda s: (acc[s], s))
    return {
        "worst_slot": worst,
        "worst": round(acc[worst], 4),
        "best": round(max(acc.values()), 4),
        "spread": round(max(acc.values()) - min(acc.values()), 4),
        "expected_decaying": _expected(acc, k),
    }


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def compression_summary(rows: Rows, baseline: Rows = ()) -> dict[str, object]:
    """The tables of :mod:`litm.bench._compression_summary` for every ``k`` (see the module docstring)."""
    both = [*baseline, *rows]
    comp = _complete([r for r in rows if r.get("phase") == "compress"])
    by_k: dict[str, object] = {}
    for k in sorted({int(r["k"]) for r in comp}):
        single = [r for r in comp if r["k"] == k and not r.get("gold_set")]
        multi = [r for r in comp if r["k"] == k and r.get("gold_set")]
        entry: dict[str, object] = {}
        if single:
            entry.update(_single(single, both, k))
        if multi:
            entry["gold_sets"] = _multi(multi, both, k)
        by_k[str(k)] = entry
    return {"by_k": by_k}


def _complete(comp: Rows) -> list[BenchRow]:
    """Only the questions that have every arm, ratio and slot (or design) of their ``k``: a run stopped
    mid-question then compares like with like, as the anchor ablation does."""
    cells: dict[tuple[int, str], set[tuple[str, float, object]]] = defaultdict(set)
    for r in comp:
        cells[(int(r["k"]), str(r["qid"]))].add((str(r["arm"]), float(r["ratio"]), r.get("slot", r.get("design"))))
    every: dict[int, set[tuple[str, float, object]]] = defaultdict(set)
    for (k, _), got in cells.items():
        every[k] |= got
    keep = {key for key, got in cells.items() if got == every[key[0]]}
    return [r for r in comp if (int(r["k"]), str(r["qid"])) in keep]


def _single(comp: Rows, both: Rows, k: int) -> dict[str, object]:
    qids = {str(r["qid"]) for r in comp}
    slots = sorted({int(r["slot"]) for r in comp})
    orig_hit: dict[int, dict[str, bool]] = defaultdict(dict)
    orig_lik: dict[int, dict[str, float]] = defaultdict(dict)
    for r in both:
        if r.get("phase") == "slot" and r.get("k") == k and str(r["qid"]) in qids and int(r["slot"]) in slots:
            orig_hit[int(r["slot"])][str(r["qid"])] = bool(r["hit"])
            if r.get("likelihood") is not None:
                orig_lik[int(r["slot"])][str(r["qid"])] = float(r["likelihood"])
    oracle = [bool(r["hit"]) for r in both if r.get("phase") == "oracle" and str(r.get("qid")) in qids]
    arm_hit: dict[str, dict[int, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
    arm_lik: dict[str, dict[int, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    extra: dict[str, dict[int, list[BenchRow]]] = defaultdict(lambda: defaultdict(list))
    for r in comp:
        name = f"{r['arm']}@{float(r['ratio']):g}"
        s, q = int(r["slot"]), str(r["qid"])
        arm_hit[name][s][q] = bool(r["hit"])
        if r.get("likelihood") is not None:
            arm_lik[name][s][q] = float(r["likelihood"])
        extra[name][s].append(r)
    original_slots: dict[str, dict[str, object]] = {}
    original_acc: dict[int, float] = {}
    for s in slots:
        hits = orig_hit.get(s, {})
        lo, hi = wilson(sum(hits.values()), len(hits))
        acc = _mean([float(v) for v in hits.values()])
        original_slots[str(s)] = {
            "n": len(hits), "acc": acc, "lo": round(lo, 4), "hi": round(hi, 4),
            "likelihood": _mean(list(orig_lik.get(s, {}).values())),
        }  # fmt: skip
        if acc is not None:
            original_acc[s] = acc
    original = {"slots": original_slots, **_shape(original_acc, k)}
    arms: dict[str, object] = {}
    for name in sorted(arm_hit, key=lambda n: (n.split("@")[0], float(n.split("@")[1]))):
        drop = f"drop@{name.split('@')[1]}"
        per: dict[str, dict[str, object]] = {}
        per_acc: dict[int, float] = {}
        for s in slots:
            hits = arm_hit[name].get(s, {})
            if not hits:
                continue
            lo, hi = wilson(sum(hits.values()), len(hits))
            rs = extra[name][s]
            acc = _mean([float(v) for v in hits.values()])
            if acc is not None:
                per_acc[s] = acc
            per[str(s)] = {
                "n": len(hits),
                "acc": acc,
                "lo": round(lo, 4),
                "hi": round(hi, 4),
                "likelihood": _mean(list(arm_lik[name].get(s, {}).values())),
                "answer_kept": _mean([float(bool(r.get("answer_kept"))) for r in rs]),
                "doc_tokens": _mean([float(r["doc_tokens"]) for r in rs]),
                "original_doc_tokens": _mean([float(r["original_doc_tokens"]) for r in rs]),
                "input_tokens": _mean([float(r["input_tokens"]) for r in rs if r.get("input_tokens") is not None]),
                "latency_s": _mean([float(r["latency_s"]) for r in rs if r.get("latency_s") is not None]),
                "compress_s": _mean([float(r["compress_s"]) for r in rs if r.get("compress_s") is not None]),
                "vs_original": {
                    "hits": _paired_hits(hits, orig_hit.get(s, {})),
                    "likelihood": _paired_values(arm_lik[name].get(s, {}), orig_lik.get(s, {})),
                },
            }
            if name != drop and drop in arm_hit:
                per[str(s)]["vs_drop"] = {
                    "hits": _paired_hits(hits, arm_hit[drop].get(s, {})),
                    "likelihood": _paired_values(arm_lik[name].get(s, {}), arm_lik[drop].get(s, {})),
                }
        arms[name] = {"slots": per, **_shape(per_acc, k)}
    return {
        "questions": len(qids),
        "slots": slots,
        "oracle": {"n": len(oracle), "acc": _mean([float(v) for v in oracle])},
        "original": original,
        "arms": arms,
    }


def _multi(comp: Rows, both: Rows, k: int) -> dict[str, object]:
    qids = {str(r["qid"]) for r in comp}
    base: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in both:
        if r.get("phase") == "design" and r.get("k") == k and str(r["qid"]) in qids:
            for m in ("em", "f1", "likelihood"):
                if (v := numeric(r, m)) is not None:
                    base[f"{r['design']}|{m}"][m][str(r["qid"])] = v
    arms: dict[str, dict[str, object]] = {}
    groups: dict[tuple[str, str], list[BenchRow]] = defaultdict(list)
    for r in comp:
        groups[(f"{r['arm']}@{float(r['ratio']):g}", str(r["design"]))].append(r)
    for (name, design), rs in sorted(groups.items()):
        cell: dict[str, object] = {"n": len(rs), "answer_kept": _mean([float(bool(r.get("answer_kept"))) for r in rs]),
                                "all_golds_kept": _mean([float(int(r["gold_kept"]) == int(r["golds"])) for r in rs]),
                                "doc_tokens": _mean([float(r["doc_tokens"]) for r in rs])}  # fmt: skip
        for m in ("em", "f1", "likelihood"):
            vals = {str(r["qid"]): v for r in rs if (v := numeric(r, m)) is not None}
            cell[m] = _mean(list(vals.values()))
            ref = base.get(f"{design}|{m}", {}).get(m, {})
            cell[f"original_{m}"] = _mean([ref[q] for q in vals if q in ref])
            cell[f"{m}_vs_original"] = _paired_values(vals, ref)
        arms.setdefault(name, {})[design] = cell
    return {"questions": len(qids), "arms": arms}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _diff(d: Mapping[str, Any] | None) -> str:
    if not d:
        return "-"
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def compression_markdown(summary: Mapping[str, Any]) -> str:
    """The summary as Markdown tables (what ``compress-summary.md`` holds)."""
    lines = ["# Compression arms", ""]
    for k, s in summary["by_k"].items():
        if "arms" in s:
            slots = s["slots"]
            lines += [f"## k = {k}: {s['questions']} questions, gold slots {', '.join(map(str, slots))}", ""]
            lines += [f"Oracle (gold passage alone): {_pct(s['oracle']['acc'])} ({s['oracle']['n']} questions).", ""]
            head = "| prompt | " + " | ".join(f"slot {x}" for x in slots) + " | worst | spread | E[acc], p(r)~1/r |"
            lines += ["Hits (first-line match) by gold slot:", "", head, "|" + "---|" * (len(slots) + 4)]
            o = s["original"]
            lines.append(
                "| original | " + " | ".join(_pct(o["slots"][str(x)]["acc"]) for x in slots)
                + f" | {_pct(o.get('worst'))} | {_pct(o.get('spread'))} | {_pct(o.get('expected_decaying'))} |"
            )  # fmt: skip
            for name, a in s["arms"].items():
                cells = [_pct(a["slots"].get(str(x), {}).get("acc")) for x in slots]
                lines.append(
                    f"| {name} | " + " | ".join(cells)
                    + f" | {_pct(a.get('worst'))} | {_pct(a.get('spread'))} | {_pct(a.get('expected_decaying'))} |"
                )  # fmt: skip
            lines += ["", "Paired against the original prompt at the same slot (hits; likelihood):", ""]
            lines += [
                "| arm | slot | n | hits diff [95% CI] | better/worse | McNemar p | likelihood diff [95% CI] |"
                " answer kept | doc tokens | vs drop (hits) |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]
            for name, a in s["arms"].items():
                for x, c in a["slots"].items():
                    h = c["vs_original"]["hits"] or {}
                    lik = c["vs_original"]["likelihood"]
                    drop = (c.get("vs_drop") or {}).get("hits")
                    lines.append(
                        f"| {name} | {x} | {c['n']} | {_diff(h)} | {h.get('better', '-')}/{h.get('worse', '-')} | "
                        f"{h.get('p_value', '-')} | {_diff(lik)} | {_pct(c['answer_kept'])} | "
                        f"{c['doc_tokens']:.0f} of {c['original_doc_tokens']:.0f} | {_diff(drop)} |"
                    )
            lines.append("")
        if "gold_sets" in s:
            g = s["gold_sets"]
            lines += [
                f"## k = {k}, multi-gold: {g['questions']} questions",
                "",
                "| arm | design | n | EM (original) | EM diff [95% CI] | F1 (original) | F1 diff |"
                " likelihood diff | all golds kept | answer kept |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]
            for name, designs in g["arms"].items():
                for design, c in designs.items():
                    lines.append(
                        f"| {name} | {design} | {c['n']} | {_pct(c['em'])} ({_pct(c['original_em'])}) | "
                        f"{_diff(c['em_vs_original'])} | {_pct(c['f1'])} ({_pct(c['original_f1'])}) | "
                        f"{_diff(c['f1_vs_original'])} | {_diff(c['likelihood_vs_original'])} | "
                        f"{_pct(c['all_golds_kept'])} | {_pct(c['answer_kept'])} |"
                    )
            lines.append("")
    return "\n".join(lines) + "\n"


def write_compression_outputs(out_dir: str | Path, rows: Rows, settings: Mapping[str, Any]) -> Path:
    """Write ``compress-summary.json`` and ``.md`` into ``out_dir``, pairing with the run's baseline (if any)."""
    out = Path(out_dir)
    base_dir = (settings.get("config") or {}).get("baseline")
    baseline = rows_of(read_rows(Path(base_dir) / "bench.jsonl")) if base_dir else []
    summary = compression_summary(rows, baseline)
    summary["baseline"] = base_dir
    (out / f"{COMPRESS_SUMMARY}.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / f"{COMPRESS_SUMMARY}.md").write_text(compression_markdown(summary), encoding="utf-8")
    return out / f"{COMPRESS_SUMMARY}.md"
