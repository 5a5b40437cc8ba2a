"""``litm report DIR``: one offline HTML page bundling strategy-benchmark and probe results.

The page inlines every plot as a base64 PNG and carries no scripts, stylesheets or fonts from outside,
so it opens from disk with no network. It collects, from ``DIR``, each ``include`` directory and their
immediate subdirectories: benchmark runs (``bench-summary.json``, ``run.json``, ``bench-*.png``) and
probe runs (``summary.json`` + ``profile.json`` + ``*-heatmap.png``, as ``litm probe`` writes them).

Example:
    >>> write_report("litm-out/bench", include=["litm-out/probe"])  # doctest: +SKIP
    PosixPath('litm-out/bench/report.html')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from litm.bench._markdown import gain_text
from litm.errors import EvalError

# The probe report's page style and helpers, so both reports look alike.
from litm.eval._html import CSS, colour, esc, img_tag

__all__ = ["find_runs", "write_report"]

_BENCH_SUMMARY = "bench-summary.json"

_HOW_TO_READ = [
    "Slot accuracy: the gold passage is put in final slot s (1 = first document, k = last, next to the question) "
    "with the BM25-ranked distractors in order around it; every question is asked once per slot.",
    "Strategy accuracy at gold rank r is read off the measured slot the strategy sends rank r to, question by "
    "question (random: that question's seeded shuffle; profile: the profile measured on the other fold of "
    "questions, so no question shapes its own placement). The direct check runs the strategies end to end.",
    "Gap recovered = (expected accuracy - worst slot) / (best slot - worst slot): 0 means the gold passage always "
    "lands in the model's worst slot, 1 means always in its best slot (the limit of any reordering). The best and "
    "worst slots are picked on the same questions, so with few questions the gap is inflated by noise.",
    "Under a uniform gold rank every strategy scores the same expected accuracy (a placement only permutes the "
    "slots); placement can only pay off when the retriever's ranking carries signal, as in the decaying distribution.",
    "Intervals are Wilson 95%. The same questions fill every slot, so neighbouring cells are correlated.",
]


def _cell(c: Mapping[str, Any] | None) -> str:
    if not c or not c.get("n"):
        return "<td>-</td>"
    return (
        f'<td style="background:{colour(float(c["acc"]))}">{c["acc"]:.2f} '
        f'<span class="small">[{c["lo"]:.2f}, {c["hi"]:.2f}] {c["hits"]}/{c["n"]}</span></td>'
    )


def _table(head: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> str:
    out = [
        "<table><tr>"
        + "".join(f'<th class="l">{esc(h)}</th>' if i == 0 else f"<th>{esc(h)}</th>" for i, h in enumerate(head))
        + "</tr>"
    ]
    out += [f'<tr><td class="l">{esc(label)}</td>{"".join(tds)}</tr>' for label, tds in rows]
    return "".join(out) + "</table>"


def find_runs(directories: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """Benchmark and probe run directories among ``directories`` and their immediate subdirectories."""
    bench: list[Path] = []
    probe: list[Path] = []
    seen: set[Path] = set()
    for d in directories:
        for cand in [d, *sorted(p for p in d.iterdir() if p.is_dir())] if d.is_dir() else []:
            real = cand.resolve()
            if real in seen:
                continue
            seen.add(real)
            if (cand / _BENCH_SUMMARY).is_file():
                bench.append(cand)
            if (cand / "summary.json").is_file() and (cand / "profile.json").is_file():
                probe.append(cand)
    return bench, probe


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvalError(f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _bench_k(k: str, s: Mapping[str, Any], d: Path) -> str:
    kk = int(k)
    parts = [f"<h3>k = {k}: {s['questions']} evaluation questions</h3>"]
    dz = s.get("dead_zone") or {}
    if dz:
        verdict = "a dead zone" if dz["dead_zone"] else "no significant dead zone"
        parts.append(
            f'<div class="box">Middle slots {dz["middle_slots"]} pooled: {dz["middle"]["acc"]:.2f} vs edge slots '
            f"(1 and {k}) {dz['edges']['acc']:.2f}; one-sided Fisher p = {dz['p_value']}: "
            f"<b>{verdict}</b> on this task. "
            f"Closed-book {s['closed_book']['acc']:.2f} ({s['closed_book']['hits']}/{s['closed_book']['n']}), "
            f"oracle (gold passage only) {s['oracle']['acc']:.2f} ({s['oracle']['hits']}/{s['oracle']['n']}).</div>"
        )
    slots = [str(i) for i in range(1, kk + 1)]
    parts.append("<h4>Accuracy by final slot of the gold passage</h4>")
    parts.append(_table(["", *slots], [("gold in slot", [_cell(c) for c in s["slot_accuracy"]])]))
    parts.append("<h4>Accuracy by gold retrieval rank, per strategy (derived from the slot runs)</h4>")
    parts.append(
        _table(["strategy \\ gold rank", *slots], [(n, [_cell(c) for c in cells]) for n, cells in s["derived"].items()])
    )
    head = ["strategy"]
    rows: dict[str, list[str]] = {}
    for dist, table in s["headline"].items():
        head += [f"E[acc] ({dist})", f"gain vs none [paired 95%] ({dist})", f"gap recovered ({dist})"]
        for name, v in table.items():
            rows.setdefault(name, []).extend(
                f"<td>{esc(x)}</td>" for x in (f"{v['expected_acc']:.3f}", gain_text(v), f"{v['gap_recovered']:.3f}")
            )
    parts.append("<h4>Headline: expected accuracy and gap recovered under two retriever rank distributions</h4>")
    parts.append("<p>" + "; ".join(f"<b>{esc(k2)}</b>: {esc(v)}" for k2, v in s["rank_distributions"].items()) + "</p>")
    parts.append(_table(head, list(rows.items())))
    dc = s.get("direct_check") or {}
    if dc:
        parts.append("<h4>Direct check: strategies run end to end vs the derivation, same questions and ranks</h4>")
        parts.append(
            _table(
                ["strategy", "direct", "derived", "answers agree", "prompts"],
                [
                    (n, [_cell(v["direct"]), _cell(v["derived"]), f"<td>{v['agree']:.0%}</td>", f"<td>{v['n']}</td>"])
                    for n, v in dc.items()
                ],
            )
        )
    ab = s.get("ablation") or {}
    if ab:
        ab_slots = sorted({int(x) for v in ab.values() for x in v})
        parts.append("<h4>Anchor ablation: accuracy by prompt arm and gold slot</h4>")
        parts.append(
            _table(
                ["arm \\ slot", *map(str, ab_slots)],
                [(a, [_cell(v.get(str(x))) for x in ab_slots]) for a, v in ab.items()],
            )
        )
        paired = s.get("ablation_vs_plain") or {}
        if paired:
            parts.append(
                "<p>Paired against plain (same question and slot), exact McNemar: "
                + "; ".join(
                    f"{esc(a)}: {v['better']} better, {v['worse']} worse of {v['pairs']}, p = {v['p_value']:.2g}"
                    for a, v in paired.items()
                )
                + "</p>"
            )
    for png in sorted(d.glob(f"bench-k{k}-*.png")):
        parts.append(img_tag(png))
    return "\n".join(parts)


def _resumes(settings: Mapping[str, Any]) -> str:
    """Each resume with its machine; a run recorded before ``resumes`` existed kept only its last time."""
    stretches = settings.get("resumes")
    if stretches is None:
        return str(settings.get("resumed", "-"))
    return "; ".join(f"{r.get('at', '?')} on {json.dumps(r.get('machine', {}))}" for r in stretches) or "-"


def _bench_section(d: Path) -> str:
    summary = _load(d / _BENCH_SUMMARY)
    settings = _load(d / "run.json") if (d / "run.json").is_file() else {}
    model = settings.get("model") or summary.get("model") or {}
    calls = summary.get("calls") or {}
    meta = [
        ("model", f"{model.get('name', '?')} (spec {model.get('spec', '?')})"),
        (
            "evaluation mode",
            f"{model.get('mode', '?')} (aligned = KV reuse that keeps answers identical to a cold run)",
        ),
        ("data", settings.get("data", "")),
        ("command", settings.get("command") or summary.get("command") or "(Python API)"),
        ("started", f"{settings.get('started', '?')} on {json.dumps(settings.get('machine', {}))}"),
        ("resumed", _resumes(settings)),
        (
            "calls",
            f"{calls.get('rows', '?')} rows, {calls.get('answered', '?')} answered by the model, "
            f"{calls.get('model_seconds', '?')} s of model time",
        ),
        ("litm", settings.get("litm_version", "")),
    ]
    parts = [f"<h2>Strategy benchmark: <code>{esc(d.name)}</code></h2>", "<table>"]
    parts += [f'<tr><th class="l">{esc(a)}</th><td class="l">{esc(b)}</td></tr>' for a, b in meta]
    parts.append("</table>")
    parts += [_bench_k(k, s, d) for k, s in summary.get("by_k", {}).items() if s.get("questions")]
    return "\n".join(parts)


def _probe_section(d: Path) -> str:
    summary = _load(d / "summary.json")
    parts = [f"<h2>Dead-zone probe: <code>{esc(d.name)}</code></h2>"]
    for task, s in summary.items():
        if not isinstance(s, dict):
            continue
        parts.append(f"<h3>Task <code>{esc(task)}</code></h3><ul>")
        parts += [f"<li>{esc(f)}</li>" for f in s.get("findings", [])]
        parts.append("</ul>")
        for key in ("heatmap", "accuracy"):
            png = d / f"{task}-{key}.png"
            if png.is_file():
                parts.append(img_tag(png))
    if (d / "report.html").is_file():
        parts.append(f'<p class="small">Full probe report: {esc(d / "report.html")}</p>')
    return "\n".join(parts)


def write_report(
    directory: str | Path,
    *,
    include: Sequence[str | Path] = (),
    out: str | Path | None = None,
    title: str | None = None,
) -> Path:
    """Write one self-contained HTML page for the runs found in ``directory`` (and ``include``); return its path."""
    base = Path(directory)
    if not base.is_dir():
        raise EvalError(f"not a directory: {base}")
    bench, probe = find_runs([base, *(Path(p) for p in include)])
    if not bench and not probe:
        raise EvalError(f"no benchmark ({_BENCH_SUMMARY}) or probe (summary.json + profile.json) results in {base}")
    page_title = title or "litm: does placement help?"
    body = [f"<h1>{esc(page_title)}</h1>"]
    body += [_bench_section(d) for d in bench]
    if bench:
        body.append(
            "<h2>How to read the benchmark</h2><ul>" + "".join(f"<li>{esc(x)}</li>" for x in _HOW_TO_READ) + "</ul>"
        )
    body += [_probe_section(d) for d in probe]
    doc = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(page_title)}</title>'
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    path = Path(out) if out is not None else base / "report.html"
    path.write_text(doc, encoding="utf-8")
    return path
