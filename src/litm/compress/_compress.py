"""Question-aware context compression: keep what answers the question, within a token budget.

:func:`compress` scores the documents and their sentences against the question (:mod:`._scorers`), cuts
whole documents that cannot matter (coarse stage), gives each remaining document a share of the budget that
follows its rank, keeps its best sentences in reading order (fine stage, :mod:`._select`), and counts the
result with the *target* model's tokenizer, so the budget holds for the model that will read the prompt.
:class:`CompressOptions` holds the less common settings, validated once; :class:`Compressor` is the same as a
reusable component (validated settings, ``run``, ``to_dict``).

Example:
    >>> docs = [
    ...     {"id": "a", "text": "The Eiffel Tower is in Paris. It opened in 1889. Tickets sell out in summer."},
    ...     {"id": "b", "text": "Berlin has many museums. The city is large."},
    ... ]
    >>> out = compress(docs, "When did the Eiffel Tower open?", tokenizer=len, target=60,
    ...                scorer="retriever", options=CompressOptions(protect="terms"))
    >>> [c.doc.text for c in out.kept]
    ['The Eiffel Tower is in Paris. It opened in 1889.']
    >>> out.tokens <= out.budget
    True
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from litm.compress._result import SEPARATOR, Compressed, CompressedDoc
from litm.compress._scorers import SCORERS, ScoreCache, Scorer, get_scorer
from litm.compress._select import select
from litm.compress._terms import rare_terms, terms
from litm.errors import CompressionError, InvalidOptionError, InvalidOptionTypeError
from litm.models._base import Model
from litm.models.tokenizers import safety_margin
from litm.models.tokenizers._base import UNSTATED_MARGIN
from litm.placement import Strategy, place
from litm.placement._documents import Doc, to_docs
from litm.placement._registry import get_strategy
from litm.tokens import get_tokenizer
from litm.util._sentences import sentence_spans

__all__ = ["LINKS", "PROTECT", "UNITS", "CompressOptions", "Compressor", "TargetCounter", "compress", "parse_target"]

UNITS: tuple[str, ...] = ("sentence", "document")
PROTECT: tuple[str | None, ...] = (None, "terms")
LINKS: tuple[str | None, ...] = (None, "titles")


@dataclass(frozen=True)
class TargetCounter:
    """How the target model counts a text: the function, whether exactly, and the margin when not.

    ``base`` is what an empty text counts (a BOS token), taken off every count so that the counts of a
    document's sentences add up to the count of the document.
    """

    count: Callable[[str], int]
    exact: bool
    margin: float
    name: str
    base: int = 0
    #: Counts already made, by text (see :meth:`memoized`); None counts every time.
    memo: dict[str, int] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, tokenizer: object) -> TargetCounter:
        """From a model spec, a loaded model, a tokenizer with ``count`` or a function ``text -> int``.

        >>> TargetCounter.of(len).exact, TargetCounter.of(len).margin
        (False, 0.25)
        """
        if tokenizer is None:
            raise CompressionError(
                "compression needs the target model's tokenizer to hold a token budget: pass tokenizer= (a model "
                "spec such as 'openai:gpt-4o' or 'local', a loaded model, or a function text -> int)"
            )
        if isinstance(tokenizer, TargetCounter):
            return tokenizer
        tok: object
        if isinstance(tokenizer, str):
            tok = get_tokenizer(tokenizer)
        elif isinstance(tokenizer, Model):
            tok = tokenizer.tokenizer
        else:
            tok = tokenizer
        count = getattr(tok, "count", None)
        fn: Callable[[str], int]
        if callable(count):
            exact = getattr(tok, "exact", False) is True
            margin = 0.0 if exact else safety_margin(tok)
            fn = count
            name = str(getattr(tok, "name", type(tok).__name__))
        elif callable(tok):
            fn, exact, margin = tok, False, UNSTATED_MARGIN
            name = f"function {getattr(tok, '__name__', type(tok).__name__)}"
        else:
            raise InvalidOptionTypeError(
                f"tokenizer must be a model spec, a model, a tokenizer or a function, got {type(tokenizer).__name__}"
            )
        try:
            base = int(fn(""))
        except Exception:  # a tokenizer that refuses empty text has no fixed overhead to take off
            base = 0
        return cls(fn, exact, margin, name, max(base, 0))

    def memoized(self) -> TargetCounter:
        """The same counter, remembering each text's count: for a caller that compresses the same documents
        to several targets (``fit`` bisects the target), so each sentence is counted once, not once per try.

        >>> calls = []
        >>> counter = TargetCounter.of(lambda t: calls.append(t) or len(t)).memoized()
        >>> counter("abc") + counter("abc"), calls.count("abc")
        (6, 1)
        """
        return replace(self, memo={})

    def __call__(self, text: str) -> int:
        if self.memo is not None and text in self.memo:
            return self.memo[text]
        value = self.count(text)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidOptionError(f"the tokenizer returned {value!r} for a text; a count is an integer >= 0")
        counted = max(value - self.base, 0)
        if self.memo is not None:
            self.memo[text] = counted
        return counted


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise InvalidOptionError(f"{name} must be >= 1, got {value}")
    return value


def _ratio(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidOptionTypeError(f"ratio must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or value < 1:
        raise InvalidOptionError(f"ratio must be a finite number >= 1 (4 keeps a quarter), got {value!r}")
    return float(value)


def parse_target(value: str | int | float) -> tuple[int | None, float | None]:
    """``(target, ratio)`` from how a user writes a compression goal: ``"4x"`` or a float is a ratio (keep a
    quarter), an integer or ``"600"`` a number of document tokens.

    >>> parse_target("4x"), parse_target(600), parse_target("600"), parse_target(2.5)
    ((None, 4.0), (600, None), (600, None), (None, 2.5))
    >>> parse_target("4,5x")
    Traceback (most recent call last):
        ...
    litm.errors.InvalidOptionError: a compression goal is a ratio ('4x') or a token count ('600'), got '4,5x'
    """
    if isinstance(value, bool):
        raise InvalidOptionTypeError(f"a compression goal is a ratio or a token count, got {value!r}")
    if isinstance(value, int):
        return _positive_int("the compression target", value), None
    if isinstance(value, float):
        return None, _ratio(value)
    if isinstance(value, str):
        text = value.strip().lower()
        number = text[:-1] if text.endswith("x") else ""
        if number and number.replace(".", "", 1).isdigit():
            return None, _ratio(float(number))
        if text.isdigit():
            return _positive_int("the compression target", int(text)), None
        raise InvalidOptionError(f"a compression goal is a ratio ('4x') or a token count ('600'), got {value!r}")
    raise InvalidOptionTypeError(f"a compression goal is a ratio or a token count, got {type(value).__name__}")


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidOptionTypeError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class CompressOptions:
    """How :func:`compress` chooses, beyond the goal and the scorer; validated when made.

    ``unit="document"`` drops whole documents by score instead of choosing sentences. ``coarse`` first drops
    the documents beyond ``coarse_factor`` (>= 1) x the budget by score; ``rank_weight`` (in [0, 1)) makes each
    document's share of the budget fall with its score rank (0: shares by length alone). ``protect="terms"``
    picks sentences holding the question's rare words and numbers first. ``link="titles"`` is for multi-hop
    questions: a document whose title the question or the best-scored document names (the bridge to the second
    hop, which often shares no words with the question) ranks right after that best document.
    ``reorder`` places the kept documents by their scores with a placement strategy (``"edges"``, ...) instead
    of keeping the input order.

    >>> CompressOptions(protect="terms", reorder="edges").unit
    'sentence'
    >>> CompressOptions(rank_weight=1.5)
    Traceback (most recent call last):
        ...
    litm.errors.InvalidOptionError: rank_weight must be in [0, 1), got 1.5
    """

    unit: str = "sentence"
    coarse: bool = True
    coarse_factor: float = 1.5
    rank_weight: float = 0.9
    protect: str | None = None
    reorder: str | Strategy | None = None
    link: str | None = None

    def __post_init__(self) -> None:
        if self.link not in LINKS:
            raise InvalidOptionError(f"link must be None or 'titles', got {self.link!r}")
        if self.unit not in UNITS:
            raise InvalidOptionError(f"unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.protect not in PROTECT:
            raise InvalidOptionError(f"protect must be None or 'terms', got {self.protect!r}")
        if not isinstance(self.coarse, bool):
            raise InvalidOptionTypeError(f"coarse must be True or False, got {self.coarse!r}")
        coarse_factor = _finite("coarse_factor", self.coarse_factor)
        rank_weight = _finite("rank_weight", self.rank_weight)
        if not 0 <= rank_weight < 1:
            raise InvalidOptionError(f"rank_weight must be in [0, 1), got {self.rank_weight!r}")
        if coarse_factor < 1:
            raise InvalidOptionError(f"coarse_factor must be >= 1, got {self.coarse_factor!r}")
        if isinstance(self.reorder, str):
            get_strategy(self.reorder)  # an unknown strategy fails now, not after the scoring
        elif self.reorder is not None and not isinstance(self.reorder, Strategy):
            raise InvalidOptionTypeError(
                f"reorder must be a placement strategy's name or a Strategy, got {type(self.reorder).__name__}"
            )
        object.__setattr__(self, "coarse_factor", coarse_factor)
        object.__setattr__(self, "rank_weight", rank_weight)


def compress(
    docs: Sequence[object],
    question: str,
    *,
    tokenizer: object,
    target: int | None = None,
    ratio: float | None = None,
    scorer: str | Scorer = "embed",
    model: str | Model | None = None,
    cache: ScoreCache | None = None,
    options: CompressOptions | None = None,
) -> Compressed:
    """Compress ``docs`` for ``question`` to ``target`` document tokens, or to ``1/ratio`` of what they count.

    ``docs`` are anything :func:`~litm.placement.place` accepts (strings, dicts, framework documents, ``Doc``);
    they are taken in rank order as given. ``tokenizer`` is the target model's (a spec such as
    ``"openai:gpt-4o"``, a model, a tokenizer, or ``text -> int``): the budget counts document texts in its
    tokens, shrunk by its safety margin when it is not exact. ``scorer``: ``"embed"`` (MiniLM, fast),
    ``"lm"`` (question-conditioned log-probabilities of ``model``, default the embedded local model),
    ``"retriever"`` (the documents' own scores or rank order; the baseline), or a :class:`Scorer`. ``cache``
    keeps the scores (a :class:`ScoreCache` with a path keeps them across runs). ``options``
    (:class:`CompressOptions`): the unit kept, the coarse stage, the rank weighting, protected terms and a
    reordering; the defaults when None.

    Errors (all :class:`~litm.errors.LitmError`): no documents or an empty one, a blank question, both or
    neither of ``target`` and ``ratio``, a budget below every sentence, no tokenizer
    (:class:`~litm.errors.CompressionError`); a scorer model that cannot score
    (:class:`~litm.errors.LogprobsUnavailableError`); a document with a non-text field
    (:class:`~litm.errors.InvalidDocumentError`).
    """
    began = time.perf_counter()
    if not isinstance(question, str):
        raise InvalidOptionTypeError(f"question must be str, got {type(question).__name__}")
    if not question.strip():
        raise CompressionError("the question is blank: compression is conditioned on the question")
    if (target is None) == (ratio is None):
        raise CompressionError("give exactly one of target (tokens) and ratio (e.g. 4 keeps a quarter)")
    if options is None:
        options = CompressOptions()
    elif not isinstance(options, CompressOptions):
        raise InvalidOptionTypeError(f"options must be a CompressOptions, got {type(options).__name__}")
    unit = options.unit
    if isinstance(docs, str | bytes) or not isinstance(docs, Sequence):
        raise InvalidOptionTypeError(f"docs must be a sequence of documents, got {type(docs).__name__}")
    items = to_docs(list(docs))
    if not items:
        raise CompressionError("no documents to compress")
    for d in items:
        if not d.text.strip():
            raise CompressionError(f"document {d.id!r} is empty; drop it before compressing")
    counter = TargetCounter.of(tokenizer)
    the_scorer = get_scorer(scorer, model=model, cache=cache)

    spans = [sentence_spans(d.text) for d in items]
    sentence_tokens = [[counter(d.text[a:b]) for a, b in sp] for d, sp in zip(items, spans, strict=True)]
    doc_tokens = [counter(d.text) for d in items]
    original = sum(doc_tokens)
    asked = _positive_int("target", target) if target is not None else math.ceil(original / _ratio(ratio))
    asked = max(asked, 1)
    budget = math.floor(asked / (1 + counter.margin))
    notes: list[str] = []
    if counter.margin:
        notes.append(f"{counter.name} is approximate: budget {asked} less a {counter.margin:.0%} margin = {budget}")
    smallest = min((t for row in sentence_tokens for t in row if t > 0), default=0)
    if original > budget and budget < smallest:
        raise CompressionError(
            f"a budget of {budget} tokens is smaller than every sentence (the shortest has {smallest}); "
            "raise the target or lower the ratio"
        )

    doc_scores = the_scorer.score_documents(question, items)
    chosen_by = doc_scores
    if options.link == "titles":
        chosen_by, linked = linked_by_title(question, items, doc_scores)
        if linked:
            notes.append(f"linked by title from the question or document {items[linked[0]].id!r}: "
                         + ", ".join(repr(items[i].id) for i in linked[1:]))  # fmt: skip
    if original <= budget:
        notes.append(f"the documents ({original} tokens) already fit the budget of {budget}: nothing cut")
        kept = [list(range(len(sp))) for sp in spans]
        ranks = _ranks(chosen_by)
        reasons = ["kept whole"] * len(items)
    else:
        sentence_scores = (
            _sentence_scores(the_scorer, question, items, spans)
            if unit == "sentence"
            else [[0.0] * len(sp) for sp in spans]
        )
        guard = _protected(question, items, spans) if options.protect == "terms" else None
        chosen = select(
            sentence_tokens=sentence_tokens, sentence_scores=sentence_scores, doc_scores=chosen_by, budget=budget,
            protected=guard, coarse=options.coarse, coarse_factor=options.coarse_factor,
            rank_weight=options.rank_weight, unit=unit,
        )  # fmt: skip
        kept, ranks, reasons = chosen.kept, chosen.ranks, chosen.reasons
        _hold(kept, items, spans, sentence_scores, guard, counter, budget, reasons)

    out_docs = []
    for i, d in enumerate(items):
        keep = [spans[i][s] for s in kept[i]]
        text = SEPARATOR.join(d.text[a:b] for a, b in keep)
        out_docs.append(
            CompressedDoc.from_spans(
                d,
                keep,
                tokens=counter(text) if keep else 0,
                original_tokens=doc_tokens[i],
                reason=reasons[i],
                score=doc_scores[i],
                rank=ranks[i],
                sentences=len(spans[i]),
            )
        )
    order = _order([i for i in range(len(items)) if kept[i]], chosen_by, options.reorder)
    total = sum(c.tokens for c in out_docs)
    return Compressed(
        question=question, docs=tuple(out_docs), order=tuple(order), target=asked, budget=budget, tokens=total,
        original_tokens=original, exact=counter.exact, margin=counter.margin, scorer=the_scorer.name,
        seconds=time.perf_counter() - began, notes=tuple(notes),
    )  # fmt: skip


def _bare_title(title: str) -> str:
    """A title without a trailing disambiguation, as a text names it: ``"Avatar (film)"`` -> ``"avatar"``."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip().lower()


def linked_by_title(question: str, items: Sequence[Doc], scores: Sequence[float]) -> tuple[list[float], list[int]]:
    """Scores that put the best document first and, right after it, every document whose title the question or
    the best document names (whole words, case-insensitive, titles of 3 characters or more); the others keep
    their order after those. Returns the scores and ``[best, *linked]`` (just ``[]`` when nothing links).

    >>> docs = [Doc(text="Ed Wood directed Glen or Glenda.", id="a", title="Ed Wood (film)"),
    ...         Doc(text="A 1953 film, shot in four days.", id="b", title="Glen or Glenda"),
    ...         Doc(text="A 1953 film by another director.", id="c", title="Robot Monster")]
    >>> scores, linked = linked_by_title("Who directed the film by the maker of Ed Wood?", docs, [0.9, 0.2, 0.5])
    >>> linked, scores[1] > scores[2]
    ([0, 1], True)
    """
    best = max(range(len(items)), key=lambda i: scores[i])
    text = f"{question} {items[best].title} {items[best].text}".lower()
    linked = []
    for i, d in enumerate(items):
        name = _bare_title(d.title or "")
        if i != best and len(name) >= 3 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            linked.append(i)
    if not linked:
        return list(scores), []
    span = max(scores) - min(scores) + 1.0
    out = [s + span if i in linked else s for i, s in enumerate(scores)]
    out[best] = max(out) + span
    return out, [best, *sorted(linked, key=lambda i: -scores[i])]


def _sentence_scores(
    scorer: Scorer, question: str, items: Sequence[Doc], spans: Sequence[Sequence[tuple[int, int]]]
) -> list[list[float]]:
    """Every document's sentence scores, in one batch when the scorer offers one."""
    many = getattr(scorer, "score_sentences_many", None)
    if callable(many):
        scores: list[list[float]] = many(question, items, spans)
    else:
        scores = [scorer.score_sentences(question, d, sp) for d, sp in zip(items, spans, strict=True)]
    for d, sp, got in zip(items, spans, scores, strict=True):
        if len(got) != len(sp):
            raise CompressionError(f"scorer {scorer.name!r} gave {len(got)} scores for {len(sp)} sentences of {d.id!r}")
    return scores


def _ranks(scores: Sequence[float]) -> list[int]:
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    ranks = [0] * len(scores)
    for r, i in enumerate(order, start=1):
        ranks[i] = r
    return ranks


def _protected(question: str, items: Sequence[Doc], spans: Sequence[Sequence[tuple[int, int]]]) -> list[list[bool]]:
    rare = rare_terms(question, [d.text for d in items])
    return [[bool(rare & terms(d.text[a:b])) for a, b in sp] for d, sp in zip(items, spans, strict=True)]


def _hold(
    kept: list[list[int]],
    items: Sequence[Doc],
    spans: Sequence[Sequence[tuple[int, int]]],
    scores: Sequence[Sequence[float]],
    guard: Sequence[Sequence[bool]] | None,
    counter: TargetCounter,
    budget: int,
    reasons: list[str],
) -> None:
    """Recount the joined texts (sentence counts need not add up exactly) and drop the weakest sentence until
    the kept texts fit: the budget is a promise about the text the model will read."""

    def joined(i: int) -> int:
        return counter(SEPARATOR.join(items[i].text[spans[i][s][0] : spans[i][s][1]] for s in kept[i]))

    counts = {i: joined(i) for i in range(len(items)) if kept[i]}
    while sum(counts.values()) > budget:
        weakest = min(
            ((i, s) for i in counts for s in kept[i]),
            key=lambda p: (bool(guard and guard[p[0]][p[1]]), scores[p[0]][p[1]], -p[1]),
        )
        i, s = weakest
        kept[i].remove(s)
        if kept[i]:
            counts[i] = joined(i)
            reasons[i] = f"shortened: {len(kept[i])} of {len(spans[i])} sentences"
        else:
            del counts[i]
            reasons[i] = "dropped (fine): its last sentence did not fit once the texts were recounted"


def _order(kept: Sequence[int], scores: Sequence[float], reorder: str | Strategy | None) -> list[int]:
    """Kept documents in input order, or placed by ``reorder`` from their score ranking."""
    if reorder is None:
        return list(kept)
    ranked = sorted(kept, key=lambda i: (-scores[i], i))
    plan = place([str(i) for i in ranked], reorder)
    return [int(str(x)) for x in plan.items]


@dataclass(frozen=True)
class Compressor:
    """:func:`compress` as a reusable component: settings validated once, then ``run(docs, question)``.

    >>> c = Compressor(tokenizer=len, ratio=2, scorer="retriever")
    >>> c.to_dict()["ratio"]
    2.0
    >>> Compressor(tokenizer=len, ratio=0.5)
    Traceback (most recent call last):
        ...
    litm.errors.InvalidOptionError: ratio must be a finite number >= 1 (4 keeps a quarter), got 0.5
    """

    tokenizer: object
    target: int | None = None
    ratio: float | None = None
    scorer: str | Scorer = "embed"
    model: str | Model | None = None
    unit: str = "sentence"
    coarse: bool = True
    coarse_factor: float = 1.5
    rank_weight: float = 0.9
    protect: str | None = None
    reorder: str | None = None
    link: str | None = None

    def __post_init__(self) -> None:
        if (self.target is None) == (self.ratio is None):
            raise CompressionError("give exactly one of target (tokens) and ratio (e.g. 4 keeps a quarter)")
        if self.target is not None:
            _positive_int("target", self.target)
        if self.ratio is not None:
            object.__setattr__(self, "ratio", _ratio(self.ratio))
        if self.reorder is not None and not isinstance(self.reorder, str):
            raise InvalidOptionTypeError(f"reorder must be a placement strategy's name, got {self.reorder!r}")
        options = CompressOptions(
            unit=self.unit, coarse=self.coarse, coarse_factor=self.coarse_factor, rank_weight=self.rank_weight,
            protect=self.protect, reorder=self.reorder, link=self.link,
        )  # fmt: skip
        if isinstance(self.scorer, str) and self.scorer not in SCORERS:
            raise InvalidOptionError(f"unknown scorer {self.scorer!r}; choose from {', '.join(SCORERS)}")
        if self.model is not None and self.scorer != "lm":
            raise InvalidOptionError(f"model= is the lm scorer's model; scorer {self.scorer!r} would ignore it")
        object.__setattr__(self, "_options", options)
        # Resolve once: a spec string would otherwise load its tokenizer (and a local model) on every run.
        object.__setattr__(self, "_counter", TargetCounter.of(self.tokenizer))
        object.__setattr__(self, "_scorer", None)

    @property
    def options(self) -> CompressOptions:
        """The settings :func:`compress` takes as :class:`CompressOptions`."""
        made: CompressOptions = object.__getattribute__(self, "_options")
        return made

    def run(self, docs: Sequence[object], question: str) -> Compressed:
        """Compress ``docs`` for ``question`` with these settings."""
        scorer = object.__getattribute__(self, "_scorer")
        if scorer is None:
            scorer = get_scorer(self.scorer, model=self.model)
            object.__setattr__(self, "_scorer", scorer)
        return compress(
            docs, question, tokenizer=object.__getattribute__(self, "_counter"), target=self.target,
            ratio=self.ratio, scorer=scorer, options=self.options,
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        """The settings as plain data (the scorer and model by name)."""
        return {
            "target": self.target,
            "ratio": self.ratio,
            "scorer": self.scorer if isinstance(self.scorer, str) else self.scorer.name,
            "model": self.model if isinstance(self.model, str | None) else self.model.name,
            "unit": self.unit,
            "coarse": self.coarse,
            "coarse_factor": self.coarse_factor,
            "rank_weight": self.rank_weight,
            "protect": self.protect,
            "reorder": self.reorder,
            "link": self.link,
        }
