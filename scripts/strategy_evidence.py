"""Write ``docs/strategy-evidence.md``: every committed strategy gain over rank order, and the default's rule.

Reads every ``docs/results/*/bench-summary.json`` that has strategy gains:

* NQ runs (``litm bench``, slot design): each strategy's derived gain over rank order (``none``) under the
  ``decaying`` retriever distribution p(rank r) ~ 1/r, by hits (``headline``) and, where the run measured it,
  by the answer's likelihood (``likelihood.strategies``), with the paired bootstrap 95% intervals the
  summary holds. (The ``uniform`` distribution is left out: every reordering has gain 0 under it.)
* Gold-set runs (2Wiki, HotpotQA): each strategy's paired difference from ``none`` by EM, F1, hit and
  likelihood (``gold_sets.strategies.vs_none``), with its interval.

A cell is *below* when its interval lies entirely below 0, *above* when entirely above. The rule of the
default strategy (``auto``) is stated from these cells; ``tests/test_strategy_evidence.py`` regenerates the
page and fails when the committed one is stale or when a committed run puts ``edges`` (the rule's fallback)
or ``profile`` (its measured-profile branch) below rank order.

Usage:
    python scripts/strategy_evidence.py            # rewrite docs/strategy-evidence.md
    python scripts/strategy_evidence.py --check    # exit 1 when the committed page is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
PAGE = ROOT / "docs" / "strategy-evidence.md"
#: Strategy columns, in the order the benchmark lists them (``none`` is the baseline every gain is against).
STRATEGIES = ("edges", "pyramid", "langchain", "profile", "random")
#: The strategies the default (``auto``) places by: its fallback and its measured-profile branch.
DEFAULT_ARMS = ("edges", "profile")
GOLD_METRICS = ("em", "f1", "hit", "likelihood")


@dataclass(frozen=True)
class Gain:
    """One strategy's gain over rank order on one metric of one run, with its 95% interval."""

    run: str
    model: str
    data: str
    k: int
    questions: int
    metric: str
    strategy: str
    gain: float
    lo: float
    hi: float

    @property
    def verdict(self) -> str:
        return "below" if self.hi < 0 else "above" if self.lo > 0 else "null"


def data_name(command: str) -> str:
    found = re.search(r"--data\s+(\S+)", command)
    return found[1] if found else "nq"


def model_name(summary: Mapping[str, Any]) -> str:
    model = summary.get("model") or {}
    return str(model.get("name") or model.get("spec") or "?")


def read_summary(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: a bench summary must be a JSON object")
    return data


def _copies_last(summary: Path) -> tuple[int, str]:
    """Sort key: a copy keeps its original's ``run.json`` resumes and adds its own, so the original comes first."""
    run = summary.parent / "run.json"
    resumes = read_summary(run).get("resumes") if run.exists() else None
    return (len(resumes) if isinstance(resumes, list) else 0, summary.parent.name)


def summaries(results: Path = RESULTS) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(run, bench summary)`` of every committed run, a run copied to add arms after its original."""
    for path in sorted(results.glob("*/bench-summary.json"), key=_copies_last):
        yield path.parent.name, read_summary(path)


def write_page(page: str, out: Path, check: bool, script: str) -> int:
    """Write ``page`` to ``out``; with ``check``, only say whether the file there is current (exit status)."""
    if check:
        current = out.read_text(encoding="utf-8") if out.is_file() else ""
        if current != page:
            print(f"{out} is stale: run python scripts/{script}", file=sys.stderr)
            return 1
        return 0
    out.write_text(page, encoding="utf-8")
    print(f"wrote {out}")
    return 0


def gains(results: Path = RESULTS) -> list[Gain]:
    """Every strategy gain over rank order in the bench summaries under ``results``, run by run."""
    out: list[Gain] = []
    seen: set[tuple[object, ...]] = set()
    for run, summary in summaries(results):
        for g in _run_gains(run, summary):
            # A run that copies another to add arms (cp -r, then --resume) carries the same strategy rows: count
            # each measured cell once, under the run it was copied from.
            cell = (g.model, g.data, g.k, g.questions, g.metric, g.strategy, g.gain, g.lo, g.hi)
            if cell not in seen:
                seen.add(cell)
                out.append(g)
    return sorted(out, key=lambda g: g.run)  # stable: each run's cells keep their order


def _run_gains(run: str, summary: Mapping[str, Any]) -> Iterator[Gain]:
    model, data = model_name(summary), data_name(str(summary.get("command", "")))
    for k, block in sorted((summary.get("by_k") or {}).items(), key=lambda kv: int(kv[0])):
        questions = int(block.get("questions", 0))
        hits = (block.get("headline") or {}).get("decaying") or {}
        likelihood = ((block.get("likelihood") or {}).get("strategies") or {}).get("decaying") or {}
        for metric, table in (("hits", hits), ("likelihood", likelihood)):
            for name in STRATEGIES:
                cell = table.get(name)
                if cell and cell.get("gain_ci") is not None:
                    lo, hi = cell["gain_ci"]
                    yield Gain(run, model, data, int(k), questions, metric, name, cell["gain_over_none"], lo, hi)
    gold = (summary.get("gold_sets") or {}).get("by_k") or {}
    for k, block in sorted(gold.items(), key=lambda kv: int(kv[0])):
        strategies = block.get("strategies") or {}
        questions = int(strategies.get("questions", block.get("questions", 0)))
        vs_none = strategies.get("vs_none") or {}
        for metric in GOLD_METRICS:
            for name in STRATEGIES:
                cell = (vs_none.get(name) or {}).get(metric)
                if cell:
                    yield Gain(run, model, data, int(k), questions, metric, name, cell["diff"], cell["lo"], cell["hi"])


def _cell(g: Gain | None) -> str:
    if g is None:
        return "-"
    mark = {"below": " **below**", "above": " **above**", "null": ""}[g.verdict]
    return f"{g.gain:+.3f} [{g.lo:+.3f}, {g.hi:+.3f}]{mark}"


def _tally(rows: list[Gain], name: str) -> tuple[int, int, int]:
    mine = [g for g in rows if g.strategy == name]
    return (
        len(mine),
        sum(g.verdict == "above" for g in mine),
        sum(g.verdict == "below" for g in mine),
    )


def _low(rows: list[Gain], name: str) -> Gain | None:
    mine = [g for g in rows if g.strategy == name]
    return min(mine, key=lambda g: (g.gain, g.lo, g.run, g.metric)) if mine else None


def _lowest(rows: list[Gain], name: str) -> str:
    low = _low(rows, name)
    return "-" if low is None else f"{_cell(low)} ({low.run}, {low.metric})"


def _at(rows: list[Gain], name: str, where: Gain | None) -> Gain | None:
    """``name``'s cell on the run and metric of ``where`` (None when it has none there)."""
    if where is None:
        return None
    return next((g for g in rows if g.strategy == name and (g.run, g.metric) == (where.run, where.metric)), None)


def render(results: Path = RESULTS) -> str:
    """The Markdown page, generated from the committed bench summaries."""
    rows = gains(results)
    by_key: dict[tuple[str, str], dict[str, Gain]] = {}
    order: list[tuple[str, str]] = []
    for g in rows:
        key = (g.run, g.metric)
        if key not in by_key:
            by_key[key] = {}
            order.append(key)
        by_key[key][g.strategy] = g
    runs = sorted({g.run for g in rows})
    lines = [
        "# Strategy evidence: the default placement, by the committed runs",
        "",
        "<!-- Generated by scripts/strategy_evidence.py from docs/results/*/bench-summary.json; do not edit by",
        "     hand. tests/test_strategy_evidence.py fails when this page is stale. -->",
        "",
        "Each cell is a strategy's gain over rank order (`none`, the retriever's order) with its paired 95%",
        "interval; **below** / **above** mark an interval entirely below / above 0. NQ runs (slot design): the",
        "derived gain under a retriever that puts the gold passage at rank r with p(r) ~ 1/r, by hits and by the",
        "accepted answer's mean log-likelihood per token. Gold-set runs (2Wiki, HotpotQA): the paired difference",
        "by exact match (em), token F1, hit and likelihood. `profile` is the measured-profile order, the profile",
        "measured on the other fold of questions.",
        "",
        "| run | model | data | k | questions | metric | " + " | ".join(STRATEGIES) + " |",
        "|---|---|---|---:|---:|---|" + "---|" * len(STRATEGIES),
    ]
    for run, metric in order:
        cells = by_key[(run, metric)]
        first = next(iter(cells.values()))
        lines.append(
            f"| [{run}](results/{run}/README.md) | {first.model} | {first.data} | {first.k} | {first.questions} "
            f"| {metric} | "
            + " | ".join(_cell(cells.get(name)) for name in STRATEGIES)
            + " |"
        )
    lines += [
        "",
        "## Tally",
        "",
        "| strategy | cells | above | below | lowest gain |",
        "|---|---:|---:|---:|---|",
    ]
    for name in STRATEGIES:
        n, above, below = _tally(rows, name)
        lines.append(f"| {name} | {n} | {above} | {below} | {_lowest(rows, name)} |")
    edges_n, edges_above, edges_below = _tally(rows, "edges")
    profile_n, _, profile_below = _tally(rows, "profile")
    _, _, pyramid_below = _tally(rows, "pyramid")
    edges_there = _at(rows, "edges", _low(rows, "pyramid"))
    raised = sorted(
        {f"{g.run} ({g.metric} {g.gain:+.3f})" for g in rows if g.strategy == "edges" and g.verdict == "above"}
    )
    lines += [
        "",
        "## The rule",
        "",
        f"Over {len(runs)} committed runs: `edges` is below rank order in {edges_below} of {edges_n} cells and above "
        f"it in {edges_above} ({'; '.join(raised) or 'none'}); the measured `profile` order is below in "
        f"{profile_below} of {profile_n}; `pyramid`, the earlier default (rank 1 last), is below in {pyramid_below}, "
        f"its lowest cell {_lowest(rows, 'pyramid')}, where `edges` is {_cell(edges_there)}.",
        "",
        '**Rule of the default (`strategy="auto"`): place by the model\'s measured position profile when one is '
        "given (`profile=`) or registered for its model spec (`litm.placement.register_profile`, from `litm probe` "
        "or `litm bench` exports); else `edges` (rank 1 first, rank 2 last), the fixed order no committed run found "
        "significantly below rank order.** Every plan says which rule applied in its note.",
        "",
        "Regenerate with `python scripts/strategy_evidence.py` after committing a run.",
        "",
    ]
    return "\n".join(lines)


def page_main(doc: str | None, page: Path, make: Callable[[], str], script: str, argv: list[str] | None) -> int:
    """The command line of a script that writes one generated page (``--check``, ``--out``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("--check", action="store_true", help="Exit 1 when the committed page is stale.")
    parser.add_argument("--out", type=Path, default=page, help="Where to write the page.")
    args = parser.parse_args(argv)
    return write_page(make(), args.out, args.check, script)


def main(argv: list[str] | None = None) -> int:
    return page_main(__doc__, PAGE, render, "strategy_evidence.py", argv)


if __name__ == "__main__":
    sys.exit(main())
