""":class:`LitmPrompt`: litm's anchored prompt as a LangChain ``PromptValue``, the prompt step of an LCEL chain.

Example:
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content="Paris is in France.", id="paris"), Document(page_content="Rome is in Italy.")]
    >>> value = LitmPrompt(strategy="none").invoke({"context": docs, "question": "Where is Paris?"})
    >>> [m.type for m in value.to_messages()]
    ['human']
    >>> value.to_messages()[0].content.splitlines()[2]
    'Document [1](Title: ) Paris is in France.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompt_values import ChatPromptValue, PromptValue, StringPromptValue
from langchain_core.runnables import RunnableConfig, RunnableSerializable

from litm.errors import InvalidDocumentError, InvalidOptionError, PromptError
from litm.integrations._fields import PromptFields
from litm.integrations._steps import Assembled, assemble
from litm.integrations.langchain._documents import LangChainPlacing

__all__ = ["LitmPrompt"]

T = TypeVar("T")


class LitmPrompt(LangChainPlacing, PromptFields, RunnableSerializable[Mapping[str, object], PromptValue]):
    """The prompt step of an LCEL chain: documents and a question in, litm's anchored prompt out.

    Takes a mapping with the documents under ``documents_key`` (default ``"context"``, as LangChain's RAG
    chains name them) and the question under ``question_key`` (default ``"question"``); returns a
    ``ChatPromptValue`` (``output="chat"``: a system message when the builder has a system text, then the
    user message) or a ``StringPromptValue`` (``output="text"``, for completion models). The documents are
    ranked and placed by ``strategy`` and, given ``tokenizer`` and ``max_input_tokens``, trimmed so that the
    request fits (counted as ``count_as`` says: the OpenAI chat request by default). ``builder`` is a
    :class:`~litm.prompt.PromptBuilder` (anchor style, wording, middle marker, ...).

    Place here, not before: a :class:`~litm.integrations.langchain.LitmReorder` in front would hand this step
    placed documents, which it would read as a ranking.

    Example:
        >>> LitmPrompt().invoke({"context": []})
        Traceback (most recent call last):
        ...
        litm.errors.PromptError: LitmPrompt: the input has no 'question' (keys: context)
    """

    documents_key: str = "context"
    question_key: str = "question"
    output: Literal["chat", "text"] = "chat"

    def __init__(self, **data: Any) -> None:
        output = data.get("output", "chat")
        if output not in ("chat", "text"):
            raise InvalidOptionError(f"{type(self).__name__}: output must be 'chat' or 'text', got {output!r}")
        for key in ("documents_key", "question_key"):
            if key in data and (not isinstance(data[key], str) or not data[key]):
                raise InvalidOptionError(f"{type(self).__name__}: {key} must be a non-empty string, got {data[key]!r}")
        super().__init__(**data)

    def invoke(
        self, input: Mapping[str, object], config: RunnableConfig | None = None, **kwargs: object
    ) -> PromptValue:
        """The prompt value for ``input`` (see the class)."""
        return self._call_with_config(self._prompt_value, input, config, run_type="prompt")

    def assemble(self, documents: Sequence[T], question: str) -> Assembled[T]:
        """The litm :class:`~litm.prompt.Prompt` itself (for ``prompt.citations(answer)``) and the documents shown."""
        return assemble(documents, question, self.placing_for(documents), self.budget, self.prompt_builder)

    def _prompt_value(self, input: Mapping[str, object]) -> PromptValue:
        documents, question = self._read(input)
        prompt = self.assemble(documents, question).prompt
        if self.output == "text":
            return StringPromptValue(text=prompt.text)
        messages: list[BaseMessage] = [SystemMessage(content=prompt.system)] if prompt.system else []
        messages.append(HumanMessage(content=prompt.user))
        return ChatPromptValue(messages=messages)

    def _read(self, input: object) -> tuple[Sequence[object], str]:
        owner = type(self).__name__
        if not isinstance(input, Mapping):
            raise PromptError(
                f"{owner} takes a mapping with {self.documents_key!r} and {self.question_key!r}, "
                f"got {type(input).__name__}"
            )
        for key in (self.question_key, self.documents_key):
            if key not in input:
                raise PromptError(f"{owner}: the input has no {key!r} (keys: {', '.join(map(str, input))})")
        documents, question = input[self.documents_key], input[self.question_key]
        if isinstance(documents, str | bytes) or not isinstance(documents, Sequence):
            raise InvalidDocumentError(f"expected a list of documents, got {type(documents).__name__}")
        if not isinstance(question, str):
            raise PromptError(f"the question must be a string, got {type(question).__name__}")
        return documents, question
