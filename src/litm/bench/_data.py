"""Multi-document QA items from NQ-Open: a gold passage plus BM25-mined distractors that hold no answer.

The bundled NQ-Open oracle file (Liu et al.'s release, see ``litm/data/README.md``) gives each question
its accepted answers and one gold Wikipedia passage. The distractor pool is every other question's gold
passage: real, topical Wikipedia text. For each question the ``k - 1`` distractors are the pool passages
that BM25 (``bm25s``) scores highest for the question, skipping any passage that contains an accepted
answer under the metric's own normalisation (so a distractor can never be scored as a hit) and any copy
of the gold passage. Questions whose gold passage does not itself contain an answer are left out: the
oracle ceiling would be meaningless for them.

Example:
    >>> item = load_items(3, k=10, seed=0)[0]                                        # doctest: +SKIP
    >>> len(item.distractors), any(contains_answer(d.text, item.answers) for d in item.distractors)  # doctest: +SKIP
    (9, False)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from litm.bench._retrieval import index_folder, searcher
from litm.errors import EvalError, InvalidOptionError, MissingDependencyError
from litm.eval._datasets import NQRow, nq_rows
from litm.eval._scoring import normalize

__all__ = ["Passage", "QAItem", "contains_answer", "eligible_questions", "load_items", "mine_distractors"]

_INSTALL = "pip install 'litm[bench]'"


@dataclass(frozen=True)
class Passage:
    """A document: ``pid`` is its id (for NQ, the row index of the question it is the gold passage of)."""

    pid: int | str
    title: str
    text: str


@dataclass(frozen=True)
class QAItem:
    """One question: its answers, gold document(s) and distractors in retriever rank order.

    ``qid`` is the NQ row index for the bundled data, the record's id for a data file. Multi-hop questions
    have ``more_golds`` (every gold is needed); ``gold_ranks`` are the retriever ranks (1-based, among the
    ``1 + len(more_golds) + len(distractors)`` documents) of ``(gold, *more_golds)`` when a retriever ranked
    them (empty for NQ, whose design moves the gold passage through every rank); ``kind`` is the question
    type (HotpotQA's bridge / comparison, ...).
    """

    qid: int | str
    question: str
    answers: tuple[str, ...]
    gold: Passage
    distractors: tuple[Passage, ...]
    distractor_scores: tuple[float, ...] = ()
    more_golds: tuple[Passage, ...] = ()
    gold_ranks: tuple[int, ...] = ()
    kind: str = ""

    @property
    def golds(self) -> tuple[Passage, ...]:
        """Every gold document, in retriever rank order."""
        return (self.gold, *self.more_golds)

    def ranked(self, gold_rank: int, k: int) -> list[Passage]:
        """The ``k`` documents a retriever returns when it ranks the gold passage ``gold_rank`` (1-based).

        >>> g, d = Passage(0, "G", "g"), tuple(Passage(i, "D", f"d{i}") for i in range(1, 4))
        >>> [p.text for p in QAItem(0, "q", ("a",), g, d).ranked(2, 4)]
        ['d1', 'g', 'd2', 'd3']
        """
        return self.golds_at([gold_rank], k)

    def golds_at(self, slots: Sequence[int], k: int) -> list[Passage]:
        """``k`` documents with the golds (in rank order) at final ``slots`` and the distractors, in rank order,
        around them.

        >>> g, d = (Passage("a", "A", "a"), Passage("b", "B", "b")), tuple(Passage(i, "D", f"d{i}") for i in range(3))
        >>> [p.text for p in QAItem(0, "q", ("x",), g[0], d, more_golds=g[1:]).golds_at([1, 5], 5)]
        ['a', 'd0', 'd1', 'd2', 'b']
        """
        golds = self.golds
        if len(slots) != len(golds) or len(set(slots)) != len(slots) or not all(1 <= s <= k for s in slots):
            raise InvalidOptionError(f"need {len(golds)} distinct gold slots in 1..{k}, got {list(slots)}")
        if len(self.distractors) < k - len(golds):
            raise EvalError(f"question {self.qid} has {len(self.distractors)} distractors, needs {k - len(golds)}")
        rest = iter(self.distractors)
        at = dict(zip(sorted(slots), golds, strict=True))
        return [at[s] if s in at else next(rest) for s in range(1, k + 1)]

    def retrieved(self) -> list[Passage]:
        """All documents in the retriever's order (the golds at ``gold_ranks``)."""
        if len(self.gold_ranks) != len(self.golds):
            raise EvalError(f"question {self.qid} has no retriever ranks for its gold documents")
        return self.golds_at(self.gold_ranks, len(self.golds) + len(self.distractors))


def contains_answer(text: str, answers: Sequence[str]) -> bool:
    """True when some accepted answer, normalised as the metric does, is a substring of normalised ``text``.

    >>> contains_answer("It was Wilhelm Conrad Röntgen, in 1901.", ["wilhelm conrad röntgen"])
    True
    >>> contains_answer("Marie Curie won twice.", ["Röntgen"])
    False
    """
    norm = normalize(text)
    return any(bool(na) and na in norm for na in (normalize(a) for a in answers))


@lru_cache(maxsize=1)
def _rows() -> tuple[NQRow, ...]:
    return tuple(nq_rows())


def _passage(i: int, row: NQRow) -> Passage:
    ctx = row["ctxs"][0]
    return Passage(i, str(ctx.get("title", "")), str(ctx["text"]))


def eligible_questions(seed: int = 0) -> list[int]:
    """NQ row indices whose gold passage contains an accepted answer, in a seeded random order.

    The order is the question split: a run over ``N`` questions uses the first ``N``, so growing ``N``
    keeps every earlier question (and its results) in place.
    """
    rows = _rows()
    ok = [i for i, r in enumerate(rows) if contains_answer(str(r["ctxs"][0]["text"]), r["answers"])]
    random.Random(seed).shuffle(ok)
    return ok


class _Index:
    """A BM25 index over the pool of gold passages (built once per process; about a second)."""

    def __init__(self) -> None:
        try:
            import bm25s
        except ImportError as exc:
            raise MissingDependencyError(f"the strategy benchmark needs bm25s: {_INSTALL}") from exc
        self._bm25s = bm25s
        rows = _rows()
        self.passages = [_passage(i, r) for i, r in enumerate(rows)]
        self.norm = [normalize(p.text) for p in self.passages]
        corpus = [f"{p.title} {p.text}" for p in self.passages]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)

    def search(self, query: str, n: int) -> list[tuple[int, float]]:
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        ids, scores = self.retriever.retrieve(tokens, k=min(n, len(self.passages)), show_progress=False)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True)]


@lru_cache(maxsize=1)
def _index() -> _Index:
    return _Index()


@lru_cache(maxsize=3)
def _pool_search(retriever: str) -> Callable[[str, int], list[tuple[int, float]]]:
    """``search(query, n) -> [(pid, score)]`` over the NQ passage pool with one of litm's retrievers."""
    pool = _index().passages
    search = searcher(retriever, [(str(p.pid), p.title, p.text) for p in pool], index_folder("nq", retriever))
    return lambda query, n: [(int(key), score) for key, score in search(query, n)]


def mine_distractors(qid: int, n: int, retriever: str | None = None) -> tuple[list[Passage], list[float]]:
    """The ``n`` highest-scoring passages for question ``qid`` that hold none of its answers.

    Scored by BM25 (``bm25s``, the committed runs' miner) or, given ``retriever``, by litm's ``bm25``,
    ``dense`` or ``hybrid`` retriever. Skips the question's own passage, any passage with the same normalised
    text as its gold passage (NQ questions share passages), any passage containing an accepted answer, and
    repeats.
    """
    index = _index()
    search = index.search if retriever is None else _pool_search(retriever)
    row = _rows()[qid]
    answers = [normalize(a) for a in row["answers"]]
    answers = [a for a in answers if a]
    gold_norm = index.norm[qid]
    picked: list[Passage] = []
    scores: list[float] = []
    seen = {gold_norm}
    depth = max(4 * n, 50)
    while True:
        for pid, score in search(str(row["question"]), depth):
            if len(picked) == n:
                return picked, scores
            text = index.norm[pid]
            if pid == qid or text in seen or any(a in text for a in answers):
                continue
            seen.add(text)
            picked.append(index.passages[pid])
            scores.append(score)
        if len(picked) == n or depth >= len(index.passages):
            return picked, scores
        # Rare: answers like "1" rule out most top passages; look further down the ranking.
        picked, scores, seen, depth = [], [], {gold_norm}, depth * 4


def load_items(n: int, *, k: int = 10, seed: int = 0, offset: int = 0, retriever: str | None = None) -> list[QAItem]:
    """The first ``n`` questions of the seeded split (after ``offset``), each with ``k - 1`` distractors
    (mined by ``bm25s``, or by one of litm's retrievers: see :func:`mine_distractors`)."""
    rows = _rows()
    out = []
    for qid in eligible_questions(seed)[offset : offset + n]:
        row = rows[qid]
        distractors, scores = mine_distractors(qid, k - 1, retriever)
        out.append(
            QAItem(
                qid=qid,
                question=str(row["question"]),
                answers=tuple(str(a) for a in row["answers"]),
                gold=_passage(qid, row),
                distractors=tuple(distractors),
                distractor_scores=tuple(scores),
            )
        )
    return out
