"""Placement speed: litm against LangChain's LongContextReorder on the same input, in the same run.

Reports, for 10 and 100 documents (issue 18's goals: fixed strategies within 3x of LangChain, the profile
strategy within 5x; ``--sizes`` adds more), the median time of litm's ``place`` (pyramid, edges, langchain,
profile with a measured-style profile, and pyramid on strings, dicts and ``(Document, score)`` pairs) and of
``LongContextReorder.transform_documents`` on LangChain Documents, as a ratio (litm / LangChain; below 1
means litm is faster). litm does more per call (validation, coercion, a plan with per-slot reasons and
relevance), so the ratio is the price of that, measured rather than assumed.

The plan's explanation is computed when first asked for (``plan.slots``), so a call that only reads the
placed items does not pay for it; after timing, every variant's plan is checked to explain every slot.

Every function is timed as a loop of calls lasting at least 5 ms (a single call of a microsecond or two is
too close to the timer's own cost), in ``--repeat`` rounds that time the baseline and every variant one
after the other; the ratio is the median of the rounds' ratios, so load that comes and goes on a shared
machine hits both sides of a ratio alike. A last row per size, ``(validation
floor)``, times the bare checks any placement with litm's errors must make of the LangChain Documents
(see :func:`validation_floor`): a lower bound for the ``place`` rows, not a variant.

Before timing, it checks that every variant gives the result it must (``langchain`` the same order as
``LongContextReorder``, the others the same items as a plain ``place`` call), so a faster path cannot be a
wrong one.

    /work/main/.venv/bin/python benchmarks/bench_placement.py [--repeat 7] [--sizes 10,100]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import time
from collections.abc import Callable
from operator import attrgetter, methodcaller
from typing import Any

from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document

import litm
from litm.placement import PlacementOptions
from litm.placement._profile import PositionProfile


def loop_size(fn: Callable[[], Any]) -> int:
    """How many calls of ``fn`` take at least 5 ms (a single call of a microsecond or two is too close to the
    timer's own cost and to one-off cache misses to time)."""
    fn()  # warm-up: imports, caches
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= 5e-3:
            return number
        number *= 2


def per_call(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, list[float]]:
    """Seconds per call of every function, ``repeat`` rounds; each round times every function once, one
    after the other, so a burst of load on a shared machine hits a round's baseline and variants alike."""
    sizes = {name: loop_size(fn) for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(per_call(fn, sizes[name]))
    return times


BASE, FLOOR = "LongContextReorder", "(validation floor)"
_FIELDS = attrgetter("page_content", "metadata", "id")
_META_KEYS = frozenset(("id", "doc_id", "document_id", "score", "relevance_score"))
_get_score = methodcaller("get", "score")


def validation_floor(docs: list[Document]) -> object:
    """The least a placement that keeps litm's errors must check of LangChain Documents before ordering
    them (one type, text strings, metadata dicts, ids, finite float scores), as whole-list passes of C
    builtins and nothing else: no ranking, no plan. Timed as a floor for the goal, not as a variant."""
    if len(set(map(type, docs))) != 1:
        return None
    texts, metas, ids = zip(*map(_FIELDS, docs), strict=True)
    if set(map(type, texts)) != {str} or set(map(type, metas)) != {dict} or ids.count(None) != len(docs):
        return None
    if all(map(_META_KEYS.isdisjoint, metas)):
        return True
    scores = list(map(_get_score, metas))
    return set(map(type, scores)) == {float} and all(map(math.isfinite, scores))


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
        by_distance = litm.place(
            pairs, "pyramid", rank_by="score", placement=PlacementOptions(higher_is_better=False)
        ).items
        assert [position[id(p[0])] for p in by_distance] == pyramid_order

        variants: dict[str, Callable[[], Any]] = {
            "langchain": lambda docs=docs: litm.place(docs, "langchain"),
            "pyramid": lambda docs=docs: litm.place(docs, "pyramid"),
            "edges": lambda docs=docs: litm.place(docs, "edges"),
            "profile(measured)": lambda docs=docs: litm.place(
                docs, "profile", placement=PlacementOptions(profile=measured)
            ),
            "pyramid+score": lambda docs=docs: litm.place(docs, "pyramid", rank_by="score"),
            "pyramid strings": lambda texts=texts: litm.place(texts, "pyramid"),
            "pyramid dicts+score": lambda records=records: litm.place(records, "pyramid", rank_by="score"),
            "pyramid pairs+distance": lambda pairs=pairs: litm.place(
                pairs, "pyramid", rank_by="score", placement=PlacementOptions(higher_is_better=False)
            ),
        }
        times = interleaved(
            {
                BASE: lambda docs=docs: reorder.transform_documents(list(docs)),
                **variants,
                FLOOR: lambda docs=docs: validation_floor(docs),
            },
            args.repeat,
        )
        base = statistics.median(times[BASE])
        for name, samples in times.items():
            if name == BASE:
                continue
            # The ratio of each round (a variant and the baseline timed next to each other), then the median.
            ratio = statistics.median(t / b for t, b in zip(samples, times[BASE], strict=True))
            t = statistics.median(samples)
            if name == FLOOR:
                print(f"{n:>6}  {name:<22} {t * 1e3:>9.4f} {base * 1e3:>13.4f} {ratio:>7.2f}")
                continue
            goal = 5.0 if name.startswith("profile") else 3.0
            met = ratio <= goal
            misses += not met
            print(
                f"{n:>6}  {name:<22} {t * 1e3:>9.4f} {base * 1e3:>13.4f} {ratio:>7.2f} "
                f"{goal:>5.0f} {'yes' if met else 'NO':>4}"
            )
            plan = variants[name]()
            assert len(plan.slots) == n and all(s.reason for s in plan.slots), name  # explained when asked
    print(f"goals missed: {misses}")


if __name__ == "__main__":
    main()
