"""The whole RAG flow in one object: retrieve -> place -> assemble -> gate -> answer -> cite.

:class:`Pipeline` wires litm's layers together and nothing else: the retriever (:mod:`litm.retrieve`) finds
``k`` chunks, :func:`litm.budget.fit` keeps the best-ranked ones whose whole prompt fits the budget (counted
by the model's own tokenizer), places them by the strategy (the profile's measured slot accuracy in the
plan) and builds the anchored prompt with the builder (:mod:`litm.prompt`); the model answers
(:mod:`litm.models`); the answer is mapped back to documents, by the model's ``[id]`` citations and by
litm's attribution (:mod:`litm.rag._attribution`); the call is priced by :mod:`litm.spend` when its price is
known. Each stage is timed.

The constructor validates every argument, Haystack-style, so a wrong type or value fails when the pipeline
is made, not at the first question; the model is loaded on first use. :meth:`Pipeline.to_dict` /
:meth:`Pipeline.from_dict` save and restore a pipeline built on an index.

Example:
    >>> import tempfile
    >>> from litm.retrieve import Index
    >>> index = Index.create(tempfile.mkdtemp() + "/idx", dense=False)
    >>> _ = index.add_texts([{"id": "fr", "text": "Paris is the capital of France."},
    ...                      {"id": "it", "text": "Rome is the capital of Italy."}])
    >>> rag = Pipeline.from_index(index, model="openai:gpt-4o-mini")   # nothing is sent until ask()
    >>> [h.chunk.id for h in rag.retrieve("capital of France")]
    ['fr#0', 'it#0']
    >>> Pipeline.from_dict(rag.to_dict()).to_dict() == rag.to_dict()
    True
    >>> answer = Pipeline.from_index(index).ask("What is the capital of France?")   # doctest: +SKIP
    >>> answer.text, [(r.kind, r.id) for r in answer.references]                   # doctest: +SKIP
    ('Paris', [('attribution', 'fr#0')])
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from litm.budget import FitResult, fit
from litm.budget._limits import max_input_tokens_from
from litm.compress import Scorer, compress
from litm.compress._compress import parse_target
from litm.compress._scorers import SCORERS, get_scorer
from litm.errors import InvalidOptionError, InvalidOptionTypeError, PromptError, RetrievalError, UnsupportedTypeError
from litm.models import Model, load_model
from litm.models._anthropic_backend import AnthropicModel
from litm.placement import PlacementOptions, PositionProfile, Strategy
from litm.placement._registry import get_strategy
from litm.prompt import PromptBuilder
from litm.rag._answer import Answer, Prepared, Reference, read_reply
from litm.rag._attribution import ground
from litm.rag._checks import IndexSource, model_spec, positive, profile_of, retriever_of, stops
from litm.rag._cost import price
from litm.rag._defaults import (
    BASE_MODEL_STOP,
    DEFAULT_ANSWER_TOKENS,
    DEFAULT_K,
    DEFAULT_MODEL,
    DEFAULT_RETRIEVER,
    DEFAULT_STRATEGY,
)
from litm.retrieve import Hit, Index, Retriever
from litm.retrieve._hits import docs
from litm.retrieve._retrievers import RETRIEVERS, index_of, make_retriever

__all__ = ["PIPELINE_FORMAT_VERSION", "Pipeline"]

#: The version of :meth:`Pipeline.to_dict`'s form; :meth:`Pipeline.from_dict` refuses newer ones.
PIPELINE_FORMAT_VERSION = 1
_TYPE = "litm.rag.Pipeline"


def _count_format(model: Model) -> str:
    """How the prompt is counted: exactly what :meth:`Model.complete` sends this model."""
    if not model.supports_chat:
        return "text"
    return "anthropic" if isinstance(model, AnthropicModel) else "openai"


class Pipeline:
    """Retrieve, place, assemble, gate, answer and cite, with one object; see the module docstring.

    ``retriever``: a litm retriever (``BM25(index)``, ``Hybrid([...])``, anything with ``name`` and
    ``search(query, k)``), or an :class:`~litm.retrieve.Index` or index path (searched with the ``auto``
    retriever; :meth:`from_index` picks another). ``strategy``: a placement strategy name or object (default
    :data:`~litm.placement.DEFAULT_STRATEGY`). ``builder``: a :class:`~litm.prompt.PromptBuilder` (default: the
    model's anchors, see :func:`~litm.prompt.anchors_for`, English; ``PromptBuilder(wording=Wording(lang="zh"))``
    for Chinese, ``PromptBuilder(anchors=AnchorOptions())`` for litm's id tags whatever the model).
    ``budget``: the input-token budget; None takes the measured length of ``profile`` when it has one (``litm
    probe`` writes it), else the model's context window, and a budget is never above the context window.
    ``model``: a model spec
    (default ``"local"``, the embedded Gemma 3 270M) or a :class:`~litm.models.Model`. ``k``: chunks to
    retrieve. ``profile``: a :class:`~litm.placement.PositionProfile` (or its file) that drives the
    ``profile`` strategy and gives every plan its slot weights. ``max_answer_tokens`` is both the answer's
    limit and what is reserved from the budget for it. ``stop``: stop sequences (None: for a base model a
    blank line or the prompt's question label on a new line, for a chat model none). A base model's answer
    is the first non-empty line it writes (the benchmark's rule); a chat model's is its whole reply, and a chat
    model is asked for the answer before the cited ids (:meth:`~litm.prompt.PromptBuilder.for_chat`); a reply
    of citations alone is not taken as the answer (:func:`~litm.rag._answer.read_reply`). ``compress``: a
    goal for question-aware compression of the retrieved chunks before the gate (``"4x"`` keeps a quarter of
    their tokens, ``600`` keeps 600 tokens, in the model's own tokenizer; :func:`litm.compress.compress`
    with ``compress_scorer``, default ``"embed"``); with it the gate also compresses rather than drops.
    """

    def __init__(
        self,
        retriever: Retriever | Index | str | Path,
        strategy: str | Strategy = DEFAULT_STRATEGY,
        builder: PromptBuilder | None = None,
        budget: int | None = None,
        model: str | Model = DEFAULT_MODEL,
        *,
        k: int = DEFAULT_K,
        profile: PositionProfile | str | Path | None = None,
        max_answer_tokens: int = DEFAULT_ANSWER_TOKENS,
        stop: str | Sequence[str] | None = None,
        compress: str | int | float | None = None,
        compress_scorer: str = "embed",
    ) -> None:
        self._retriever, self._source = retriever_of(retriever)
        self.profile = profile_of(profile)
        if not isinstance(strategy, (str, Strategy)):
            raise InvalidOptionTypeError(
                f"strategy must be a strategy name or a Strategy, got {type(strategy).__name__}"
            )
        get_strategy(strategy, profile=self.profile)  # an unknown name fails now
        self.strategy: str | Strategy = strategy
        if builder is None:
            builder = PromptBuilder()
        if not isinstance(builder, PromptBuilder):
            raise UnsupportedTypeError(f"builder must be a PromptBuilder, got {type(builder).__name__}")
        self.builder = builder
        self.budget = None if budget is None else positive("budget", budget)
        self.model_spec = model_spec(model)
        self._model: Model | None = model if isinstance(model, Model) else None
        self._ready = False  # whether the model's weights (or client) were loaded by a question already
        self.k = positive("k", k)
        self.max_answer_tokens = positive("max_answer_tokens", max_answer_tokens)
        self.stop = stops(stop)
        # Validated now, so a typo fails at construction, not at the first question.
        self.compress = compress
        self._compress_goal = parse_target(compress) if compress is not None else None
        if compress_scorer not in SCORERS:
            raise InvalidOptionError(
                f"unknown compression scorer {compress_scorer!r}; choose from {', '.join(SCORERS)}"
            )
        self.compress_scorer = compress_scorer
        self._scorer: Scorer | None = None

    @classmethod
    def from_index(
        cls,
        index: Index | str | Path,
        *,
        retriever: str = DEFAULT_RETRIEVER,
        rerank: str | None = None,
        backend: str = "numpy",
        **options: Any,
    ) -> Pipeline:
        """A pipeline over ``index`` searched by ``retriever`` (``auto``, ``bm25``, ``dense`` or ``hybrid``),
        optionally reranked (``rerank="dense"``); ``options`` are the constructor's."""
        opened = index if isinstance(index, Index) else Index.open(index)
        if retriever not in RETRIEVERS:
            raise RetrievalError(f"unknown retriever {retriever!r}; choose from {', '.join(RETRIEVERS)}")
        made = make_retriever(opened, retriever, backend=backend, rerank=rerank)
        pipeline = cls(made, **options)
        pipeline._source = IndexSource(str(opened.path), retriever, rerank, backend)
        return pipeline

    # -- parts --------------------------------------------------------------------------------------

    @property
    def retriever(self) -> Retriever:
        return self._retriever

    @property
    def model(self) -> Model:
        """The model, loaded on first use."""
        if self._model is None:
            self._model = load_model(self.model_spec)
        return self._model

    def replace(self, **changes: Any) -> Pipeline:
        """A copy with some constructor arguments changed; it shares this pipeline's retriever and model
        unless they are among the changes (so comparing two strategies loads the model once)."""
        current: dict[str, Any] = {
            "retriever": self._retriever, "strategy": self.strategy, "builder": self.builder, "budget": self.budget,
            "model": self._model if self._model is not None else self.model_spec, "k": self.k,
            "profile": self.profile, "max_answer_tokens": self.max_answer_tokens, "stop": self.stop,
            "compress": self.compress, "compress_scorer": self.compress_scorer,
        }  # fmt: skip
        unknown = sorted(set(changes) - set(current))
        if unknown:
            raise InvalidOptionError(f"Pipeline has no option(s) {', '.join(unknown)}; known: {', '.join(current)}")
        copy = Pipeline(**{**current, **changes})
        if "retriever" not in changes:
            copy._source = self._source
        if "model" not in changes:
            copy._ready = self._ready
        return copy

    # -- stages -------------------------------------------------------------------------------------

    def retrieve(self, question: str) -> list[Hit]:
        """The retriever's best :attr:`k` chunks for ``question``, best first."""
        return self._retriever.search(_question(question), self.k)

    def input_budget(self) -> tuple[int, str]:
        """The input-token budget this pipeline holds (answer reserve included) and where it comes from."""
        window = self.model.context_window
        if self.budget is not None:
            if self.budget > window:
                return window, f"the model's context window ({window}; the budget of {self.budget} is larger)"
            return self.budget, "given"
        meta = self.profile.metadata if self.profile is not None else {}
        measured = meta.get("recommended_max_input_tokens") or meta.get("effective_context_length")
        if self.profile is not None and measured:
            value = max_input_tokens_from(self.profile, context_window=window)
            return value, f"measured: the effective length of profile {self.profile.name or '(unnamed)'}"
        return window, "the model's context window"

    def prepare(self, question: str, *, hits: Sequence[Hit] | None = None) -> Prepared:
        """Everything before the model call: retrieve (unless ``hits`` are given, to compare settings on one
        retrieval), then rank, place, build and count with the gate. No request is sent.

        Raises :class:`~litm.errors.RetrievalError` when nothing was retrieved (there is nothing to answer
        from) and :class:`~litm.errors.ContextBudgetExceeded` when not even the prompt without documents fits.
        """
        q = _question(question)
        timings: dict[str, float] = {}
        if not self._ready:
            start = time.perf_counter()
            # A local model loads its weights on first use: asking its window does it, timed apart from the stages.
            self.model.context_window  # noqa: B018
            timings["load"] = time.perf_counter() - start
            self._ready = True
        model = self.model
        start = time.perf_counter()
        found = tuple(self._retriever.search(q, self.k) if hits is None else hits)
        timings["retrieve"] = time.perf_counter() - start
        if not found:
            searched = index_of(self._retriever) if hits is None else None
            if searched is not None and not len(searched):
                raise RetrievalError(
                    f"the index {searched.path} is empty: nothing to answer from; add files with `litm index`"
                )
            raise RetrievalError(
                f"the {self._retriever.name} retriever found nothing for {q!r}: nothing to answer from"
            )
        start = time.perf_counter()
        budget, budget_source = self.input_budget()
        # A chat model is asked for the answer first, then the ids (it would otherwise answer with a citation only).
        builder = self.builder.for_chat() if model.supports_chat else self.builder
        chunks = docs(found)
        squeezed = None
        if self._compress_goal is not None:
            start = time.perf_counter()
            target, ratio = self._compress_goal
            if self._scorer is None:
                self._scorer = get_scorer(self.compress_scorer)
            # Question-aware compression first (in the model's own tokens), then the gate as always; the gate
            # compresses further rather than dropping a chunk when the budget is tighter still.
            squeezed = compress(chunks, q, tokenizer=model, target=target, ratio=ratio, scorer=self._scorer)
            chunks = squeezed.kept_docs
            timings["compress"] = time.perf_counter() - start
            start = time.perf_counter()
        fitted = fit(
            chunks, q, builder, model, budget, self.max_answer_tokens, format=_count_format(model),
            # With the model's spec, so auto finds a profile registered for this model.
            placement=PlacementOptions(strategy=self.strategy, profile=self.profile, model=self.model_spec),
            compress=self._scorer if self._compress_goal is not None else None,
        )  # fmt: skip
        timings["fit"] = time.perf_counter() - start
        return Prepared(q, found, fitted, budget, budget_source, timings, squeezed)

    def generate(self, prepared: Prepared) -> Answer:
        """Send a prepared prompt to the model, map the answer back to documents, and price the call."""
        if not isinstance(prepared, Prepared):
            raise UnsupportedTypeError(f"generate() takes what prepare() returns, got {type(prepared).__name__}")
        model = self.model
        timings = dict(prepared.timings)
        start = time.perf_counter()
        base = not model.supports_chat
        stop = self.stop if self.stop is not None else (_base_stops(prepared) if base else ())
        completion = model.complete(prepared.prompt, max_tokens=self.max_answer_tokens, stop=list(stop))
        reply = read_reply(model, prepared.prompt, completion, max_tokens=self.max_answer_tokens, stop=stop)
        timings["generate"] = time.perf_counter() - start
        start = time.perf_counter()
        text, completion = reply.text, reply.completions[-1]
        citations, unknown, attribution = _references(text, reply.cited_text, prepared.fit)
        priced = [price(c, self.model_spec) for c in reply.completions]
        cost = None if any(p[0] is None for p in priced) else sum(p[0] or 0 for p in priced)
        cost_note = priced[-1][1]
        timings["attribute"] = time.perf_counter() - start
        timings["total"] = sum(timings.values())
        return Answer(
            question=prepared.question, text=text, citations=citations, attribution=attribution, prepared=prepared,
            completion=completion, model=self.model_spec, retriever=self._retriever.name, timings=timings,
            cost_micros=cost, cost_note=cost_note, unknown_citations=unknown, note=reply.note,
            earlier=reply.completions[:-1],
        )  # fmt: skip

    def ask(self, question: str, *, hits: Sequence[Hit] | None = None) -> Answer:
        """Answer ``question``: :meth:`prepare` then :meth:`generate` (``hits`` skips the retrieval)."""
        return self.generate(self.prepare(question, hits=hits))

    # -- serialisation ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A versioned, JSON-ready form (Haystack's ``{"type", "init_parameters"}`` shape).

        Needs a pipeline built on an index (:meth:`from_index`, or an index or path as ``retriever``) and a
        strategy given by name; a model object is saved as its spec (its load options are not).
        """
        if self._source is None:
            raise UnsupportedTypeError(
                f"a pipeline on a {type(self._retriever).__name__} object cannot be saved; build it with "
                "Pipeline.from_index(path, retriever=...)"
            )
        if not isinstance(self.strategy, str):
            raise UnsupportedTypeError(
                f"a {type(self.strategy).__name__} strategy object cannot be saved; pass it by name"
            )
        params = {
            "retriever": self._source.to_dict(), "strategy": self.strategy, "builder": self.builder.to_dict(),
            "budget": self.budget, "model": self.model_spec, "k": self.k,
            "profile": None if self.profile is None else self.profile.to_dict(),
            "max_answer_tokens": self.max_answer_tokens, "stop": None if self.stop is None else list(self.stop),
            "compress": self.compress, "compress_scorer": self.compress_scorer,
        }  # fmt: skip
        return {"type": _TYPE, "version": PIPELINE_FORMAT_VERSION, "init_parameters": params}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pipeline:
        """The pipeline :meth:`to_dict` described (its index is opened again); unknown keys are refused."""
        if not isinstance(data, Mapping) or data.get("type") != _TYPE:
            raise InvalidOptionError(f"not a serialised Pipeline (expected type {_TYPE!r})")
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= PIPELINE_FORMAT_VERSION:
            raise InvalidOptionError(
                f"Pipeline format version {version!r} is not one this litm reads (1..{PIPELINE_FORMAT_VERSION})"
            )
        params = dict(data.get("init_parameters") or {})
        source = params.pop("retriever", None)
        if not isinstance(source, Mapping) or set(source) != {"index", "kind", "rerank", "backend"}:
            raise InvalidOptionError("a serialised Pipeline needs retriever {index, kind, rerank, backend}")
        known = {"strategy", "builder", "budget", "model", "k", "profile", "max_answer_tokens", "stop", "compress",
                 "compress_scorer"}  # fmt: skip
        unknown = sorted(set(params) - known)
        if unknown:
            raise InvalidOptionError(f"unknown Pipeline parameter(s) {', '.join(unknown)}")
        if params.get("builder") is not None:
            params["builder"] = PromptBuilder.from_dict(params["builder"])
        if params.get("profile") is not None:
            params["profile"] = PositionProfile.from_dict(params["profile"])
        return cls.from_index(
            source["index"], retriever=source["kind"], rerank=source["rerank"], backend=source["backend"], **params
        )

    def __repr__(self) -> str:
        strategy = self.strategy if isinstance(self.strategy, str) else type(self.strategy).__name__
        return (
            f"Pipeline(retriever={self._retriever.name!r}, strategy={strategy!r}, budget={self.budget!r}, "
            f"model={self.model_spec!r}, k={self.k})"
        )


def _question(question: object) -> str:
    if not isinstance(question, str):
        raise PromptError(f"the question must be a string, got {type(question).__name__}")
    if not question.strip():
        raise PromptError("the question is empty")
    return question.strip()


def _base_stops(prepared: Prepared) -> tuple[str, ...]:
    """A base model's stops: a blank line, and the prompt's question label on a new line (it would go on to
    invent the next question)."""
    label = prepared.prompt.template.question.split("{question}")[0].strip()
    return (*BASE_MODEL_STOP, f"\n{label}") if label else BASE_MODEL_STOP


def _references(
    text: str, cited_text: str, fitted: FitResult
) -> tuple[tuple[Reference, ...], tuple[str, ...], tuple[Reference, ...]]:
    """The model's citations in ``cited_text`` (mapped through the anchors), unknown cited ids, and litm's
    attribution of the answer ``text``."""
    prompt = fitted.prompt
    plan = prompt.plan
    by_id = {s.doc.id: s for s in plan.slots}
    cited = prompt.citations(cited_text)
    citations = tuple(Reference.from_slot("citation", by_id[c.id]) for c in cited.cited)
    attribution = tuple(Reference.from_grounding(g, plan) for g in ground(text, plan, question=prompt.question))
    return citations, tuple(cited.unknown), attribution
