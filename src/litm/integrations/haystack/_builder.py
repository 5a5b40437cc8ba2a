""":class:`LitmPromptBuilder`: litm's anchored prompt as Haystack ``ChatMessage``\\ s and as text.

It takes the place of ``ChatPromptBuilder`` (or ``PromptBuilder``) in a RAG pipeline: documents and the
query in, the prompt out, placed, anchored and, given a budget, trimmed so that the request fits. Saved and
loaded under ``haystack_integrations.components.builders.litm`` (see :mod:`litm.integrations.haystack._rankers`).

Example:
    >>> from haystack import Document
    >>> docs = [Document(content="Paris is in France.", id="paris", score=0.9), Document(content="Rome.", id="rome")]
    >>> out = LitmPromptBuilder(strategy="none").run(query="Where is Paris?", documents=docs)
    >>> [m.role.value for m in out["prompt"]], out["prompt"][0].text.splitlines()[2]
    (['user'], 'Document [1](Title: ) Paris is in France.')
    >>> [d.id for d in out["documents"]], out["text"].endswith("Answer:")
    (['paris', 'rome'], True)
"""

import dataclasses
from typing import Any, TypedDict

from haystack import Document, component
from haystack.dataclasses import ChatMessage

from litm.integrations._options import component_placement, optional_budget
from litm.integrations._steps import assemble
from litm.integrations.haystack._rankers import DEFAULT_PLACEMENT, BuilderLike, as_builder
from litm.integrations.haystack._serde import dump, load
from litm.placement import PlacementOptions
from litm.prompt import Prompt

__all__ = ["MODULE", "LitmPromptBuilder"]

#: Where Haystack saves, and loads, this component from.
MODULE = "haystack_integrations.components.builders.litm"


class PromptOutput(TypedDict):
    """:meth:`LitmPromptBuilder.run`'s outputs (see the class)."""

    prompt: list[ChatMessage]
    text: str
    documents: list[Document]


@component
class LitmPromptBuilder:
    """Documents and a query in; litm's anchored prompt out, for a chat generator (``prompt``) or as ``text``.

    Documents are ranked and placed as :class:`~litm.integrations.haystack.LitmRanker` does (same ``placement``
    and ``strategy``)
    and, given ``tokenizer`` and ``max_input_tokens``, trimmed lowest-ranked first so that the request fits
    (counted as ``count_as`` says: the OpenAI chat request by default). ``builder`` is a
    :class:`~litm.prompt.PromptBuilder` or its dict (anchor style, wording, system text, middle marker).
    Outputs: ``prompt`` (``list[ChatMessage]``: a system message when the builder has a system text, then
    the user message), ``text`` (the plain-text prompt) and ``documents`` (those shown, in prompt order, for
    an ``AnswerBuilder``).

    Example:
        >>> from haystack import Document
        >>> from litm.prompt import AnchorOptions, PromptBuilder
        >>> builder = LitmPromptBuilder(builder=PromptBuilder(anchors=AnchorOptions(style="liu")))
        >>> rome = Document(content="Rome is in Italy.", meta={"title": "Rome"})
        >>> builder.run(query="Where is Rome?", documents=[rome])["prompt"][0].text.splitlines()[2]
        'Document [1](Title: Rome) Rome is in Italy.'
    """

    __module__ = MODULE

    def __init__(
        self,
        builder: BuilderLike | None = None,
        tokenizer: str | None = None,
        max_input_tokens: int | None = None,
        reserve_output_tokens: int = 0,
        count_as: str = "openai",
        strategy: str | None = None,
        placement: PlacementOptions | None = None,
    ) -> None:
        self.builder = as_builder(builder)
        self.budget = optional_budget("LitmPromptBuilder", tokenizer, max_input_tokens, reserve_output_tokens, count_as)
        self.placing = component_placement("LitmPromptBuilder", placement, strategy, DEFAULT_PLACEMENT)

    def warm_up(self) -> None:
        """Load the budget's tokenizer now rather than at the first run."""
        if self.budget is not None:
            self.budget.load_tokenizer()

    def to_dict(self) -> dict[str, Any]:
        """The saved form (the builder and a profile inline)."""
        budget = self.budget.to_dict() if self.budget is not None else {"tokenizer": None, "max_input_tokens": None}
        return dump(self, builder=self.builder.to_dict(), **budget, placement=self.placing.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LitmPromptBuilder":
        """The prompt builder :meth:`to_dict` saved."""
        return load(cls, data, placement=PlacementOptions.from_dict)

    @component.output_types(prompt=list[ChatMessage], text=str, documents=list[Document])
    def run(self, query: str, documents: list[Document], max_input_tokens: int | None = None) -> PromptOutput:
        """The prompt for ``query`` over ``documents`` (``max_input_tokens`` overrides the budget's for this run)."""
        budget = self.budget
        if max_input_tokens is not None:
            if budget is None:
                budget = optional_budget("LitmPromptBuilder", None, max_input_tokens)  # names what is missing
            else:
                budget = dataclasses.replace(budget, max_input_tokens=max_input_tokens)
        made = assemble(documents, query, self.placing, budget, self.builder)
        return {"prompt": chat_messages(made.prompt), "text": made.prompt.text, "documents": list(made.items)}

    @component.output_types(prompt=list[ChatMessage], text=str, documents=list[Document])
    async def run_async(
        self, query: str, documents: list[Document], max_input_tokens: int | None = None
    ) -> PromptOutput:
        """:meth:`run` (building and counting are local and offline)."""
        return self.run(query, documents, max_input_tokens)


def chat_messages(prompt: Prompt) -> list[ChatMessage]:
    """``prompt`` as Haystack chat messages: the system text (when there is one), then the user message."""
    messages = [ChatMessage.from_system(prompt.system)] if prompt.system else []
    messages.append(ChatMessage.from_user(prompt.user))
    return messages
