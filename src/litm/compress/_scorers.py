"""Scorers: how relevant each document, and each sentence of a document, is to the question.

One small protocol, :class:`Scorer`, with four implementations:

* :class:`EmbedScorer` (``"embed"``, the default): cosine similarity of all-MiniLM-L6-v2 (int8, offline)
  vectors of the question and of each document / sentence (a sentence is embedded with its document's title,
  so "It was built in 1889." still knows what "it" is).
* ``"static"`` (the fast path): the same cosines over :class:`~litm.retrieve._static.StaticMiniLM` vectors,
  sums of per-token rows with no transformer pass (about 35 times faster in compression, a coarser ranking).
* :class:`LMScorer` (``"lm"``): a small causal LM through litm's continuation log-probabilities.
  Document level: the mean log-probability of the question after the document ("how well does the document
  predict the question", LongLLMLingua's coarse score). Sentence level: *contrastive* log-probability, the
  mean over a sentence's tokens of ``log p(token | question, text before)`` minus ``log p(token | text
  before)``: how much more likely the sentence becomes once the question is known.
* :class:`RetrieverScorer` (``"retriever"``, the baseline): the retriever's own score (rank order when
  there is none); sentences in reading order, so a shortened document keeps its beginning.

Every score is cached in a :class:`ScoreCache` by (scorer, model, question, text), in memory and, when
given a path, in a JSON Lines file that survives the process (a benchmark resumed tomorrow does not score
again).

Example:
    >>> scorer = RetrieverScorer()
    >>> from litm.placement._documents import Doc
    >>> scorer.score_documents("q", [Doc(text="a", id="1", score=0.2), Doc(text="b", id="2", score=0.9)])
    [0.2, 0.9]
    >>> scorer.score_sentences("q", Doc(text="One. Two.", id="1"), [(0, 4), (5, 9)])
    [0.0, -1.0]
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from litm.errors import CompressionError, InvalidOptionError, LogprobsUnavailableError
from litm.models._base import Model
from litm.models._logprobs import ScoresContinuations
from litm.models._spec import load_model
from litm.placement._documents import Doc
from litm.retrieve._embedder import Embedder, MiniLM
from litm.retrieve._static import StaticMiniLM

__all__ = [
    "SCORERS", "EmbedScorer", "LMScorer", "RetrieverScorer", "ScoreCache", "Scorer", "StaticScorer", "get_scorer",
]  # fmt: skip

#: The built-in scorer names, fastest first.
SCORERS: tuple[str, ...] = ("retriever", "static", "embed", "lm")


@runtime_checkable
class Scorer(Protocol):
    """Scores a question's documents and one document's sentences; higher is more relevant.

    ``name`` and ``model_id`` key the cache, so scores of two models are never mixed.
    """

    name: str
    model_id: str

    def score_documents(self, question: str, docs: Sequence[Doc]) -> list[float]: ...

    def score_sentences(self, question: str, doc: Doc, spans: Sequence[tuple[int, int]]) -> list[float]: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class ScoreCache:
    """Scores by (scorer, model, kind, question, text); optionally persisted as JSON Lines at ``path``.

    A torn last line (a run killed mid-write) is ignored on load; any other unreadable line is an error,
    since a cache that silently forgets costs hours of scoring.

    >>> cache = ScoreCache()
    >>> cache.get("embed", "m", "doc", "q", "t") is None
    True
    >>> cache.put("embed", "m", "doc", "q", "t", [0.5]); cache.get("embed", "m", "doc", "q", "t")
    [0.5]
    """

    #: Entries an in-memory cache keeps before it forgets the oldest: a long-lived component scoring one
    #: question after another must not grow without end (a file-backed cache keeps everything).
    MEMORY_LIMIT = 50_000

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._data: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        lines = path.read_bytes().split(b"\n")
        for n, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
                self._data[str(row["key"])] = [float(x) for x in row["scores"]]
            except (ValueError, KeyError, TypeError) as exc:
                if n == len(lines):  # the last line, with no newline after it: torn by a kill
                    continue
                raise CompressionError(f"{path}: line {n} is not a score record ({exc}); delete the file") from exc

    @staticmethod
    def key(scorer: str, model: str, kind: str, question: str, text: str) -> str:
        """The cache key (hashes, so the file holds no document text)."""
        return f"{scorer}|{model}|{kind}|{_sha(question)}|{_sha(text)}"

    def get(self, scorer: str, model: str, kind: str, question: str, text: str) -> list[float] | None:
        """The cached scores, or None."""
        return self._data.get(self.key(scorer, model, kind, question, text))

    def put(self, scorer: str, model: str, kind: str, question: str, text: str, scores: Sequence[float]) -> None:
        """Remember ``scores`` (and append them to the file, flushed, when persisted)."""
        key = self.key(scorer, model, kind, question, text)
        values = [float(x) for x in scores]
        with self._lock:
            self._data[key] = values
            if self.path is None and len(self._data) > self.MEMORY_LIMIT:
                del self._data[next(iter(self._data))]  # dicts keep insertion order: the oldest goes
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": key, "scores": values}) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())

    def __len__(self) -> int:
        return len(self._data)


def _title_text(doc: Doc) -> str:
    return f"{doc.title}. {doc.text}" if doc.title else doc.text


class RetrieverScorer:
    """The retriever's own score per document (input order when none carries one); reading order within one."""

    name = "retriever"
    model_id = "-"

    def score_documents(self, question: str, docs: Sequence[Doc]) -> list[float]:
        """Each document's ``score``; when any is missing, ``-index`` (rank order as given)."""
        if all(d.score is not None for d in docs):
            return [float(d.score) for d in docs if d.score is not None]
        return [float(-i) for i in range(len(docs))]

    def score_sentences(self, question: str, doc: Doc, spans: Sequence[tuple[int, int]]) -> list[float]:
        """``-index``: earlier sentences first, so a shortened document keeps its beginning."""
        return [float(-i) for i in range(len(spans))]


class EmbedScorer:
    """Cosine similarity of MiniLM vectors (``litm[rag]``); see the module docstring.

    ``embedder`` is anything with ``name`` and ``embed(texts)`` returning unit vectors (default: the bundled int8
    all-MiniLM-L6-v2).
    """

    name = "embed"

    def __init__(
        self, embedder: Embedder | None = None, *, cache: ScoreCache | None = None, threads: int | None = None
    ) -> None:
        if embedder is None:
            embedder = MiniLM(threads=threads)
        if not callable(getattr(embedder, "embed", None)):
            raise InvalidOptionError(f"embedder must have an embed(texts) method, got {type(embedder).__name__}")
        self._embedder = embedder
        self.model_id = str(getattr(embedder, "name", type(embedder).__name__))
        self.cache = cache if cache is not None else ScoreCache()

    def _cosines(self, question: str, texts: Sequence[str]) -> list[float]:
        vecs = self._embedder.embed([question, *texts])
        return [float(v) for v in vecs[1:] @ vecs[0]]

    def score_documents(self, question: str, docs: Sequence[Doc]) -> list[float]:
        """Cosine of the question and each document (title and text)."""
        texts = [_title_text(d) for d in docs]
        return _cached_each(self, "doc", question, texts, lambda todo: self._cosines(question, todo))

    def score_sentences(self, question: str, doc: Doc, spans: Sequence[tuple[int, int]]) -> list[float]:
        """Cosine of the question and each sentence, embedded with the document's title."""
        return self.score_sentences_many(question, [doc], [spans])[0]

    def score_sentences_many(
        self, question: str, docs: Sequence[Doc], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> list[list[float]]:
        """:meth:`score_sentences` for several documents in one batch of the embedder (one call, not one per
        document: the model's fixed cost per call is most of the time on short passages)."""
        keys = ["\n".join(f"{a}:{b}" for a, b in sp) + "\n" + _title_text(d) for d, sp in zip(docs, spans, strict=True)]
        out: list[list[float] | None] = []
        for key, sp in zip(keys, spans, strict=True):
            hit = self.cache.get(self.name, self.model_id, "sent", question, key)
            out.append(hit if hit is not None and len(hit) == len(sp) else None)
        todo = [i for i, v in enumerate(out) if v is None and spans[i]]
        texts = [(f"{docs[i].title}. " if docs[i].title else "") + docs[i].text[a:b] for i in todo for a, b in spans[i]]
        flat = self._cosines(question, texts) if texts else []
        at = 0
        for i in todo:
            scores = flat[at : at + len(spans[i])]
            at += len(spans[i])
            self.cache.put(self.name, self.model_id, "sent", question, keys[i], scores)
            out[i] = scores
        return [v if v is not None else [] for v in out]


class StaticScorer(EmbedScorer):
    """:class:`EmbedScorer` over the static MiniLM table (``"static"``): no transformer pass, numpy only."""

    name = "static"

    def __init__(self, embedder: Embedder | None = None, *, cache: ScoreCache | None = None) -> None:
        super().__init__(embedder if embedder is not None else StaticMiniLM(), cache=cache)


class LMScorer:
    """Question-conditioned log-probabilities from a small local causal LM; see the module docstring.

    ``model`` is a loaded :class:`~litm.models.Model` or a spec (default ``"local"``, the embedded model) that
    can score continuations (:func:`~litm.models._logprobs.supports_logprobs`); anything else is a
    :class:`~litm.errors.LogprobsUnavailableError`.
    """

    name = "lm"
    #: LongLLMLingua's instruction between a document and the question it should predict.
    RESTRICT = "We can get the answer to this question in the given documents."

    def __init__(self, model: str | Model = "local", *, cache: ScoreCache | None = None, **options: object) -> None:
        loaded = load_model(model, **options) if isinstance(model, str) else model
        if not isinstance(loaded, ScoresContinuations):
            raise LogprobsUnavailableError(
                f"the lm scorer needs a model that scores continuations; {getattr(loaded, 'name', model)!r} "
                "cannot (use a local model, or scorer='embed')"
            )
        self._model: ScoresContinuations = loaded
        self.model_id = str(getattr(loaded, "spec", "") or loaded.name)
        self.cache = cache if cache is not None else ScoreCache()

    def score_documents(self, question: str, docs: Sequence[Doc]) -> list[float]:
        """Mean log-probability of the question after each document (higher: the document predicts it)."""

        def run(texts: Sequence[str]) -> list[float]:
            out = []
            for text in texts:
                prompt = f"{text}\n\n{self.RESTRICT}\nQuestion:"
                out.append(self._model.continuation_logprobs(prompt, [f" {question}"])[0].mean)
            return out

        return _cached_each(self, "doc", question, [_title_text(d) for d in docs], run)

    def score_sentences(self, question: str, doc: Doc, spans: Sequence[tuple[int, int]]) -> list[float]:
        """Per sentence, the mean contrastive log-probability of its tokens (with minus without the question)."""
        if not spans:
            return []
        whole = "\n".join(f"{a}:{b}" for a, b in spans) + "\n" + _title_text(doc)
        hit = self.cache.get(self.name, self.model_id, "sent", question, whole)
        if hit is not None and len(hit) == len(spans):
            return hit
        head = f"Title: {doc.title}\n" if doc.title else ""
        text = doc.text
        with_q = self._model.continuation_logprobs(f"Question: {question}\n\n{head}Document:", [f" {text}"])[0]
        without = self._model.continuation_logprobs(f"{head}Document:", [f" {text}"])[0]
        if len(with_q.logprobs) != len(without.logprobs):
            raise CompressionError("the lm scorer tokenized one document two ways; report this as a bug")
        starts = _token_starts(with_q.tokens, len(text))
        sums = [0.0] * len(spans)
        counts = [0] * len(spans)
        j = 0
        for start, a, b in zip(starts, with_q.logprobs, without.logprobs, strict=True):
            while j < len(spans) - 1 and start >= spans[j][1]:
                j += 1
            sums[j] += a - b
            counts[j] += 1
        scores = [s / c if c else 0.0 for s, c in zip(sums, counts, strict=True)]
        self.cache.put(self.name, self.model_id, "sent", question, whole, scores)
        return scores


def _token_starts(pieces: Sequence[str], length: int) -> list[int]:
    """Character offset in the text where each token starts (the continuation had one leading space).

    Token pieces concatenate to the continuation; a piece that decoded with replacement characters (a split
    multi-byte character) can make the sum drift, so offsets are clamped to the text.
    """
    out = []
    at = -1  # the leading space
    for piece in pieces:
        out.append(min(max(at, 0), length))
        at += len(piece)
    return out


def _cached_each(
    scorer: EmbedScorer | LMScorer,
    kind: str,
    question: str,
    texts: Sequence[str],
    run: Callable[[Sequence[str]], list[float]],
) -> list[float]:
    """Scores of ``texts`` from the cache, computing only the missing ones (in one call to ``run``)."""
    cache: ScoreCache = scorer.cache
    found: list[float | None] = []
    for t in texts:
        hit = cache.get(scorer.name, scorer.model_id, kind, question, t)
        found.append(hit[0] if hit else None)
    todo = [i for i, v in enumerate(found) if v is None]
    if todo:
        fresh = run([texts[i] for i in todo])
        for i, v in zip(todo, fresh, strict=True):
            cache.put(scorer.name, scorer.model_id, kind, question, texts[i], [v])
            found[i] = float(v)
    return [float(v) for v in found if v is not None]


def get_scorer(scorer: str | Scorer, *, model: str | Model | None = None, cache: ScoreCache | None = None) -> Scorer:
    """A scorer by name (``retriever``, ``embed``, ``lm``) or the given :class:`Scorer` itself.

    ``model`` is the ``lm`` scorer's model (default: the embedded ``"local"``).

    >>> get_scorer("retriever").name
    'retriever'
    >>> get_scorer("bm25")
    Traceback (most recent call last):
        ...
    litm.errors.InvalidOptionError: unknown scorer 'bm25'; choose from retriever, static, embed, lm
    """
    if not isinstance(scorer, str):
        if not isinstance(scorer, Scorer):
            raise InvalidOptionError(
                f"scorer must be a name or have score_documents and score_sentences, got {type(scorer).__name__}"
            )
        return scorer
    if scorer == "retriever":
        return RetrieverScorer()
    if scorer == "embed":
        return EmbedScorer(cache=cache)
    if scorer == "static":
        return StaticScorer(cache=cache)
    if scorer == "lm":
        return LMScorer(model if model is not None else "local", cache=cache)
    raise InvalidOptionError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORERS)}")
