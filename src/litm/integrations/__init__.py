"""Drop-in components for LangChain, LlamaIndex and Haystack, and the framework-free core they share.

One subpackage per framework, each behind its own extra and imported only when asked for (``import litm``
and ``import litm.integrations`` import no framework):

================================ ========================== ==============================================
``litm.integrations.langchain``  ``pip install 'litm[langchain]'``   ``LitmReorder``, ``LitmTrimmer``,
                                                            ``LitmPrompt``, ``LitmRetriever``,
                                                            ``LitmCompressor``
``litm.integrations.llamaindex`` ``pip install 'litm[llamaindex]'``  ``LitmReorder``, ``LitmTrimmer``,
                                                            ``LitmSynthesizer``, ``LitmCompressor``
``litm.integrations.haystack``   ``pip install 'litm[haystack]'``    ``LitmRanker``, ``LitmTrimmer``,
                                                            ``LitmPromptBuilder``, ``LitmCompressor``
                                                            (saved under
                                                            ``haystack_integrations.components...litm``)
================================ ========================== ==============================================

Each framework gets the same three steps (:mod:`litm.integrations._steps`): a reorderer (any litm strategy,
a measured profile included, and the framework's own order for migration), a token-budget trimmer (an exact
tokenizer, the lowest-ranked cut first, the placement kept) and a prompt assembler (litm's anchored prompt in
the framework's message type), configured by a :class:`~litm.placement.PlacementOptions` and a
:class:`Budget`; and a question-aware compressor (:mod:`litm.compress`: the sentences that answer the question,
within a token budget, each kept span mapped back to the source) configured by a :class:`Compressing`.

Example:
    >>> from litm.placement import PlacementOptions
    >>> reorder(["d1", "d2", "d3", "d4"], PlacementOptions(strategy="langchain")).items
    ('d2', 'd4', 'd3', 'd1')
"""

from litm.integrations._compression import METADATA_KEY, Compressing, Compression
from litm.integrations._options import Budget, optional_budget
from litm.integrations._steps import Assembled, Trimmed, assemble, reorder, trim

__all__ = [
    "METADATA_KEY",
    "Assembled",
    "Budget",
    "Compressing",
    "Compression",
    "Trimmed",
    "assemble",
    "optional_budget",
    "reorder",
    "trim",
]
