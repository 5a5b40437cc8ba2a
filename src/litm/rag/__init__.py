"""The RAG pipeline: retrieve -> place -> assemble -> gate -> answer -> cite, offline by default.

* :class:`Pipeline`: one object over an index (or any retriever), a placement strategy, a prompt builder,
  a token budget and a model; :meth:`Pipeline.ask` returns an :class:`Answer`.
* :class:`Answer`: the answer text, the documents it cites (:class:`Reference`, mapped back through the
  anchors) or, for a model that writes no citations, litm's attribution (the placed documents that contain
  the answer), the placement plan, the token count, the cost when a price is known, each stage's timing.
* :mod:`litm.rag.chart`: the before/after picture: the measured accuracy of the slot each rank lands in.
* The defaults, shared with ``litm rag`` and ``litm demo``: :mod:`litm.rag.defaults`.

Needs ``pip install 'litm[rag]'`` (retrieval) and ``'litm[local]'`` for the embedded model.

Example:
    >>> import tempfile
    >>> from litm.retrieve import Index
    >>> index = Index.create(tempfile.mkdtemp() + "/idx", dense=False)
    >>> _ = index.add_texts(["Paris is the capital of France.", "Rome is the capital of Italy."])
    >>> rag = Pipeline.from_index(index)                      # the embedded model loads at the first ask()
    >>> rag.strategy, rag.model_spec, rag.k
    ('auto', 'local', 10)
    >>> rag.ask("What is the capital of France?").text       # doctest: +SKIP
    'Paris'
"""

from litm.rag.answer import Answer, Prepared, Reference, ReferenceKind
from litm.rag.attribution import Grounding, ground
from litm.rag.chart import RankChart, rank_chart
from litm.rag.cost import price
from litm.rag.defaults import (
    BASE_MODEL_STOP,
    DEFAULT_ANSWER_TOKENS,
    DEFAULT_K,
    DEFAULT_MODEL,
    DEFAULT_RETRIEVER,
    DEFAULT_STRATEGY,
)
from litm.rag.pipeline import PIPELINE_FORMAT_VERSION, Pipeline

__all__ = [
    "BASE_MODEL_STOP",
    "DEFAULT_ANSWER_TOKENS",
    "DEFAULT_K",
    "DEFAULT_MODEL",
    "DEFAULT_RETRIEVER",
    "DEFAULT_STRATEGY",
    "PIPELINE_FORMAT_VERSION",
    "Answer",
    "Grounding",
    "Pipeline",
    "Prepared",
    "RankChart",
    "Reference",
    "ReferenceKind",
    "ground",
    "price",
    "rank_chart",
]
