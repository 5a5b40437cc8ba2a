"""The multi-hop benchmark: questions whose answer needs several gold documents, placed together or apart.

A single-gold question moves its gold passage through every slot (:mod:`litm.bench._runner`). A question with
``g >= 2`` gold documents cannot visit every slot combination, so it is asked under four **gold-set designs**
(:func:`~litm.bench._design.gold_slots`): the golds together at the start (``early``), together in the middle
(``middle``), spread from the first slot to the last (``split``) and together at the end (``late``); the
distractors keep their retriever order around them. Besides the designs, per question:

* **strategies** (``direct``): the documents in the retriever's real order (the gold ranks it gave), placed by
  each strategy (``none`` = rank order, ``edges``, ``pyramid``, ``random``, and ``profile`` given a measured
  profile), so a strategy's value is measured where the retriever actually put the golds;
* **anchor arms** (``ablation``) at chosen designs: the same documents under litm's default anchors, the field
  report's bracket style, ... (:data:`~litm.bench._design.ARMS`), against the plain prompt of that design;
* **controls**: closed book, and the gold documents alone (``oracle``).

Every prompt is scored by exact match and token F1 of its first line (HotpotQA's metrics), Liu et al.'s
first-line match (``hit``), and the likelihood of the gold answer when the model can score it. Comparisons are
paired by question: the mean per-question difference with a 95% interval, how many questions moved each way,
and an exact sign test.

Example:
    >>> rows = [{"phase": "design", "k": 4, "qid": q, "design": d, "em": d != "middle", "f1": 0.5, "hit": True}
    ...         for q in (1, 2) for d in ("early", "middle", "split", "late")]
    >>> s = goldset_summary(rows)["by_k"]["4"]
    >>> s["questions"], s["designs"]["middle"]["em"]["acc"], s["middle_vs"]["early"]["em"]["diff"]
    (2, 0.0, -1.0)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from litm.bench._data import Passage, QAItem
from litm.bench._design import (
    ANCHOR_ELEMENT_ARMS,
    GOLD_DESIGNS,
    MULTIHOP_INSTRUCTION,
    arrangement,
    build_prompt,
    closed_book_prompt,
    gold_slots,
    seed_of,
)
from litm.bench._likelihood import paired_difference
from litm.bench._rows import Rows, field, number, numeric
from litm.eval._stats import Cell, mean_ci
from litm.placement import PositionProfile

__all__ = [
    "GOLDSET_STRATEGIES", "METRICS", "goldset_arms_markdown", "goldset_jobs", "goldset_markdown", "goldset_summary",
]

#: Strategies of the direct phase (``profile`` only with a measured profile; ``langchain`` is pyramid or edges).
GOLDSET_STRATEGIES: tuple[str, ...] = ("none", "edges", "pyramid", "random", "profile")
#: Row fields compared: 0/1 metrics get Wilson intervals, the others a mean with a normal interval.
METRICS: tuple[str, ...] = ("em", "f1", "hit", "likelihood")
_BINARY = frozenset({"em", "hit"})
_DESIGN_ORDER = {d: i for i, d in enumerate(GOLD_DESIGNS)}

Prompt = tuple[str, str, dict[str, object]]


def goldset_jobs(
    item: QAItem,
    k: int,
    *,
    strategies: Sequence[str] = GOLDSET_STRATEGIES,
    arms: Sequence[str] = (),
    ablation_designs: Sequence[str] = ("middle",),
    direct: bool = True,
    controls: bool = True,
    profile: PositionProfile | None = None,
) -> Iterator[Prompt]:
    """``(key, prompt, row fields)`` of every prompt one multi-gold question gets at ``k`` documents."""
    golds = item.golds
    # ``gold_set`` marks these rows so the single-gold analysis leaves them to :func:`goldset_summary`.
    base = {"gold_set": True, "k": k, "golds": len(golds), "kind": item.kind}
    order = list(range(1, k + 1))
    for design in GOLD_DESIGNS:
        slots = gold_slots(design, k, len(golds))
        docs = item.golds_at(slots, k)
        meta = {**base, "phase": "design", "design": design, "gold_slots": slots, "strategy": "none", "arm": "plain"}
        yield f"design|k={k}|q={item.qid}|d={design}", _prompt(docs, order, item, "plain"), meta
        if design in ablation_designs:
            for arm in arms:
                ab = {**meta, "phase": "ablation", "arm": arm}
                yield f"ablation|k={k}|q={item.qid}|d={design}|arm={arm}", _prompt(docs, order, item, arm), ab
    if direct and item.gold_ranks:
        ranked = item.golds_at(item.gold_ranks, k)
        for name in strategies:
            if name == "profile" and profile is None:
                continue
            placed = arrangement(name, k, seed=seed_of(item.qid), profile=profile if name == "profile" else None)
            slots = sorted(placed.index(r) + 1 for r in item.gold_ranks)
            meta = {**base, "phase": "direct", "strategy": name, "arm": "plain", "order": placed,
                    "gold_ranks": list(item.gold_ranks), "gold_slots": slots}  # fmt: skip
            docs = [ranked[r - 1] for r in placed]
            key = f"direct|k={k}|q={item.qid}|strategy={name}|order={','.join(map(str, placed))}"
            yield key, _prompt(docs, placed, item, "plain"), meta
    if controls:
        yield (
            f"closed|q={item.qid}",
            closed_book_prompt(item.question),
            {"phase": "closed", "gold_set": True, "kind": item.kind},
        )
        yield f"oracle|q={item.qid}", _prompt(golds, list(range(1, len(golds) + 1)), item, "plain"), {
            "phase": "oracle", "gold_set": True, "golds": len(golds), "kind": item.kind}  # fmt: skip


def _prompt(docs: Sequence[Passage], ranks: Sequence[int], item: QAItem, arm: str) -> str:
    return build_prompt(docs, ranks, item.question, arm, instruction=MULTIHOP_INSTRUCTION)


def _values(rows: Rows, k: int, phase: str, by: str, metric: str) -> dict[str, dict[str, float]]:
    """``{group: {qid: value}}`` for one phase at ``k``, grouped by a row field (design, strategy, arm)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        value = numeric(r, metric)
        if r.get("phase") == phase and r.get("k") == k and value is not None:
            out[str(field(r, by))][str(r["qid"])] = value
    return out


def _cell(values: Sequence[float], metric: str) -> dict[str, float]:
    if metric in _BINARY:
        return Cell(int(sum(values)), len(values)).to_dict()
    mean, lo, hi = mean_ci(values)
    if metric == "f1":  # bounded: a normal interval on few questions would spill past 0 and 1
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return {"mean": round(mean, 4), "lo": round(lo, 4), "hi": round(hi, 4), "n": len(values)}


def _table(groups: Mapping[str, Mapping[str, Mapping[str, float]]], qids: set[str]) -> dict[str, dict[str, object]]:
    """Per group, each metric over ``qids`` (the questions every group has)."""
    out: dict[str, dict[str, object]] = {}
    for metric, by_group in groups.items():
        for name, by_q in by_group.items():
            column = [v for q, v in by_q.items() if q in qids]
            if column:
                out.setdefault(name, {})[metric] = _cell(column, metric)
    return out


def _paired(
    groups: Mapping[str, Mapping[str, Mapping[str, float]]], a: str, b: str, qids: set[str]
) -> dict[str, dict[str, object]]:
    """``a`` minus ``b`` per question, for every metric both have."""
    out = {}
    for metric, by_group in groups.items():
        if a in by_group and b in by_group:
            common = sorted(qids & set(by_group[a]) & set(by_group[b]))
            if common:
                out[metric] = paired_difference([by_group[a][q] - by_group[b][q] for q in common])
    return out


def _complete(groups: Mapping[str, Mapping[str, Mapping[str, float]]], names: Sequence[str]) -> set[str]:
    """The questions that have every named group in the first-line metric (``em``), so tables compare alike."""
    em = groups.get("em", {})
    sets = [set(em.get(n, {})) for n in names]
    return set.intersection(*sets) if sets and all(sets) else set()


def goldset_summary(rows: Rows) -> dict[str, object]:
    """Designs, strategies, anchor arms and controls of a multi-gold run, per ``k`` (see the module doc)."""
    ks = sorted({int(r["k"]) for r in rows if r.get("phase") == "design"})
    by_k: dict[str, object] = {}
    for k in ks:
        designs = {m: _values(rows, k, "design", "design", m) for m in METRICS}
        qids = _complete(designs, GOLD_DESIGNS)
        entry: dict[str, object] = {
            "questions": len(qids),
            "designs": {d: t for d, t in sorted(_table(designs, qids).items(), key=lambda x: _DESIGN_ORDER[x[0]])},
            "middle_vs": {d: _paired(designs, "middle", d, qids) for d in GOLD_DESIGNS if d != "middle"},
        }
        direct = {m: _values(rows, k, "direct", "strategy", m) for m in METRICS}
        names = sorted(direct["em"], key=lambda n: (n != "none", n))
        dq = _complete(direct, names)
        if dq:
            entry["strategies"] = {
                "questions": len(dq),
                "table": _table(direct, dq),
                "vs_none": {n: _paired(direct, n, "none", dq) for n in names if n != "none"},
            }
        arms: dict[str, object] = {}
        for design in GOLD_DESIGNS:
            ab = {m: _values([r for r in rows if r.get("design") == design], k, "ablation", "arm", m) for m in METRICS}
            if not ab["em"]:
                continue
            plain = {m: {"plain": designs[m].get(design, {})} for m in METRICS}
            both = {m: {**plain[m], **ab[m]} for m in METRICS}
            aq = _complete(both, ["plain", *ab["em"]])
            block: dict[str, object] = {
                "questions": len(aq),
                "table": _table(both, aq),
                "vs_plain": {a: _paired(both, a, "plain", aq) for a in sorted(ab["em"])},
            }
            # The anchor-element arms (one element of the default removed or added) against the full default.
            variants = [a for a in sorted(ab["em"]) if a in ANCHOR_ELEMENT_ARMS]
            if "default" in ab["em"] and variants:
                block["vs_default"] = {a: _paired(both, a, "default", aq) for a in variants}
            arms[design] = block
        if arms:
            entry["arms"] = arms
        entry["kinds"] = _kinds(rows, k, qids)
        entry["closed_book"] = _control(rows, "closed", qids)
        entry["oracle"] = _control(rows, "oracle", qids)
        by_k[str(k)] = entry
    return {"by_k": by_k}


def _kinds(rows: Rows, k: int, qids: set[str]) -> dict[str, object]:
    """F1 per question type and design (HotpotQA's bridge / comparison, ...)."""
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get("phase") == "design" and r.get("k") == k and str(r["qid"]) in qids and r.get("f1") is not None:
            by[str(r.get("kind") or "-")][str(r["design"])].append(float(r["f1"]))
    return {kind: {d: _cell(v, "f1") for d, v in sorted(ds.items())} for kind, ds in sorted(by.items())}


def _control(rows: Rows, phase: str, qids: set[str]) -> dict[str, object]:
    picked = [r for r in rows if r.get("phase") == phase and str(r["qid"]) in qids]
    return {m: _cell([number(r, m) for r in picked], m) for m in METRICS if picked and all(m in r for r in picked)}


def _fmt(c: Mapping[str, Any] | None) -> str:
    if not c:
        return "-"
    if "acc" in c:
        return f"{c['acc']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]"
    return f"{c['mean']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]"


def _diff(d: Mapping[str, Any] | None) -> str:
    if not d:
        return "-"
    moved = f"{d['lower']} lower / {d['higher']} higher, p={d['p_value']:.3g}"
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}] ({moved})"


def _diffs(label: str, v: Mapping[str, Any]) -> str:
    return f"- {label}: EM {_diff(v.get('em'))}; F1 {_diff(v.get('f1'))}; likelihood {_diff(v.get('likelihood'))}"


def _rows_md(head: str, table: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    lines = [f"| {head} | EM | F1 | first-line match | likelihood |", "| --- | --- | --- | --- | --- |"]
    for n in names:
        t = table.get(n, {})
        lines.append(f"| {n} | " + " | ".join(_fmt(t.get(m)) for m in METRICS) + " |")
    return lines


def goldset_arms_markdown(arms: Mapping[str, Any]) -> list[str]:
    """Markdown lines for the anchor arms of one ``k`` of :func:`goldset_summary` (``{design: block}``)."""
    lines: list[str] = []
    for design, a in arms.items():
        lines += ["", f"Anchor arms at the {design} design ({a['questions']} questions):", ""]
        lines += [*_rows_md("arm", a["table"], list(a["table"])), ""]
        for n, v in a["vs_plain"].items():
            lines.append(_diffs(f"{n} minus plain", v))
        for n, v in a.get("vs_default", {}).items():
            lines.append(_diffs(f"{n} minus default", v))
    return lines


def goldset_markdown(summary: Mapping[str, Any]) -> list[str]:
    """Markdown lines for :func:`goldset_summary`'s result (empty when the run had no multi-gold questions)."""
    lines: list[str] = []
    for k, s in summary.get("by_k", {}).items():
        lines += [f"## Multi-gold questions, k={k}: {s['questions']} questions with every design", ""]
        lines += ["Gold documents together early / in the middle / split first-and-last / late; 95% intervals.", ""]
        lines += [*_rows_md("design", s["designs"], GOLD_DESIGNS), ""]
        lines += ["Middle minus each other design, paired by question (EM, F1, likelihood):", ""]
        for d, v in s["middle_vs"].items():
            lines.append(_diffs(f"vs {d}", v))
        if "strategies" in s:
            st = s["strategies"]
            lines += ["", f"Strategies on the retriever's order ({st['questions']} questions):", ""]
            lines += [*_rows_md("strategy", st["table"], list(st["table"])), ""]
            for n, v in st["vs_none"].items():
                lines.append(_diffs(f"{n} minus none", v))
        lines += goldset_arms_markdown(s.get("arms", {}))
        for name, what in (("closed_book", "Closed book"), ("oracle", "Oracle (gold documents only)")):
            if s.get(name):
                lines += ["", f"{what}: " + "; ".join(f"{m} {_fmt(c)}" for m, c in s[name].items())]
        lines.append("")
    return lines
