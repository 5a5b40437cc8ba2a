"""Does the answer survive compression? Answer recall of each compression setting, no target model needed.

For each NQ-Open question of the benchmark (k passages, the gold passage among BM25-mined distractors, the
same items ``litm bench`` uses) the passages are compressed to ``1/ratio`` of their tokens in the target
model's tokenizer, and the run records whether an accepted answer is still in the kept text (the
benchmark's ``contains_answer``) and whether any of the gold passage survived. The target model never
answers, so this runs in minutes and chooses between settings before the hours-long accuracy run: a
setting that loses the answer cannot be rescued by the model.

``drop`` (whole documents by retriever rank, what ``fit`` does) depends on where the retriever ranked the
gold passage, so it is measured at each ``--slots`` rank; sentence compression with a question-aware scorer
does not depend on the input order (the scores do not), so it is measured once per question.

``--data hotpotqa`` (or ``2wiki``) measures multi-hop questions the same way, their gold paragraphs at the
``--design`` slots, and records ``every_gold_kept``: whether text of every supporting paragraph survived.

    .venv/bin/python benchmarks/compress_recall.py --questions 100 --k 20 --ratios 2,4 \\
        --target local:qwen2.5-coder-0.5b --json docs/results/compress-recall/recall.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

from litm.bench._data import contains_answer
from litm.bench._design import gold_slots
from litm.bench._sources import load_bench_items
from litm.compress import CompressOptions, ScoreCache, compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import get_scorer
from litm.placement._documents import Doc

#: name -> compress() options. ``drop`` is the baseline; the rest choose sentences.
SETTINGS: dict[str, dict[str, Any]] = {
    "drop": {"scorer": "retriever", "unit": "document"},
    "lead": {"scorer": "retriever"},
    "embed": {"scorer": "embed"},
    "embed-terms": {"scorer": "embed", "protect": "terms"},
    "embed-nocoarse": {"scorer": "embed", "coarse": False},
    "embed-flat": {"scorer": "embed", "rank_weight": 0.0},
    "embed-cf2-rw5": {"scorer": "embed", "coarse_factor": 2.0, "rank_weight": 0.5},
    "embed-cf2-rw5-terms": {"scorer": "embed", "coarse_factor": 2.0, "rank_weight": 0.5, "protect": "terms"},
    "embed-cf125": {"scorer": "embed", "coarse_factor": 1.25},
    "embed-doc": {"scorer": "embed", "unit": "document"},
    "static": {"scorer": "static"},
    "embed-link": {"scorer": "embed", "link": "titles"},
    "static-link": {"scorer": "static", "link": "titles"},
    "lm": {"scorer": "lm"},
    "lm-terms": {"scorer": "lm", "protect": "terms"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--ratios", default="2,4")
    ap.add_argument("--slots", default="1,5,10,15,20")
    ap.add_argument("--data", default="nq", choices=("nq", "hotpotqa", "2wiki"))
    ap.add_argument("--design", default="middle", help="where a multi-hop question's golds sit (gold-set design)")
    ap.add_argument("--settings", default="drop,lead,embed,embed-terms,embed-nocoarse,embed-flat,embed-doc")
    ap.add_argument("--target", default="local:qwen2.5-coder-0.5b", help="the target model whose tokens count")
    ap.add_argument("--lm", default="local", help="the lm scorer's model")
    ap.add_argument("--cache", default=None, help="a score cache file (JSON Lines) to reuse")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    ratios = [float(x) for x in args.ratios.split(",")]
    slots = [int(x) for x in args.slots.split(",")]
    names = args.settings.split(",")
    items, _ = load_bench_items(args.data, questions=args.questions, k=args.k)
    counter = TargetCounter.of(args.target)
    cache = ScoreCache(args.cache)
    scorers = {n: get_scorer(SETTINGS[n]["scorer"], model=args.lm, cache=cache) for n in {*names}}
    results: dict[str, Any] = {}
    for name in names:
        opts = {k: v for k, v in SETTINGS[name].items() if k != "scorer"}
        for ratio in ratios:
            began = time.perf_counter()
            rows = []
            for item in items:
                for s in slots if SETTINGS[name]["scorer"] == "retriever" and not item.more_golds else [1]:
                    at = gold_slots(args.design, args.k, len(item.golds)) if item.more_golds else [s]
                    ranked = item.golds_at(at, args.k)
                    docs = [Doc(text=p.text, id=f"p{i}", title=p.title) for i, p in enumerate(ranked)]
                    gold_ids = {f"p{g - 1}" for g in at}
                    gold_id = f"p{at[0] - 1}"
                    out = compress(
                        docs, item.question, tokenizer=counter, ratio=ratio, scorer=scorers[name],
                        options=CompressOptions(**opts),
                    )  # fmt: skip
                    text = " ".join(d.text for d in out.kept_docs)
                    gold = next(c for c in out.docs if c.original.id == gold_id)
                    every_gold = all(c.kept for c in out.docs if c.original.id in gold_ids)
                    rows.append(
                        {
                            "answer": contains_answer(text, item.answers),
                            "answer_in_gold": contains_answer(gold.doc.text, item.answers),
                            "gold_kept": gold.kept,
                            "every_gold_kept": every_gold,
                            "tokens": out.tokens,
                            "original": out.original_tokens,
                            "docs": len(out.order),
                        }
                    )
            n = len(rows)
            entry = {
                "rows": n,
                "answer_recall": round(sum(r["answer"] for r in rows) / n, 4),
                "answer_in_gold": round(sum(r["answer_in_gold"] for r in rows) / n, 4),
                "gold_kept": round(sum(r["gold_kept"] for r in rows) / n, 4),
                "every_gold_kept": round(sum(r["every_gold_kept"] for r in rows) / n, 4),
                "mean_tokens": round(sum(r["tokens"] for r in rows) / n, 1),
                "mean_original": round(sum(r["original"] for r in rows) / n, 1),
                "mean_docs": round(sum(r["docs"] for r in rows) / n, 2),
                "seconds": round(time.perf_counter() - began, 1),
            }
            results[f"{name}@{ratio:g}"] = entry
            print(f"{name:16s} 1/{ratio:g}: " + ", ".join(f"{k} {v}" for k, v in entry.items()), flush=True)
    baseline = sum(contains_answer(" ".join(p.text for p in it.golds_at(list(range(1, len(it.golds) + 1)), args.k)),
                                   it.answers) for it in items)  # fmt: skip
    print(f"answer in the uncompressed documents: {baseline}/{len(items)}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps(
                {
                    "command": "python benchmarks/compress_recall.py "
                    + " ".join(f"--{k} {v}" for k, v in vars(args).items() if v is not None and k != "json"),
                    "questions": len(items),
                    "k": args.k,
                    "target": args.target,
                    "uncompressed_answer_recall": round(baseline / len(items), 4),
                    "machine": {"platform": platform.platform()},
                    "results": results,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
