"""Haystack 3 components: litm's placement, token budget and anchored prompt in a Haystack pipeline.

Needs ``pip install 'litm[haystack]'`` (haystack-ai 3.x); importing this package without it raises
:class:`~litm.errors.MissingDependencyError` naming the extra.

=========================== ===========================================================================
:class:`LitmRanker`         places documents by any litm strategy (``placement=PlacementOptions("edges",
                            min_docs=0, ...)`` is exactly ``LostInTheMiddleRanker``)
:class:`LitmTrimmer`        keeps the best-ranked documents whose prompt fits a token budget (an exact
                            tokenizer, not a word count), placed
:class:`LitmPromptBuilder`  litm's anchored prompt as ``list[ChatMessage]`` (``prompt``) and as text
:class:`LitmCompressor`     keeps the sentences that answer the query within a token budget
                            (:mod:`litm.compress`), each document's kept spans in its ``meta``
=========================== ===========================================================================

The components live, for Haystack, under ``haystack_integrations.components.rankers.litm`` (the ranker and
the trimmer), ``haystack_integrations.components.builders.litm`` (the prompt builder) and
``haystack_integrations.components.compressors.litm`` (the compressor): a saved pipeline
names them there, the only place ``Pipeline.load`` imports integrations from. Importing them from this
package gives the same classes.

Scores are read in Haystack's convention, higher is better (BM25 and embedding retrievers); documents are
ranked by score when every document has one and in the given order otherwise (``rank_by="auto"``), and a
repeated id keeps its best-ranked copy (``dedup="id"``), as Haystack's rankers do. That is the components'
placement when no ``placement=`` (a :class:`~litm.placement.PlacementOptions`, saved in a pipeline as its
``to_dict()``) is given; ``strategy=`` is its shorthand.

Example:
    >>> from haystack import Document
    >>> docs = [Document(content=f"d{i}", score=1 - i / 10) for i in range(1, 6)]
    >>> [d.content for d in LitmRanker(strategy="edges").run(documents=docs)["documents"]]
    ['d1', 'd3', 'd5', 'd4', 'd2']
"""

from litm.retrieve._deps import require

require("haystack", "litm.integrations.haystack", "pip install 'litm[haystack]'")

from litm.integrations.haystack._builder import LitmPromptBuilder  # noqa: E402
from litm.integrations.haystack._compressor import LitmCompressor  # noqa: E402
from litm.integrations.haystack._rankers import LitmRanker, LitmTrimmer  # noqa: E402

__all__ = ["LitmCompressor", "LitmPromptBuilder", "LitmRanker", "LitmTrimmer"]
