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

Each framework gets the same three steps, from a private core the subpackages share
(``litm.integrations._steps``): a reorderer (any litm strategy, a measured profile included, and the
framework's own order for migration), a token-budget trimmer (an exact tokenizer, the lowest-ranked cut
first, the placement kept) and a prompt assembler (litm's anchored prompt in the framework's message type),
configured by a :class:`~litm.placement.PlacementOptions` and a :class:`Budget`; and a question-aware
compressor (:mod:`litm.compress`: the sentences that answer the question, within a token budget, each kept
span mapped back to the source under the ``"compressed"`` metadata key).

Every component takes its placement as one :class:`~litm.placement.PlacementOptions` (``placement=``), with
``strategy=`` as the one shorthand (what ``LongContextReorder`` and ``LostInTheMiddleRanker`` users expect);
their frameworks save it in its ``to_dict()`` form. :class:`Budget` is the value ``LitmSynthesizer`` takes
whole (``budget=``); the others read the budget as keyword fields (``tokenizer``, ``max_input_tokens``,
``reserve_output_tokens``, ``count_as``).

Example:
    >>> budget = Budget("openai:gpt-4o", max_input_tokens=8000, reserve_output_tokens=500)
    >>> budget.format, budget.max_input_tokens - budget.reserve_output_tokens
    ('openai', 7500)
"""

from litm.integrations._options import Budget

# The steps (reorder, trim, assemble and their results) and the compression settings are the subpackages'
# shared implementation: litm.integrations._steps and litm.integrations._compression.
__all__ = ["Budget"]
