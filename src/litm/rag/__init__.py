"""The RAG pipeline: retrieve -> place -> assemble -> gate -> answer -> cite, offline by default.

* :class:`Pipeline`: one object over an index (or any retriever), a placement strategy, a prompt builder,
  a token budget and a model; :meth:`Pipeline.prepare` returns a :class:`Prepared` (everything before the
  model call) and :meth:`Pipeline.ask` an :class:`Answer`.
* :class:`Answer`: the answer text, the documents it cites (:class:`Reference`, mapped back through the
  anchors) or, for a model that writes no citations, litm's attribution (the placed documents that contain
  the answer), the placement plan, the token count, the cost when a price is known, each stage's timing.
* :func:`rank_chart` (a :class:`RankChart`): the before/after picture: the measured accuracy of the slot each
  rank lands in.

The defaults (model ``"local"``, ``k=10``, strategy ``"auto"``, retriever ``"auto"``, 64 answer tokens) are
shared with ``litm rag`` and ``litm demo``, so Python and the command line answer the same question the same way.

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

from litm.rag._answer import Answer, Prepared, Reference
from litm.rag._chart import RankChart, rank_chart
from litm.rag._pipeline import Pipeline

__all__ = ["Answer", "Pipeline", "Prepared", "RankChart", "Reference", "rank_chart"]
