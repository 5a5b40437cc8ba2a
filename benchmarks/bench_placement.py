"""Placement speed: litm against LangChain's LongContextReorder on the same input, in the same run.

Reports, for 10 and 100 documents (issue 18's goals: fixed strategies within 3x of LangChain, the profile
strategy within 5x; ``--sizes`` adds more), the median time of litm's ``place`` (pyramid, edges, langchain,
profile with a measured-style profile, and pyramid on strings, dicts and ``(Document, score)`` pairs) and of
``LongContextReorder.transform_documents`` on LangChain Documents, as a ratio (litm / LangChain; below 1
means litm is faster). litm does more per call (validation, coercion, a plan with per-slot reasons and
relevance), so the ratio is the price of that, measured rather than assumed.

The plan's explanation is computed when first asked for (``plan.slots``), so a call that only reads the
placed items does not pay for it; after timing, every variant's plan is checked to explain every slot.

Before timing, it checks that every variant gives the result it must (``langchain`` the same order as
``LongContextReorder``, the others the same items as a plain ``place`` call), so a faster path cannot be a
wrong one.

    /work/main/.venv/bin/python benchmarks/bench_placement.py [--repeat 7] [--sizes 10,100]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document

import litm
from litm.placement.profile import PositionProfile


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up: imports, caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sizes", default="10,100")
    args = ap.parse_args()
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())
    reorder = LongContextReorder()
    measured = PositionProfile.from_weights([0.82, 0.61, 0.55, 0.58, 0.9], name="measured-like")
    print(f"{'n':>6}  {'variant':<22} {'litm ms':>9} {'langchain ms':>13} {'ratio':>7} {'goal':>5} {'met':>4}")
    misses = 0
    for n in (int(x) for x in args.sizes.split(",")):
        docs = [Document(page_content=f"passage {i} " * 20, metadata={"score": 1 - i / n}) for i in range(n)]
        texts = [d.page_content for d in docs]
        records = [{"id": f"d{i}", "text": d.page_content, "score": 1 - i / n} for i, d in enumerate(docs)]
        pairs = [(d, i / n) for i, d in enumerate(docs)]  # distances, as most vector stores return them
        theirs = reorder.transform_documents(list(docs))
        ours = litm.place(docs, "langchain").items
        assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs, strict=True)), n
        position = {id(d): i for i, d in enumerate(docs)}
        pyramid_order = [position[id(d)] for d in litm.place(docs, "pyramid").items]
        assert [int(t.split()[1]) for t in litm.place(texts, "pyramid").items] == pyramid_order
        assert [int(r["id"][1:]) for r in litm.place(records, "pyramid", rank_by="score").items] == pyramid_order
        by_distance = litm.place(pairs, "pyramid", rank_by="score", higher_is_better=False).items
        assert [position[id(p[0])] for p in by_distance] == pyramid_order

        base = median_time(lambda docs=docs: reorder.transform_documents(list(docs)), args.repeat)
        variants: dict[str, Callable[[], Any]] = {
            "langchain": lambda docs=docs: litm.place(docs, "langchain"),
            "pyramid": lambda docs=docs: litm.place(docs, "pyramid"),
            "edges": lambda docs=docs: litm.place(docs, "edges"),
            "profile(measured)": lambda docs=docs: litm.place(docs, "profile", profile=measured),
            "pyramid+score": lambda docs=docs: litm.place(docs, "pyramid", rank_by="score"),
            "pyramid strings": lambda texts=texts: litm.place(texts, "pyramid"),
            "pyramid dicts+score": lambda records=records: litm.place(records, "pyramid", rank_by="score"),
            "pyramid pairs+distance": lambda pairs=pairs: litm.place(
                pairs, "pyramid", rank_by="score", higher_is_better=False
            ),
        }
        for name, fn in variants.items():
            t = median_time(fn, args.repeat)
            goal = 5.0 if name.startswith("profile") else 3.0
            met = t / base <= goal
            misses += not met
            print(
                f"{n:>6}  {name:<22} {t * 1e3:>9.3f} {base * 1e3:>13.3f} {t / base:>7.2f} "
                f"{goal:>5.0f} {'yes' if met else 'NO':>4}"
            )
            plan = fn()
            assert len(plan.slots) == n and all(s.reason for s in plan.slots), name  # explained when asked
    print(f"goals missed: {misses}")


if __name__ == "__main__":
    main()
