""":class:`LitmRetriever`: any LangChain retriever, with its documents placed (and trimmed to a token budget).

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_core.runnables import RunnableLambda
    >>> hits = RunnableLambda(lambda query: [Document(page_content=f"{query} {i}") for i in range(1, 5)])
    >>> [d.page_content for d in LitmRetriever(retriever=hits, strategy="edges").invoke("hit")]
    ['hit 1', 'hit 3', 'hit 4', 'hit 2']
"""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, RetrieverLike
from pydantic import ConfigDict

from litm.integrations._fields import PromptFields
from litm.integrations._steps import reorder, trim
from litm.integrations.langchain._documents import LangChainPlacing

__all__ = ["LitmRetriever"]


class LitmRetriever(LangChainPlacing, PromptFields, BaseRetriever):
    """Wrap ``retriever`` (any retriever or runnable from a query to documents): its hits come back placed.

    Given ``tokenizer`` and ``max_input_tokens`` it also trims them, as
    :class:`~litm.integrations.langchain.LitmTrimmer` does, for the query it was asked. The wrapped
    retriever's callbacks run as children of this one's.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: RetrieverLike

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: object
    ) -> list[Document]:
        hits = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()}, **kwargs)
        return self._arrange(hits, query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: object
    ) -> list[Document]:
        hits = await self.retriever.ainvoke(query, config={"callbacks": run_manager.get_child()}, **kwargs)
        return self._arrange(hits, query)

    def _arrange(self, hits: list[Document], query: str) -> list[Document]:
        placing, budget = self.placing_for(hits), self.budget
        if budget is None:
            return list(reorder(hits, placing).items)
        return list(trim(hits, query, placing, budget, self.prompt_builder).items)
