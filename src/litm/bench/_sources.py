"""What a benchmark runs on: the bundled NQ, HotpotQA or 2Wiki, or your own data file, ranked as asked.

``data`` is ``nq`` (the default), ``hotpotqa``, ``2wiki`` or a path to a JSON Lines file in litm's format
(:mod:`litm.bench._datafile`). ``retriever`` says where the retriever order comes from:

============ =====================================================================================
``auto``     NQ: distractors mined by BM25 (``bm25s``) from the other questions' passages, as in the
             committed runs; HotpotQA / 2Wiki: ranked by ``bm25``; a data file: its ``rank``, else its
             ``score``, else its order
``file``     a data file's own order (its ``rank`` / ``score`` / order; the datasets' order for HotpotQA
             and 2Wiki); not for NQ
``bm25``,    litm's retrievers (:mod:`litm.retrieve`): NQ mines its distractors with them; the others
``dense``,   have each question's documents re-ranked for the question
``hybrid``
============ =====================================================================================

Example:
    >>> items, info = load_bench_items("hotpotqa", questions=3, k=10, retriever="file")
    >>> len(items), items[0].gold_ranks, info["left_out"]
    (3, (2, 5), ['5abd259d55429924427fcf1a'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from litm.bench._data import QAItem, load_items
from litm.bench._datafile import DataRecord, read_records, to_items
from litm.bench._multihop import BUNDLED, load_records
from litm.bench._retrieval import RETRIEVERS, index_folder, searcher
from litm.errors import InvalidOptionError

__all__ = ["RETRIEVER_CHOICES", "describe", "load_bench_items", "rank_records"]

RETRIEVER_CHOICES: tuple[str, ...] = ("auto", "file", *RETRIEVERS)


def _check(data: str, retriever: str) -> None:
    if retriever not in RETRIEVER_CHOICES:
        raise InvalidOptionError(f"unknown retriever {retriever!r}; choose from {', '.join(RETRIEVER_CHOICES)}")
    if data == "nq" and retriever == "file":
        raise InvalidOptionError("NQ has no document order of its own: use --retriever auto, bm25, dense or hybrid")


def rank_records(records: Sequence[DataRecord], retriever: str, corpus: str) -> list[DataRecord]:
    """Each record's documents re-ordered by ``retriever`` for its question (documents it does not find last)."""
    docs = [(f"{r.qid}\x1f{d.id}", d.title, d.text) for r in records for d in r.documents]
    search = searcher(retriever, docs, index_folder(corpus, retriever))
    out = []
    for r in records:
        found = {key: i for i, (key, _) in enumerate(search(r.question, len(docs)))}
        place = [found.get(f"{r.qid}\x1f{d.id}", len(found)) for d in r.documents]
        order = sorted(range(len(r.documents)), key=lambda i: (place[i], i))
        out.append(dataclasses.replace(r, documents=tuple(r.documents[i] for i in order), order=retriever))
    return out


def describe(data: str, retriever: str) -> str:
    """One line for ``run.json``: the data and where its ranking came from."""
    if data == "nq":
        how = "BM25 (bm25s) over other questions' passages" if retriever == "auto" else f"litm.retrieve {retriever}"
        return f"NQ-Open oracle (Liu et al. 2024 release); distractors: {how}"
    name = BUNDLED[data][1] if data in BUNDLED else str(data)
    ways = {"auto": "litm.retrieve bm25" if data in BUNDLED else "the file's rank / score / order", "file": "as given"}
    return f"{name}; documents ranked by {ways.get(retriever, f'litm.retrieve {retriever}')}"


class LoadInfo(TypedDict):
    """What :func:`load_bench_items` left out (record ids), and how many records a data file held."""

    left_out: list[str]
    records: NotRequired[int]


def load_bench_items(
    data: str, *, questions: int, k: int, retriever: str = "auto", seed: int = 0
) -> tuple[list[QAItem], LoadInfo]:
    """The first ``questions`` benchmark items of ``data`` with ``k`` documents, and what was left out."""
    _check(data, retriever)
    if data == "nq":
        mined = None if retriever == "auto" else retriever
        return load_items(questions, k=k, seed=seed, retriever=mined), {"left_out": []}
    if data in BUNDLED:
        records = load_records(data)
        corpus = data
        how = "bm25" if retriever == "auto" else retriever
    else:
        path = Path(data)
        records = read_records(path)
        corpus = f"file-{path.stem}"
        how = "file" if retriever == "auto" else retriever
    if how != "file":
        records = rank_records(records, how, corpus)
    items, left_out = to_items(records, k)
    return items[:questions], {"left_out": left_out, "records": len(records)}
