"""A self-contained HTML report: one file, plots inlined as base64 PNG, no scripts, opens offline.

It states what was measured (model, mode, grid, corpus, layouts, command), what the curves show (dead
zone, effective length, recommended budget) and what they do not (edge artefacts, copies, closed-book
answers, easy distractors), with example misses so a reader can check the miss classes by eye.

Example:
    >>> write_report("out/", analyses, rows, settings)  # doctest: +SKIP
    PosixPath('out/report.html')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from litm.eval._html import CSS, colour, esc, img_tag
from litm.eval._scoring import MISS_CLASSES
from litm.eval._stats import Cell
from litm.probe._analysis import TaskAnalysis
from litm.probe._export import recommended_max_input_tokens
from litm.probe._rows import ProbeRow

__all__ = ["write_report"]

_HOW_TO_READ = [
    "Each cell is hits out of trials, with a Wilson 95% interval: with 10 trials a cell is only good to about "
    "plus or minus 0.3, so read the pooled row and the significance tests, not single cells.",
    "Depth 0 is the start of the context (right after the document label); depth 1 is its end, next to the "
    "question. Haystack lengths are exact in the model's own tokens (whole prompt); kv and docqa fill the "
    "length with whole items, so their prompts can be a little shorter.",
    "A dip at the edges is not a dead zone: small base models tend to echo the question when the needle touches "
    "a prompt boundary. The 'buffered' layout moves the haystack away from those boundaries; compare its edges.",
    "A hit at depth 0 can be a copy of the first item: see the copy rates. The closed-book control shows what the "
    "model answers with no context at all (the invented facts cannot be known; docqa questions can).",
    "docqa distractors are other questions' gold passages, not retrieved near-misses as in Liu et al., so it is "
    "easier than their setting. Effective length is relative to the model's own short-context accuracy.",
    "Local models reuse the KV cache of the previous prompt. In 'aligned' mode (the default) only whole 512-token "
    "chunks are reused and answers are identical to a cold run; in 'full' mode every shared token is reused, which "
    "is faster but can flip a greedy answer. The mode is recorded in every row and above.",
]


def _cell_td(c: Cell) -> str:
    if not c.n:
        return "<td>-</td>"
    lo, hi = c.ci
    return (
        f'<td style="background:{colour(c.acc)}">{c.acc:.2f} <span class="small">[{lo:.2f}, {hi:.2f}] '
        f"{c.hits}/{c.n}</span></td>"
    )


def _table(a: TaskAnalysis) -> str:
    head = "".join(f"<th>{d:g}</th>" for d in a.depths)
    rows = [f"<tr><th>length \\ depth</th>{head}<th>mid-depth</th></tr>"]
    for length in a.lengths:
        tds = "".join(_cell_td(a.table.get((length, d), Cell(0, 0))) for d in a.depths)
        rows.append(f"<tr><th>{length}</th>{tds}{_cell_td(a.mid.get(length, Cell(0, 0)))}</tr>")
    rows.append(f"<tr><th>all lengths</th>{''.join(_cell_td(a.pooled[d]) for d in a.depths)}<td></td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _miss_table(a: TaskAnalysis) -> str:
    head = "".join(f"<th>{d:g}</th>" for d in a.depths)
    rows = [f'<tr><th class="l">miss class \\ depth</th>{head}</tr>']
    for cls in MISS_CLASSES:
        tds = "".join(f"<td>{a.misses[d][cls] if d in a.misses else 0}</td>" for d in a.depths)
        rows.append(f'<tr><td class="l">{cls}</td>{tds}</tr>')
    return "<table>" + "".join(rows) + "</table>"


def _layout_table(a: TaskAnalysis) -> str:
    head = "".join(f"<th>{d:g}</th>" for d in a.depths)
    rows = [f'<tr><th class="l">layout \\ depth</th>{head}</tr>']
    for name, cells in sorted(a.by_layout.items()):
        tds = "".join(_cell_td(cells.get(d, Cell(0, 0))) for d in a.depths)
        rows.append(f'<tr><td class="l">{esc(name)}</td>{tds}</tr>')
    return "<table>" + "".join(rows) + "</table>"


def _examples(rows: Sequence[ProbeRow], task: str, per_class: int = 3) -> str:
    by: dict[str, list[ProbeRow]] = defaultdict(list)
    for r in rows:
        if r.get("task") == task and r.get("kind") == "trial" and not r.get("hit"):
            by[str(r.get("miss"))].append(r)
    items = []
    for cls in MISS_CLASSES:
        for r in by.get(cls, [])[:per_class]:
            items.append(
                f'<tr><td class="l">{cls}</td><td>{r["length"]}</td><td>{r["depth"]:g}</td>'
                f'<td class="l">{esc(r.get("question", ""))[:90]}</td>'
                f'<td class="l">{esc(", ".join(r["answers"]))[:40]}</td>'
                f'<td class="l"><code>{esc(r.get("first_line", ""))[:100]}</code></td></tr>'
            )
    if not items:
        return "<p>No misses.</p>"
    head = '<tr><th class="l">class</th><th>length</th><th>depth</th><th class="l">question</th>'
    head += '<th class="l">expected</th><th class="l">first line of the answer</th></tr>'
    return "<table>" + head + "".join(items) + "</table>"


def _task_section(
    a: TaskAnalysis, rows: Sequence[ProbeRow], plots: Mapping[str, Path], window: int | None
) -> str:
    rec, why = recommended_max_input_tokens(a, window)
    parts = [f"<h2>Task <code>{esc(a.task)}</code></h2>", '<div class="box"><ul>']
    parts += [f"<li>{esc(f)}</li>" for f in a.findings]
    parts.append(f"<li>recommended <code>max_input_tokens</code>: <b>{esc(rec)}</b> ({esc(why)})</li></ul></div>")
    parts.append("<h3>Accuracy by length and depth</h3>" + _table(a))
    for key in ("accuracy", "heatmap"):
        if f"{a.task}-{key}" in plots:
            parts.append(img_tag(plots[f"{a.task}-{key}"]))
    parts.append("<h3>Why answers missed</h3>" + _miss_table(a))
    parts.append(
        f"<p>Copies: {a.copy_first_rate:.0%} of trials with the answer elsewhere returned the first item or span, "
        f"{a.copy_last_rate:.0%} the last.</p>"
    )
    parts.append("<h3>Layouts (edge artefact check)</h3>" + _layout_table(a))
    parts.append(f"<p>{esc(a.edge_check.verdict)}. Echoes among edge misses: {a.edge_check.echo_share_edges:.0%}; ")
    parts.append(f"among inner misses: {a.edge_check.echo_share_inner:.0%}.</p>")
    cb = a.closed_book
    parts.append(f"<h3>Closed-book control</h3><p>{cb.hits}/{cb.n} answered correctly with no context.</p>")
    parts.append("<h3>Example misses</h3>" + _examples(rows, a.task))
    return "\n".join(parts)


def write_report(
    out_dir: str | Path,
    analyses: Mapping[str, TaskAnalysis],
    rows: Sequence[ProbeRow],
    settings: Mapping[str, Any],
    *,
    plots: Sequence[Path] = (),
    context_window: int | None = None,
    extra: Sequence[str] = (),
) -> Path:
    """Write ``report.html`` into ``out_dir`` and return its path."""
    out = Path(out_dir)
    model = settings.get("model") or {}
    config = settings.get("config") or {}
    corpus = settings.get("corpus") or {}
    trials = [r for r in rows if r.get("kind") == "trial"]
    latency = sum(float(r.get("latency_s") or 0) for r in rows)
    prefill = sum(int(r.get("input_tokens") or 0) - int(r.get("cached_tokens") or 0) for r in rows)
    by_name = {p.stem: p for p in plots}
    title = f"litm probe: {model.get('name', '?')}"
    meta = [
        ("model", f"{model.get('name', '?')} (spec {model.get('spec', '?')})"),
        ("evaluation mode", model.get("mode", "?")),
        ("tasks", ", ".join(config.get("tasks", []))),
        ("lengths (tokens)", ", ".join(str(x) for x in config.get("lengths", []))),
        ("depths", ", ".join(f"{d:g}" for d in config.get("depths", []))),
        ("trials per cell", config.get("trials")),
        ("layouts", ", ".join(config.get("layouts", [])) if not config.get("template") else "custom template"),
        ("filler corpus", f"{corpus.get('name')} ({corpus.get('sentences', '?')} sentences)" if corpus else "none"),
        ("calls", f"{len(rows)} ({len(trials)} trials, {len(rows) - len(trials)} closed-book)"),
        ("model time", f"{latency:.0f} s; {prefill} prompt tokens evaluated (rest reused from the KV cache)"),
        ("command", settings.get("command") or "(Python API)"),
        ("litm", settings.get("litm_version", "")),
    ]
    body = [f"<h1>{esc(title)}</h1>", "<table>"]
    body += [f'<tr><th class="l">{esc(k)}</th><td class="l">{esc(v)}</td></tr>' for k, v in meta]
    body.append("</table>")
    body += [f"<p>{esc(x)}</p>" for x in extra]
    body += [_task_section(a, rows, by_name, context_window) for a in analyses.values() if a.lengths]
    body.append("<h2>How to read this report</h2><ul>" + "".join(f"<li>{esc(x)}</li>" for x in _HOW_TO_READ) + "</ul>")
    doc = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    path = out / "report.html"
    path.write_text(doc, encoding="utf-8")
    return path
