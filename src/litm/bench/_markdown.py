"""Render a benchmark summary as Markdown tables, so the numbers in a README are pasted, not retyped.

Every number comes from ``bench-summary.json`` (the output of :func:`litm.bench._analysis.summarize`); cells
show accuracy with the Wilson 95% interval and the counts they rest on. Sections with no data (no direct run,
no ablation, no controls) are left out rather than shown empty.

Example:
    >>> import json
    >>> text = summary_markdown(json.load(open("out/bench-summary.json")))  # doctest: +SKIP
    >>> print(text.splitlines()[0])                                        # doctest: +SKIP
    # Strategy benchmark: gemma3-270m (local)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litm.bench._analysis import best_fixed

__all__ = ["ablation_markdown", "cell", "gain_text", "likelihood_markdown", "summary_markdown"]


def cell(c: Mapping[str, Any], *, counts: bool = False) -> str:
    """``0.25 [0.14, 0.40]`` (with ``10/40`` in front when ``counts``), from a summary cell."""
    text = f"{c['acc']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]"
    return f"{c['hits']}/{c['n']} = {text}" if counts else text


def gain_text(v: Mapping[str, Any]) -> str:
    """``+0.027 [+0.004, +0.051]``: a headline row's gain over rank order with its paired interval, if any."""
    text = f"{v['gain_over_none']:+.3f}"
    ci = v.get("gain_ci")
    return f"{text} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _k_section(k: str, s: Mapping[str, Any]) -> list[str]:
    out = [f"## k = {k}: {s['questions']} evaluation questions", ""]
    slots = s["slot_accuracy"]
    out += [
        "Accuracy with the gold passage in each final slot (1 = first, next to the instruction; "
        f"{k} = last, next to the question):",
        "",
    ]
    out += _table(
        ["slot", "hits", "accuracy [95%]"], [[str(i), f"{c['hits']}/{c['n']}", cell(c)] for i, c in enumerate(slots, 1)]
    )
    out.append("")
    controls = [
        (name, s[key])
        for name, key in (("oracle (gold passage alone)", "oracle"), ("closed book", "closed_book"))
        if s.get(key)
    ]
    if controls:
        out += ["Controls: " + "; ".join(f"{name} {cell(c, counts=True)}" for name, c in controls) + ".", ""]
    dz = s.get("dead_zone")
    # k = 2 or 3 has no middle slot (first and last excluded): there is no dead-zone test to report.
    if dz and dz.get("middle_slots"):
        mid = dz["middle_slots"]
        verdict = "a dead zone" if dz["dead_zone"] else "no significant dead zone"
        out += [
            f"Dead-zone test: middle slots {mid[0]}-{mid[-1]} {cell(dz['middle'], counts=True)} vs first and "
            f"last slot {cell(dz['edges'], counts=True)}, one-sided Fisher p = {dz['p_value']:.3g}: "
            f"{verdict}.",
            "",
        ]
    derived = s["derived"]
    n_ranks = len(slots)
    out += ["Accuracy by gold retrieval rank, derived from the slot runs (rank 1 = the retriever's best):", ""]
    out += _table(
        ["strategy"] + [f"rank {r}" for r in range(1, n_ranks + 1)],
        [[f"`{name}`"] + [cell(c) for c in cells] for name, cells in derived.items()],
    )
    out.append("")
    for dist, table in s["headline"].items():
        best = best_fixed(table)
        desc = s.get("rank_distributions", {}).get(dist, dist)
        winner = f"best fixed strategy `{best}`" if best else "every strategy ties"
        out += [
            f"Headline, gold rank distribution `{dist}`: {desc}. Expected accuracy and the fraction of the "
            f"worst-to-best slot gap recovered; {winner}:",
            "",
        ]
        out += _table(
            ["strategy", "expected accuracy", "gain vs `none` [paired 95%]", "gap recovered"],
            [
                [
                    f"**`{name}`**" if name == best else f"`{name}`",
                    f"{v['expected_acc']:.3f}",
                    gain_text(v),
                    f"{v['gap_recovered']:.2f}",
                ]
                for name, v in table.items()
            ],
        )
        out.append("")
    out += likelihood_markdown(s.get("likelihood"))
    direct = s.get("direct_check") or {}
    if direct:
        out += [
            "Direct check: strategies placed end to end vs the accuracy the slot derivation predicts for the "
            "same prompts (`agree`: share of prompts where both hit or both miss):",
            "",
        ]
        out += _table(
            ["strategy", "prompts", "direct", "derived", "agree"],
            [
                [
                    f"`{name}`",
                    str(v["n"]),
                    cell(v["direct"], counts=True),
                    cell(v["derived"], counts=True),
                    f"{v['agree']:.2f}",
                ]
                for name, v in direct.items()
            ],
        )
        out.append("")
    out += ablation_markdown(s)
    return out


def ablation_markdown(s: Mapping[str, Any]) -> list[str]:
    """The anchor ablation of one ``k`` (a summary's ``by_k`` entry): accuracy per arm and slot, and each arm
    paired with plain and, for the anchor elements, with the full default (empty when no arm ran)."""
    out: list[str] = []
    ablation = s.get("ablation") or {}
    if ablation:
        arm_slots = sorted({int(x) for cells in ablation.values() for x in cells})
        out += [
            "Anchor ablation (plain vs anchored formatting; `-both`: the question before and after the documents):",
            "",
        ]
        out += _table(
            ["arm"] + [f"slot {x}" for x in arm_slots],
            [
                [f"`{arm}`"] + [cell(cells[str(x)], counts=True) if str(x) in cells else "-" for x in arm_slots]
                for arm, cells in ablation.items()
            ],
        )
        out.append("")
        paired = s.get("ablation_vs_plain") or {}
        if paired:
            out += [
                "Paired against `plain` on the same prompts (question, slot): accuracy difference with its paired "
                "95% interval, and exact McNemar: "
                + "; ".join(
                    f"`{arm}`{_diff_text(v)} on {v['pairs']} prompts, right where plain missed {v['better']}, "
                    f"missed where plain was right {v['worse']}, p = {v['p_value']:.2g}"
                    for arm, v in paired.items()
                )
                + ".",
                "",
            ]
        versus = s.get("ablation_vs_default") or {}
        if versus:
            out += [
                "Each anchor element against the full `default` on the same prompts: "
                + "; ".join(
                    f"`{arm}`{_diff_text(v)} on {v['pairs']} prompts, right where default missed {v['better']}, "
                    f"missed where default was right {v['worse']}, p = {v['p_value']:.2g}"
                    for arm, v in versus.items()
                )
                + ".",
                "",
            ]
    return out


def _diff_text(v: Mapping[str, Any]) -> str:
    # A summary written before the interval was part of it has none.
    text = f" {v['diff']:+.2f} [{v['lo']:+.2f}, {v['hi']:+.2f}]" if "diff" in v else ""
    if v.get("likelihood"):
        mean, lo, hi = v["likelihood"]
        text += f" (gold-answer likelihood {mean:+.3f} [{lo:+.3f}, {hi:+.3f}])"
    return text


def _paired_text(name: str, v: Mapping[str, Any]) -> str:
    return (
        f"middle minus {name} {v['diff']:+.3f} [{v['lo']:+.3f}, {v['hi']:+.3f}], lower in the middle for "
        f"{v['lower']} of {v['n']} questions (sign test p = {v['p_value']:.2g})"
    )


def likelihood_markdown(lk: Mapping[str, Any] | None) -> list[str]:
    """The likelihood metric's tables: mean log-probability of the gold answer by slot, the paired middle test,
    and each strategy's expected value (empty when the run did not score likelihoods)."""
    if not lk:
        return []
    out = [
        f"Likelihood of the gold answer (mean per-token log-probability of the likeliest accepted answer, "
        f"teacher-forced; {lk['questions']} questions; higher = the model is pulled harder to the right answer):",
        "",
    ]
    out += _table(
        ["slot", "mean log-prob [95%]"],
        [[str(c["slot"]), f"{c['mean']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]"] for c in lk["slots"]],
    )
    out.append("")
    mve = lk.get("middle_vs_edges")
    if mve and mve.get("middle_slots"):
        mid = mve["middle_slots"]
        out += [
            f"Paired per question, middle slots {mid[0]}-{mid[-1]}: {_paired_text('last slot', mve['vs_last'])}; "
            f"{_paired_text('first slot', mve['vs_first'])}.",
            "",
        ]
    for dist, table in (lk.get("strategies") or {}).items():
        if not table:
            continue
        out += [f"Expected likelihood by strategy, gold rank distribution `{dist}`:", ""]
        out += _table(
            ["strategy", "expected log-prob", "gain vs `none` [paired 95%]"],
            [
                [
                    f"`{name}`",
                    f"{v['expected']:.3f}",
                    f"{v['gain_over_none']:+.3f} [{v['gain_ci'][0]:+.3f}, {v['gain_ci'][1]:+.3f}]"
                    if "gain_ci" in v
                    else "-",
                ]
                for name, v in table.items()
            ],
        )
        out.append("")
    return out


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The whole summary (every k) as Markdown: slot accuracy, controls, derived ranks, headline, checks."""
    model = summary.get("model") or {}
    title = f"{model.get('name', 'model')} ({model.get('spec', '?')})"
    out = [f"# Strategy benchmark: {title}", ""]
    if summary.get("command"):
        out += ["```bash", str(summary["command"]), "```", ""]
    calls = summary.get("calls") or {}
    if calls:
        out += [
            f"{calls.get('rows', 0)} rows, {calls.get('answered', 0)} model calls, "
            f"{calls.get('model_seconds', 0):,.0f} s of model time, "
            f"{calls.get('prompt_tokens_evaluated', 0):,} prompt tokens evaluated.",
            "",
        ]
    for k, s in summary["by_k"].items():
        out += _k_section(str(k), s)
    return "\n".join(out).rstrip() + "\n"
