"""Retrieval quality and speed: litm's BM25, dense and hybrid retrievers beside rank-bm25 and SQLite FTS5.

Known-item retrieval on the bundled NQ-Open passages (``litm.eval._datasets.nq_rows()``): every question is
searched against all passages, and the one passage it was written for is the single relevant item. Exact
duplicate passages (same title and text) are merged first, so finding either copy counts. Passages are
indexed as a litm user's JSON Lines knowledge base would be: text chunked to the embedder's 256 word pieces,
each chunk searched and embedded with its title before it (``Chunk.indexed_text``), and every system here,
peers included, reads that same text; a hit on any chunk of the gold passage counts, and a passage's rank is
that of its first chunk in the results.

Reported per system, from one run on one machine: recall@1/5/20, MRR over the top 100, the time to build the
index, and the median and 95th-percentile latency of one query (top 100, one query at a time).

Systems: litm BM25 (bm25s + PyStemmer, the default lexical retriever); bm25s with stopwords only (what
``litm.bench`` ranks distractors with); litm dense (MiniLM int8 ONNX, exact numpy search, and FAISS); litm
hybrid (RRF of the two); BM25 candidates reranked by the dense model; and two peers: rank-bm25 (BM25Okapi
over the same analyzed terms, so only the implementation differs) and SQLite FTS5 (porter stemmer; the
question's words OR-ed, ranked by FTS5's bm25()).

A second, smaller set shows the other side: exact identifiers. The key-value records of the bundled
kv-retrieval data (``"<uuid>": "<uuid>"``, 75 per example; ``--kv-examples`` examples pooled) are indexed and
each key is looked up; its own record is the relevant one. Here the dense model has nothing to go on.

    .venv/bin/python benchmarks/bench_retrieve.py [--part all|nq|kv] [--questions 500] [--index DIR] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from litm.eval._datasets import kv_examples, nq_rows
from litm.retrieve import BM25, Dense, Hybrid, Index, Reranked
from litm.retrieve._lexical import Analyzer
from litm.retrieve._rerank import DenseReranker

DEPTH = 100
KS = (1, 5, 20)
Search = Callable[[str], list[str]]  # question -> passage keys, best first (duplicates removed)


def load(limit: int | None, seed: int) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    """Unique passages (id, title, text) and (question, gold passage id) pairs."""
    passages: dict[tuple[str, str], str] = {}
    questions: list[tuple[str, str]] = []
    for row in nq_rows():
        gold = row["ctxs"][0]
        key = (gold["title"], gold["text"])
        pid = passages.setdefault(key, f"p{len(passages)}")
        questions.append((row["question"], pid))
    if limit is not None and limit < len(questions):
        questions = random.Random(seed).sample(questions, limit)
    corpus = [{"id": pid, "title": title, "text": text} for (title, text), pid in passages.items()]
    return corpus, questions


def load_kv(examples: int, seed: int) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    """Pooled key-value records ("<uuid>": "<uuid>") and one look-up per record: the key as the query."""
    rows = random.Random(seed).sample(list(kv_examples()), examples)
    corpus: list[dict[str, str]] = []
    questions: list[tuple[str, str]] = []
    for e, row in enumerate(rows):
        for j, (key, value) in enumerate(row["ordered_kv_records"]):
            rid = f"kv{e}-{j}"
            corpus.append({"id": rid, "text": f'"{key}": "{value}"'})
            questions.append((key, rid))
    return corpus, questions


def unique(keys: list[str]) -> list[str]:
    return list(dict.fromkeys(keys))


def evaluate(name: str, search: Search, questions: list[tuple[str, str]], build_s: float) -> dict[str, Any]:
    search(questions[0][0])  # warm-up: lazy structures (the BM25 matrix, FAISS, caches)
    hits = {k: 0 for k in KS}
    rr = 0.0
    times = []
    for question, gold in questions:
        t0 = time.perf_counter()
        ranked = search(question)
        times.append(time.perf_counter() - t0)
        if gold in ranked:
            rank = ranked.index(gold) + 1
            rr += 1 / rank
            for k in KS:
                hits[k] += rank <= k
    n = len(questions)
    times.sort()
    row = {
        "system": name,
        **{f"R@{k}": hits[k] / n for k in KS},
        "MRR": rr / n,
        "build_s": build_s,
        "query_ms_median": statistics.median(times) * 1e3,
        "query_ms_p95": times[min(n - 1, int(0.95 * n))] * 1e3,
    }
    print(
        f"{name:<34} R@1 {row['R@1']:.3f}  R@5 {row['R@5']:.3f}  R@20 {row['R@20']:.3f}  MRR {row['MRR']:.3f}  "
        f"build {build_s:7.2f}s  query {row['query_ms_median']:7.2f} ms (p95 {row['query_ms_p95']:.2f})",
        flush=True,
    )
    return row


def litm_search(retriever: Any) -> Search:
    return lambda q: unique([h.chunk.key for h in retriever.search(q, DEPTH)])


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def rank_bm25_system(index: Index) -> tuple[Search, float]:
    from rank_bm25 import BM25Okapi

    analyze = Analyzer()
    chunks = index.chunks
    model, build_s = timed(lambda: BM25Okapi([analyze(c.indexed_text) for c in chunks]))

    def search(q: str) -> list[str]:
        scores = model.get_scores(analyze(q))
        order = sorted(range(len(chunks)), key=lambda i: -scores[i])[: DEPTH * 2]
        return unique([chunks[i].key for i in order if scores[i] > 0])[:DEPTH]

    return search, build_s


def fts5_system(index: Index) -> tuple[Search, float]:
    db = sqlite3.connect(":memory:")

    def build() -> None:
        db.execute("CREATE VIRTUAL TABLE p USING fts5(key UNINDEXED, text, tokenize='porter unicode61')")
        db.executemany("INSERT INTO p(key, text) VALUES (?, ?)", [(c.key, c.indexed_text) for c in index.chunks])
        db.commit()

    _, build_s = timed(build)

    def search(q: str) -> list[str]:
        words = re.findall(r"\w+", q.lower())
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        # FTS5's bm25() is lower-is-better (negative): ORDER BY rank ascending puts the best first.
        rows = db.execute("SELECT key FROM p WHERE p MATCH ? ORDER BY rank LIMIT ?", (match, DEPTH * 2)).fetchall()
        return unique([r[0] for r in rows])[:DEPTH]

    return search, build_s


def machine() -> dict[str, Any]:
    load1, load5, load15 = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "load_avg_1_5_15": [round(load1, 2), round(load5, 2), round(load15, 2)],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def run_suite(corpus: list[dict[str, str]], questions: list[tuple[str, str]], path: Path) -> list[dict[str, Any]]:
    """Index ``corpus`` at ``path`` (reused when it already holds it) and evaluate every system on it."""
    index = Index.create(path, exist_ok=True)
    report, build_s = timed(lambda: index.add_texts(corpus))
    print(f"litm index: {report.summary()} in {build_s:.1f}s ({len(index)} chunks)", flush=True)
    dense_build = build_s if report.embedded else float("nan")  # nan: reused an index built earlier

    rows = []
    bm25 = BM25(index)
    _, bm25_build = timed(bm25.prepare)
    rows.append(evaluate("litm BM25 (bm25s + PyStemmer)", litm_search(bm25), questions, bm25_build))
    plain = BM25(index, stemmer=None)
    _, plain_build = timed(plain.prepare)
    rows.append(evaluate("bm25s, stopwords only (litm.bench)", litm_search(plain), questions, plain_build))
    dense = Dense(index)
    rows.append(evaluate("litm dense (MiniLM int8, numpy)", litm_search(dense), questions, dense_build))
    faiss_dense = Dense(index, backend="faiss")
    _, faiss_build = timed(faiss_dense.prepare)
    rows.append(evaluate("litm dense (FAISS flat IP)", litm_search(faiss_dense), questions, dense_build + faiss_build))
    hybrid = Hybrid([bm25, dense])
    rows.append(evaluate("litm hybrid (RRF k=60, depth 100)", litm_search(hybrid), questions, dense_build))
    reranked = Reranked(bm25, DenseReranker(index), candidates=DEPTH)
    rows.append(evaluate("litm BM25 top 100 + dense rerank", litm_search(reranked), questions, dense_build))
    search, t = rank_bm25_system(index)
    rows.append(evaluate("rank-bm25 (BM25Okapi, same terms)", search, questions, t))
    search, t = fts5_system(index)
    rows.append(evaluate(f"SQLite FTS5 (porter, {sqlite3.sqlite_version})", search, questions, t))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| system | R@1 | R@5 | R@20 | MRR | build s | query ms (median) | query ms (p95) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['R@1']:.3f} | {r['R@5']:.3f} | {r['R@20']:.3f} | {r['MRR']:.3f} | "
            f"{r['build_s']:.2f} | {r['query_ms_median']:.2f} | {r['query_ms_p95']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("all", "nq", "kv"), default="all", help="which data set(s) to run")
    ap.add_argument("--questions", type=int, default=None, help="sample this many NQ questions (default: all 2,655)")
    ap.add_argument("--kv-examples", type=int, default=10, help="key-value examples to pool (75 records each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index", type=Path, default=None, help="keep the indexes under this folder (reused)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args()

    before = machine()
    print(f"machine: {before}", flush=True)
    root = args.index or Path(tempfile.mkdtemp())
    results: dict[str, Any] = {"seed": args.seed, "machine_before": before}
    sets = {
        "nq": ("unique passages", "questions", lambda: load(args.questions, args.seed)),
        "kv": ("key-value records", "key look-ups", lambda: load_kv(args.kv_examples, args.seed)),
    }
    for name, (items, asks, loader) in sets.items():
        if args.part not in ("all", name):
            continue
        corpus, questions = loader()
        print(f"{name.upper()}: {len(corpus)} {items}, {len(questions)} {asks}", flush=True)
        rows = run_suite(corpus, questions, root / name)
        results[name] = {"corpus": len(corpus), "questions": len(questions), "rows": rows}
        print(f"\n{table(rows)}\n", flush=True)
    results["machine_after"] = machine()
    print(f"machine after: load {results['machine_after']['load_avg_1_5_15']}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
