""":class:`LitmSynthesizer`: a LlamaIndex response synthesizer that asks the LLM with litm's anchored prompt.

LlamaIndex's own synthesizers paste the nodes' texts into a template, so ids, positions and relevance are
lost on the way; this one builds litm's prompt from the nodes themselves (placed, trimmed to a budget if
given) and sends it as LlamaIndex ``ChatMessage``\\ s (or as the prompt text to a completion model). The
response's ``source_nodes`` are the nodes the prompt showed, in prompt order.

Example:
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text="Paris is in France.", id_="paris"), score=0.8)]
    >>> messages = LitmSynthesizer.messages_for(nodes, "Where is Paris?")
    >>> [m.role.value for m in messages], messages[-1].content.splitlines()[2]
    (['user'], 'Document [1](Title: ) Paris is in France.')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.base.response.schema import RESPONSE_TYPE, Response
from llama_index.core.callbacks import CallbackManager
from llama_index.core.callbacks.schema import CBEventType, EventPayload
from llama_index.core.llms import LLM
from llama_index.core.prompts.mixin import PromptDictType
from llama_index.core.response_synthesizers.base import BaseSynthesizer, QueryTextType
from llama_index.core.schema import NodeWithScore, QueryBundle

from litm.errors import UnsupportedTypeError
from litm.integrations._options import Budget
from litm.integrations._steps import Assembled, assemble
from litm.placement import PlacementOptions
from litm.prompt import Prompt, PromptBuilder

__all__ = ["LitmSynthesizer"]

T = TypeVar("T")


class LitmSynthesizer(BaseSynthesizer):
    """Answer from the retrieved nodes with litm's anchored prompt; use as a query engine's synthesizer.

    ``llm`` is any LlamaIndex LLM (default ``Settings.llm``): a chat model gets the prompt's messages, worded
    for chat as :class:`~litm.rag.Pipeline` words them (:meth:`~litm.prompt.PromptBuilder.for_chat`), a
    completion model its text. The nodes are ranked and placed as ``placement`` (a
    :class:`~litm.placement.PlacementOptions`) says; without one, by ``auto`` and by score when every node has
    one (``rank_by="auto"``), and with a ``budget`` (a :class:`~litm.integrations.Budget`: the
    tokenizer, the model's input limit, the tokens kept for the answer) trimmed, lowest-ranked first, so that
    the request fits. ``builder`` is a :class:`~litm.prompt.PromptBuilder` (anchor style, wording, ...).
    ``llm_kwargs`` go to every ``chat`` / ``complete`` call.

    Place here rather than in a postprocessor before it, unless the nodes keep their scores (they do through
    :class:`~litm.integrations.llamaindex.LitmReorder`): the synthesizer reads unscored nodes' order as a ranking.
    """

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        placement: PlacementOptions | None = None,
        builder: PromptBuilder | None = None,
        budget: Budget | None = None,
        llm_kwargs: Mapping[str, object] | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        self._placing, self._budget, self._builder = _settings(placement=placement, builder=builder, budget=budget)
        # Passed on to LlamaIndex's chat / complete, whose keyword arguments are untyped (**kwargs: Any).
        self._llm_kwargs: dict[str, Any] = dict(llm_kwargs or {})
        super().__init__(llm=llm, callback_manager=callback_manager)

    @property
    def placing(self) -> PlacementOptions:
        return self._placing

    @property
    def budget(self) -> Budget | None:
        return self._budget

    # -- the prompt ---------------------------------------------------------------------------------------

    def assemble(self, nodes: Sequence[T], query: str) -> Assembled[T]:
        """litm's prompt for ``query`` over ``nodes`` (placed, trimmed), and the nodes it shows in prompt order.

        A chat LLM is asked as :class:`~litm.rag.Pipeline` asks one: with the builder's chat wording
        (:meth:`~litm.prompt.PromptBuilder.for_chat`: the answer first, then the cited ids).
        """
        builder = self._builder.for_chat() if self._llm.metadata.is_chat_model else self._builder
        return assemble(nodes, query, self._placing, self._budget, builder)

    def messages(self, nodes: Sequence[object], query: str) -> list[ChatMessage]:
        """The prompt as LlamaIndex chat messages, in the builder's chat wording (whatever this synthesizer's LLM
        is): a system message when the builder has one, then the user's."""
        return _chat_messages(assemble(nodes, query, self._placing, self._budget, self._builder.for_chat()).prompt)

    @classmethod
    def messages_for(
        cls,
        nodes: Sequence[object],
        query: str,
        *,
        placement: PlacementOptions | None = None,
        builder: PromptBuilder | None = None,
        budget: Budget | None = None,
    ) -> list[ChatMessage]:
        """:meth:`messages` without an LLM, with the constructor's placement, prompt and budget options (and, as
        for a chat LLM, the builder's chat wording)."""
        placing, budget, builder = _settings(placement=placement, builder=builder, budget=budget)
        return _chat_messages(assemble(nodes, query, placing, budget, builder.for_chat()).prompt)

    # -- BaseSynthesizer ------------------------------------------------------------------------------------

    def synthesize(
        self,
        query: QueryTextType,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: object,
    ) -> RESPONSE_TYPE:
        """Ask the LLM with litm's prompt over ``nodes``; the response's source nodes are those it showed."""
        made = self._assemble_query(query, nodes)
        if made is None:
            return Response(self._empty_response)
        with self._synthesis(made, additional_source_nodes) as respond:
            return respond(self._ask(made.prompt))

    async def asynthesize(
        self,
        query: QueryTextType,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: object,
    ) -> RESPONSE_TYPE:
        """:meth:`synthesize`, awaiting the LLM's async call."""
        made = self._assemble_query(query, nodes)
        if made is None:
            return Response(self._empty_response)
        with self._synthesis(made, additional_source_nodes) as respond:
            return respond(await self._aask(made.prompt))

    def get_response(self, query_str: str, text_chunks: Sequence[str], **response_kwargs: object) -> str:
        """Answer from plain text chunks (no ids or scores: each chunk is a document, in the given order)."""
        return self._ask(self.assemble(list(text_chunks), query_str).prompt)

    async def aget_response(self, query_str: str, text_chunks: Sequence[str], **response_kwargs: object) -> str:
        """:meth:`get_response`, awaiting the LLM's async call."""
        return await self._aask(self.assemble(list(text_chunks), query_str).prompt)

    def _get_prompts(self) -> PromptDictType:
        # litm's prompt is built by its PromptBuilder, not from a LlamaIndex template.
        return {}

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        pass

    # -- the LLM ------------------------------------------------------------------------------------------

    def _ask(self, prompt: Prompt) -> str:
        if self._llm.metadata.is_chat_model:
            return self._llm.chat(_chat_messages(prompt), **self._llm_kwargs).message.content or ""
        return self._llm.complete(prompt.text, **self._llm_kwargs).text

    async def _aask(self, prompt: Prompt) -> str:
        if self._llm.metadata.is_chat_model:
            reply = await self._llm.achat(_chat_messages(prompt), **self._llm_kwargs)
            return reply.message.content or ""
        return (await self._llm.acomplete(prompt.text, **self._llm_kwargs)).text

    # -- one synthesis ---------------------------------------------------------------------------------------

    def _assemble_query(self, query: QueryTextType, nodes: list[NodeWithScore]) -> Assembled[NodeWithScore] | None:
        return self.assemble(nodes, _query_str(query)) if nodes else None

    @contextmanager
    def _synthesis(
        self, made: Assembled[NodeWithScore], additional: Sequence[NodeWithScore] | None
    ) -> Iterator[Callable[[str], Response]]:
        """The callback manager's SYNTHESIZE event around one answer; yields what turns the answer into a response."""
        payload: dict[str, object] = {EventPayload.QUERY_STR: made.prompt.question}
        with self._callback_manager.event(CBEventType.SYNTHESIZE, payload=payload) as event:

            def respond(text: str) -> Response:
                shown = [*made.items, *(additional or [])]
                metadata = self._get_metadata_for_response([n.node for n in shown])
                response = Response(text, source_nodes=shown, metadata=metadata)
                event.on_end(payload={EventPayload.RESPONSE: response})
                return response

            yield respond


def _settings(
    *, placement: object = None, builder: object = None, budget: object = None
) -> tuple[PlacementOptions, Budget | None, PromptBuilder]:
    """The synthesizer's settings, each checked (a bad one raises litm's typed error naming it)."""
    if placement is not None and not isinstance(placement, PlacementOptions):
        raise UnsupportedTypeError(
            f"LitmSynthesizer: placement must be a litm.placement.PlacementOptions, got {type(placement).__name__}"
        )
    if builder is not None and not isinstance(builder, PromptBuilder):
        raise UnsupportedTypeError(f"LitmSynthesizer: builder must be a PromptBuilder, got {type(builder).__name__}")
    if budget is not None and not isinstance(budget, Budget):
        raise UnsupportedTypeError(
            f"LitmSynthesizer: budget must be a litm.integrations.Budget (tokenizer, max_input_tokens, ...), got "
            f"{type(budget).__name__}"
        )
    # A component's default ranks by score when every node has one (rank_by="auto").
    options = placement if placement is not None else PlacementOptions(rank_by="auto")
    return options, budget, builder or PromptBuilder()


def _chat_messages(prompt: Prompt) -> list[ChatMessage]:
    messages = [ChatMessage(role=MessageRole.SYSTEM, content=prompt.system)] if prompt.system else []
    messages.append(ChatMessage(role=MessageRole.USER, content=prompt.user))
    return messages


def _query_str(query: QueryTextType) -> str:
    return query.query_str if isinstance(query, QueryBundle) else str(query)
