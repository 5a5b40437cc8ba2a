"""The pooled psc - plain difference of a committed psc run: every prompt's paired difference, bootstrapped over
questions (a question's slots move together), with the up / down counts.

The plain answer of a prompt is the baseline run's slot row where it has one, else the row's call 0 (the plain
prompt byte for byte), as ``litm bench --psc-only --baseline`` pairs them.

Usage:
    python scripts/psc_pooled.py docs/results/bench-qwen05-nq-k20-psc docs/results/bench-qwen05-nq-k20-cap64
"""

from __future__ import annotations

import ast
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from litm.eval._scoring import score_output


def pooled(run: Path, baseline: Path, draws: int = 10_000, seed: int = 0) -> str:
    rows = [json.loads(line) for line in (run / "bench.jsonl").open(encoding="utf-8") if line.strip()]
    base = {}
    for line in (baseline / "bench.jsonl").open(encoding="utf-8"):
        r = json.loads(line)
        if r.get("phase") == "slot" and r.get("k") == 20:
            base[(r["qid"], r["slot"])] = bool(r["hit"])
    diffs: dict[object, list[int]] = defaultdict(list)
    for r in rows:
        if r.get("phase") != "psc":
            continue
        key = (r["qid"], r["slot"])
        if key in base:
            plain = base[key]
        else:
            answers = r["call_answers"] if isinstance(r["call_answers"], list) else ast.literal_eval(r["call_answers"])
            plain = score_output(answers[0], answers=r["answers"], question=r["question"]).hit
        diffs[r["qid"]].append(int(r["hit"]) - int(plain))
    qs = list(diffs)
    flat = [d for q in qs for d in diffs[q]]
    rng = random.Random(seed)
    boots = sorted(
        sum(sample) / len(sample)
        for sample in ([d for q in (rng.choice(qs) for _ in qs) for d in diffs[q]] for _ in range(draws))
    )
    lo, hi = boots[int(0.025 * draws) - 1], boots[int(0.975 * draws) - 1]
    return (f"pooled {len(flat)} prompts, {len(qs)} questions: {sum(flat) / len(flat):+.3f} [{lo:+.3f}, {hi:+.3f}] "
            f"up {sum(d > 0 for d in flat)} down {sum(d < 0 for d in flat)}")  # fmt: skip


if __name__ == "__main__":
    print(pooled(Path(sys.argv[1]), Path(sys.argv[2])))
