"""Real, offline stand-ins for what the framework tests would otherwise download.

- ``MiniLMEmbeddings`` (LangChain ``Embeddings``) and ``MiniLMEmbedding`` (LlamaIndex ``BaseEmbedding``) wrap
  litm's int8 all-MiniLM-L6-v2 (:class:`litm.retrieve.MiniLM`), so vector stores and a ``VectorStoreIndex``
  embed for real, with no model download and no API key.
- ``LitmLLM`` is a LlamaIndex ``CustomLLM`` over a litm model (SmolLM2 Instruct through llama.cpp by default),
  so a query engine answers with a real model; it records every request it was sent.
- ``sample_docs()`` / ``SAMPLE_QUESTION``: the NQ sample in ``tests/data/nq_sample`` (eight passages, one holds
  the answer).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from litm.models import Model, load_model
from litm.retrieve._embedder import MiniLM

DATA = Path(__file__).resolve().parent / "data" / "nq_sample"
SAMPLE_QUESTION = json.loads((DATA / "sample_question.json").read_text(encoding="utf-8"))


def sample_docs() -> list[dict[str, Any]]:
    """The NQ sample: eight passages with id, title, text and the retriever's score."""
    lines = (DATA / "sample_docs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


class MiniLMEmbeddings(Embeddings):
    """LangChain embeddings from litm's offline MiniLM (unit vectors: a dot product is the cosine)."""

    def __init__(self, model: MiniLM) -> None:
        self.model = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.model.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class MiniLMEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model from litm's offline MiniLM."""

    _model: MiniLM = PrivateAttr()

    def __init__(self, model: MiniLM, **kwargs: Any) -> None:
        super().__init__(model_name=model.name, **kwargs)
        self._model = model

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embeddings([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._model.embed(texts)]


class LitmLLM(CustomLLM):
    """A LlamaIndex chat LLM answering with a litm model (greedy); ``requests`` keeps what it was sent."""

    max_tokens: int = 24
    spec: str = "local:smollm2"
    #: SmolLM2 Instruct has a chat template; the embedded Gemma is a base model (is_chat=False: completions).
    is_chat: bool = True
    _model: Model | None = PrivateAttr(default=None)
    _requests: list[Any] = PrivateAttr(default_factory=list)

    @property
    def model(self) -> Model:
        """The litm model, loaded at the first request (a query engine that never asks never loads it)."""
        if self._model is None:
            self._model = load_model(self.spec)
        return self._model

    @property
    def requests(self) -> list[Any]:
        return self._requests

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=8192, num_output=self.max_tokens, is_chat_model=self.is_chat, model_name=self.spec
        )

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        sent = [{"role": m.role.value, "content": m.content or ""} for m in messages]
        self._requests.append(sent)
        answer = self.model.complete(sent, max_tokens=self.max_tokens).text
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=answer))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._requests.append(prompt)
        return CompletionResponse(text=self.model.complete(prompt, max_tokens=self.max_tokens).text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted=formatted, **kwargs)
