"""Pair two compression arms of one ``litm bench --compress`` run, question by question, at every ratio and slot.

``compress-summary.md`` pairs every arm with the original prompt and with ``drop``; this compares two
compressors directly (for example the fast ``static`` scorer against ``embed``): the difference in hits
(first-line match) and in the gold answer's likelihood, with 95% paired bootstrap intervals, as a Markdown
table on stdout.

Usage::

    python scripts/compare_compress_arms.py docs/results/bench-qwen05-nq-k20-compress-static \\
        static:embed static-edges:embed-edges > docs/results/bench-qwen05-nq-k20-compress-static/static-vs-embed.md
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from litm.bench._compression_summary import _diff, _paired_hits, _paired_values

Cell = tuple[str, float, int]


def _cells(run: Path) -> tuple[dict[Cell, dict[str, bool]], dict[Cell, dict[str, float]]]:
    hits: dict[Cell, dict[str, bool]] = defaultdict(dict)
    likelihood: dict[Cell, dict[str, float]] = defaultdict(dict)
    with (run / "bench.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("phase") != "compress" or "slot" not in row:
                continue
            cell = (str(row["arm"]), float(row["ratio"]), int(row["slot"]))
            hits[cell][str(row["qid"])] = bool(row["hit"])
            if row.get("likelihood") is not None:
                likelihood[cell][str(row["qid"])] = float(row["likelihood"])
    return hits, likelihood


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a litm bench output folder with compression rows")
    parser.add_argument("pairs", nargs="+", help="A:B arm pairs (A minus B)")
    args = parser.parse_args()
    hits, likelihood = _cells(args.run)
    ratios = sorted({x for _, x, _ in hits})
    slots = sorted({s for _, _, s in hits})
    print(f"# Compression arms paired: {args.run.name}\n")
    print("Differences A - B on the same questions (95% paired bootstrap intervals).\n")
    print("| A | B | ratio | slot | n | hits diff [95% CI] | likelihood diff [95% CI] |")
    print("|---|---|---|---|---|---|---|")
    for pair in args.pairs:
        a, _, b = pair.partition(":")
        for x in ratios:
            for s in slots:
                ca, cb = (a, x, s), (b, x, s)
                if ca not in hits or cb not in hits:
                    continue
                h = _paired_hits(hits[ca], hits[cb])
                lk = _paired_values(likelihood.get(ca, {}), likelihood.get(cb, {}))
                n = h["n"] if h else 0
                print(f"| {a} | {b} | 1/{x:g} | {s} | {n} | {_diff(h)} | {_diff(lk)} |")


if __name__ == "__main__":
    main()
