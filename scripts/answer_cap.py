"""Write the table of ``docs/results/answer-cap/README.md``: how many replies each committed run cut off at its cap.

Every ``docs/results/*/bench.jsonl`` is read with :func:`litm.bench._cutoff.cut_off`: the scored replies (the
quote-first arm's, which have a cap of their own, left out), those that reached the run's ``max_tokens``
(``finish_reason == "length"``), and those of them that missed. The table replaces the part of the page between
its two markers; the prose around it is written by hand. ``tests/test_answer_cap.py`` fails when the committed
table is stale.

The second table pairs each rerun at a higher cap (:data:`RERUNS`) with the committed run it repeats: the same
keys, prompts checked equal by ``prompt_sha``, so the only change is the cap. Per cell (the original prompt at a
slot, a compression arm at a slot, the controls): hits at each cap and the paired difference with its 95%
interval.

Usage:
    python scripts/answer_cap.py            # rewrite the table
    python scripts/answer_cap.py --check    # exit 1 when the committed table is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from strategy_evidence import write_page

from litm.bench._cutoff import cut_off
from litm.bench._likelihood import paired_difference
from litm.bench._rows import rows_of
from litm.eval._results import read_rows, read_settings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
PAGE = RESULTS / "answer-cap" / "README.md"
START = "<!-- answer-cap table: written by scripts/answer_cap.py -->"
END = "<!-- answer-cap table end -->"
PAIRED_START = "<!-- answer-cap paired: written by scripts/answer_cap.py -->"
PAIRED_END = "<!-- answer-cap paired end -->"
#: Each rerun at a higher cap, and the committed runs whose prompts it repeats (a compression run made with
#: ``--baseline`` holds only the compressed prompts; the original ones are in its baseline).
RERUNS: dict[str, tuple[str, ...]] = {
    "bench-qwen15-nq-k20-compress": ("bench-qwen15-nq-k20-cap16",),
    "bench-qwen05-nq-k20-cap64": ("bench-qwen05-nq-k20-compress", "bench-qwen05-nq-k20"),
}


def table(results: Path = RESULTS) -> str:
    """The Markdown table, one row per committed benchmark run, in folder order."""
    lines = [
        "| run | model | cap (tokens) | replies | reached the cap | reached it and missed |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for path in sorted(results.glob("*/bench.jsonl")):
        run = read_settings(path.parent / "run.json")["identity"]
        counts = cut_off(rows_of(read_rows(path)))
        if not counts.replies:
            continue
        share = f"{counts.at_cap / counts.replies:.2f}"
        missed = f"{counts.missed / counts.replies:.2f}"
        name = path.parent.name
        lines.append(
            f"| [{name}](../{name}/README.md) | `{run['model']}` | {run['max_tokens']} | {counts.replies:,} "
            f"| {share} | {missed} |"
        )
    return "\n".join(lines) + "\n"


def _rows(folder: Path) -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in read_rows(folder / "bench.jsonl")}


def _cell(row: dict[str, Any]) -> tuple[tuple[int, str, int], str]:
    """The row's cell, with its place in the table: the original by slot, the compression arms by arm and slot,
    then the controls."""
    if row["phase"] == "slot":
        return (0, "", row["slot"]), f"original, slot {row['slot']}"
    if row["phase"] == "compress":
        return (1, row["arm"], row["slot"]), f"`{row['arm']}` 1/{row['ratio']:g}, slot {row['slot']}"
    name = {"closed": "closed book", "oracle": "gold passage alone"}.get(row["phase"], row["phase"])
    return (2, name, 0), name


def _cap(folder: Path) -> int:
    return int(read_settings(folder / "run.json")["identity"]["max_tokens"])


def paired(rerun: str, committed: tuple[str, ...], results: Path = RESULTS) -> str:
    """The Markdown table pairing ``rerun`` (a higher cap) with the ``committed`` runs (one cap) on the prompts
    both answered."""
    new = _rows(results / rerun)
    old = {key: row for folder in committed for key, row in _rows(results / folder).items()}
    caps = sorted({_cap(results / folder) for folder in committed})
    if len(caps) != 1:
        raise SystemExit(f"{', '.join(committed)}: runs at different caps ({caps})")
    caps.append(_cap(results / rerun))
    cells: dict[tuple[tuple[int, str, int], str], list[tuple[bool, bool]]] = {}
    for key, row in new.items():
        before = old.get(key)
        if before is None:
            continue
        if before["prompt_sha"] != row["prompt_sha"]:
            raise SystemExit(f"{rerun}: {key} is not the prompt {', '.join(committed)} answered")
        cells.setdefault(_cell(row), []).append((bool(before["hit"]), bool(row["hit"])))
    lines = [
        f"| prompt | n | hits at {caps[0]} | hits at {caps[1]} | difference [95% CI] | up / down |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (_, cell), pairs in sorted(cells.items()):
        d = paired_difference([float(b) - float(a) for a, b in pairs])
        n = len(pairs)
        lines.append(
            f"| {cell} | {n} | {sum(a for a, _ in pairs) / n:.2f} | {sum(b for _, b in pairs) / n:.2f} "
            f"| {d['diff']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}] | {d['higher']} / {d['lower']} |"
        )
    return f"{rerun} against {' and '.join(committed)}:\n\n" + "\n".join(lines) + "\n"


def _replace(text: str, start: str, end: str, body: str) -> str:
    head, rest = text.split(start + "\n", 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}{end}{tail}"


def page(text: str, results: Path = RESULTS) -> str:
    """``text`` (the page) with the parts between the markers replaced by the current tables."""
    text = _replace(text, START, END, table(results))
    reruns = [paired(new, old, results) for new, old in RERUNS.items() if (results / new / "bench.jsonl").is_file()]
    return _replace(text, PAIRED_START, PAIRED_END, "\n".join(reruns))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed table is stale")
    args = parser.parse_args(argv)
    return write_page(page(PAGE.read_text(encoding="utf-8")), PAGE, args.check, Path(__file__).name)


if __name__ == "__main__":
    sys.exit(main())
