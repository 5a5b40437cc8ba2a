"""The compression step every framework component runs: :mod:`litm.compress` over the caller's documents.

:class:`Compressing` holds the settings of a :class:`~litm.compress.Compressor` in a form a component can
save (the tokenizer and the scorer's model as spec strings), validated on construction with litm's typed
errors and with the same defaults as ``Compressor``. :meth:`Compressing.run` compresses the framework's
documents (anything :func:`litm.place` reads) for a question and hands back which of the caller's objects
survived, each with its :class:`~litm.compress._result.CompressedDoc`; the framework shell builds its own document
type from them, with the compressed text, every field of the original, and :func:`provenance` under
:data:`METADATA_KEY` in its metadata: the kept spans as character offsets into the original text.

Example:
    >>> docs = [{"id": "a", "text": "The tower is in Paris. It opened in 1889. Tickets sell out."},
    ...         {"id": "b", "text": "Berlin has many museums. The city is large."}]
    >>> step = Compressing(tokenizer="openai:gpt-4o", target=14, scorer="retriever")
    >>> out = step.run(docs, "When did the tower open?")
    >>> [(item["id"], c.doc.text) for item, c in zip(out.items, out.kept)]
    [('a', 'The tower is in Paris. It opened in 1889.')]
    >>> provenance(out.kept[0], out.result)["spans"]
    [[0, 22], [23, 41]]
    >>> Compressing.from_dict(step.to_dict()) == step
    True
    >>> Compressing(tokenizer="openai:gpt-4o")
    Traceback (most recent call last):
    ...
    litm.errors.CompressionError: give exactly one of target (tokens) and ratio (e.g. 4 keeps a quarter)
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, Generic, TypedDict, TypeVar

from litm.compress import Compressed, Compressor, ScoreCache, Scorer
from litm.compress._result import CompressedDoc
from litm.compress._scorers import SCORERS, EmbedScorer, LMScorer, RetrieverScorer, StaticScorer
from litm.errors import InvalidOptionError, InvalidOptionTypeError
from litm.integrations._options import _tokenizer, known_options
from litm.models import Model, load_model
from litm.placement._registry import get_strategy
from litm.retrieve._embedder import MiniLM
from litm.retrieve._static import StaticMiniLM

__all__ = ["COMPRESSION_DEFAULTS", "METADATA_KEY", "Compressing", "Compression", "Provenance", "provenance"]

#: The caller's document type (a LangChain ``Document``, a LlamaIndex ``NodeWithScore``, ...), handed back as is.
T = TypeVar("T")

#: The metadata key the components write each compressed document's :func:`provenance` under: the key
#: :mod:`litm.compress` gives a compressed ``Doc`` (a superset of its value), so that litm's attribution (the
#: ``attribution`` references of a :class:`litm.rag.Answer`) maps a span found in a compressed framework document
#: back into the original text, as it does for litm's own compressed chunks.
METADATA_KEY = "compressed"

#: :class:`~litm.compress.Compressor`'s defaults, the only copy: every component declares its settings from it.
COMPRESSION_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Compressor) if f.default is not MISSING}


#: Held while a scorer's model loads, so that two threads' first runs do not load it twice (loads are rare).
_LOADING = threading.Lock()


def _number(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidOptionTypeError(f"{name} must be a finite number, got {value!r}")


def _optional_str(name: str, value: object, what: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidOptionTypeError(f"{name} must be None or {what}, got {value!r}")


@dataclass(frozen=True)
class Compressing:
    """The settings of a compression component: those of :class:`~litm.compress.Compressor`, as JSON values.

    ``tokenizer`` is the *target* model's tokenizer as a spec (``"openai:gpt-4o"`` counts exactly and
    offline; ``"local"`` with the embedded model's tokenizer); the budget is ``target`` tokens of it, or
    ``1/ratio`` of what the documents count (exactly one of the two). ``scorer`` is ``"embed"`` (MiniLM,
    the default), ``"static"`` (MiniLM's per-token table, the fast path), ``"lm"`` (``model``'s
    question-conditioned log-probabilities; default the embedded local model) or ``"retriever"`` (the
    documents' own scores or order). ``unit``, ``coarse``, ``coarse_factor``, ``rank_weight``, ``protect``,
    ``reorder`` (a placement strategy's name) and ``link`` are :func:`~litm.compress.compress`'s. The
    scorer's model is loaded once (at the first run, or at :meth:`warm_up`); every run scores with a fresh
    in-memory score cache, so a long-lived component does not keep the scores of every question it was asked.
    """

    tokenizer: str
    target: int | None = COMPRESSION_DEFAULTS["target"]
    ratio: float | None = COMPRESSION_DEFAULTS["ratio"]
    scorer: str = COMPRESSION_DEFAULTS["scorer"]
    model: str | None = COMPRESSION_DEFAULTS["model"]
    unit: str = COMPRESSION_DEFAULTS["unit"]
    coarse: bool = COMPRESSION_DEFAULTS["coarse"]
    coarse_factor: float = COMPRESSION_DEFAULTS["coarse_factor"]
    rank_weight: float = COMPRESSION_DEFAULTS["rank_weight"]
    protect: str | None = COMPRESSION_DEFAULTS["protect"]
    reorder: str | None = COMPRESSION_DEFAULTS["reorder"]
    link: str | None = COMPRESSION_DEFAULTS["link"]

    def __post_init__(self) -> None:
        if not isinstance(self.tokenizer, str) or not self.tokenizer.strip():
            raise InvalidOptionTypeError(
                "tokenizer must be the target model's spec, such as 'openai:gpt-4o' or 'local' (a component's "
                f"settings are saved), got {self.tokenizer!r}"
            )
        if not isinstance(self.scorer, str):
            raise InvalidOptionTypeError(f"scorer must be a scorer's name ({', '.join(SCORERS)}), got {self.scorer!r}")
        _optional_str("model", self.model, "a model spec string such as 'local'")
        if self.model is not None and self.scorer != "lm":
            raise InvalidOptionError(f"model= is the lm scorer's model; scorer {self.scorer!r} does not use one")
        if not isinstance(self.coarse, bool):
            raise InvalidOptionTypeError(f"coarse must be True or False, got {self.coarse!r}")
        _number("coarse_factor", self.coarse_factor)
        _number("rank_weight", self.rank_weight)
        _optional_str("reorder", self.reorder, "a placement strategy's name")
        if self.reorder is not None:
            get_strategy(self.reorder)  # an unknown name raises UnknownStrategyError now, not at the first run
        # Compressor checks the rest (target or ratio, unit, protect, ranges) with the messages compress() uses.
        checked = self._compressor(self.target, self.ratio, self.scorer)
        object.__setattr__(self, "ratio", checked.ratio)
        object.__setattr__(self, "_loaded", None)

    def __reduce__(self) -> tuple[Callable[[Mapping[str, object]], Compressing], tuple[dict[str, object]]]:
        # A copy or a pickle carries the settings, not the loaded model (an ONNX session cannot be pickled,
        # and a deep copy of a model is never wanted): the copy loads its own at its first run.
        return (Compressing.from_dict, (self.to_dict(),))

    def _compressor(self, target: int | None, ratio: float | None, scorer: str | Scorer) -> Compressor:
        return Compressor(
            tokenizer=_tokenizer(self.tokenizer), target=target, ratio=ratio, scorer=scorer, unit=self.unit,
            coarse=self.coarse, coarse_factor=self.coarse_factor, rank_weight=self.rank_weight,
            protect=self.protect, reorder=self.reorder, link=self.link,
        )  # fmt: skip

    def warm_up(self) -> None:
        """Load the scorer's model now (MiniLM, or the ``lm`` scorer's model) rather than at the first run."""
        self._model()

    def _model(self) -> MiniLM | StaticMiniLM | Model | None:
        if self.scorer == "retriever":
            return None
        with _LOADING:
            loaded: MiniLM | StaticMiniLM | Model | None = object.__getattribute__(self, "_loaded")
            if loaded is None:
                made = {"embed": MiniLM, "static": StaticMiniLM}.get(self.scorer)
                loaded = made() if made is not None else load_model(self.model or "local")
                object.__setattr__(self, "_loaded", loaded)
            return loaded

    def _scorer(self) -> Scorer:
        model = self._model()
        if isinstance(model, StaticMiniLM):
            return StaticScorer(model, cache=ScoreCache())
        if isinstance(model, MiniLM):
            return EmbedScorer(model, cache=ScoreCache())
        if model is not None:
            return LMScorer(model, cache=ScoreCache())  # refuses a model without logprobs, typed
        return RetrieverScorer()

    def run(
        self, items: Sequence[T], question: str, *, target: int | None = None, ratio: float | None = None
    ) -> Compression[T]:
        """Compress ``items`` (in rank order) for ``question``; ``target`` or ``ratio`` replace the budget once.

        No items is no work: an empty :class:`Compression` (a retriever that found nothing is not an error).
        """
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise InvalidOptionTypeError(f"documents must be a list, got {type(items).__name__}")
        budget = (target, ratio) if target is not None or ratio is not None else (self.target, self.ratio)
        if not items:
            self._compressor(*budget, self.scorer)  # a bad budget for this run is refused all the same
            return Compression((), (), (), None)
        result = self._compressor(*budget, self._scorer()).run(items, question)
        return Compression(
            items=tuple(items[i] for i in result.order),
            kept=tuple(result.kept),
            dropped=tuple(items[i] for i, c in enumerate(result.docs) if not c.kept),
            result=result,
        )

    def to_dict(self) -> dict[str, object]:
        """JSON values only (what a saved component stores)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Compressing:
        """The settings :meth:`to_dict` wrote; unknown keys are refused."""
        return cls(**known_options(cls, data, "Compressing"))


@dataclass(frozen=True)
class Compression(Generic[T]):
    """What one run kept, in the caller's objects.

    ``items`` are the caller's documents that survived, in output order (input order, or ``reorder``'s),
    and ``kept`` their :class:`~litm.compress._result.CompressedDoc`\\ s, pairwise; ``dropped`` the caller's
    documents of which nothing survived, in input order; ``result`` the whole
    :class:`~litm.compress.Compressed` (None when there were no documents).
    """

    items: tuple[T, ...]
    kept: tuple[CompressedDoc, ...]
    dropped: tuple[T, ...]
    result: Compressed | None


class Provenance(TypedDict):
    """What :func:`provenance` writes (see there)."""

    spans: list[list[int]]
    tokens: int
    original_tokens: int
    sentences: int
    kept_sentences: int
    rank: int | None
    score: float | None
    scorer: str
    reason: str


def provenance(kept: CompressedDoc, result: Compressed) -> Provenance:
    """What a compressed framework document carries under :data:`METADATA_KEY` (JSON values only).

    ``spans`` are the kept sentences as ``[start, end]`` character offsets into the *original* text, in
    source order; the compressed text is those slices joined by one space, and
    :func:`litm.compress.original_offset` maps an offset in it back. ``tokens`` and
    ``original_tokens`` count the texts in the target tokenizer; ``rank`` and ``score`` are the scorer's
    (``scorer``), ``reason`` says what was cut.
    """
    return {
        "spans": [list(span) for span in kept.spans],
        "tokens": kept.tokens,
        "original_tokens": kept.original_tokens,
        "sentences": kept.sentences,
        "kept_sentences": kept.kept_sentences,
        "rank": kept.rank,
        "score": kept.score,
        "scorer": result.scorer,
        "reason": kept.reason,
    }
