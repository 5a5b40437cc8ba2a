"""Models behind one interface: the embedded offline default, any GGUF file, servers and APIs.

Load a model from a spec string (the same strings work on the command line and in config files), then
complete prompts and count tokens with the model's own tokenizer::

    >>> from litm.models import load_model
    >>> model = load_model("local")     # Gemma 3 270M, offline, assembled on first use  # doctest: +SKIP
    >>> prompt = "Question: What is the capital of France?\\nAnswer:"
    >>> model.complete(prompt, max_tokens=8, stop=["\\n"]).text                           # doctest: +SKIP
    ' Paris'
    >>> model.count_tokens(prompt)                                                       # doctest: +SKIP
    13

Specs: ``local``, ``local:smollm2``, ``local:/path/model.gguf``, ``openai:gpt-4o-mini``,
``openai-compatible:http://127.0.0.1:8080/v1@model-name``, ``anthropic:claude-...``; add more with
:func:`register_backend`.
"""

from litm.errors import (
    ContextWindowExceededError,
    LogprobsUnavailableError,
    ModelError,
    ModelIntegrityError,
    ModelNotFoundError,
    UnknownModelSpecError,
)
from litm.models._anthropic_backend import AnthropicModel
from litm.models._base import Completion, GenerationRequest, Model, PromptLike, complete_many
from litm.models._embedded import EMBEDDED, cache_dir
from litm.models._local import LocalModel, unload_all
from litm.models._openai_backend import OpenAIModel
from litm.models._spec import ModelSpec, backends, load_model, parse_spec, register_backend, unregister_backend

__all__ = [
    "EMBEDDED",
    "AnthropicModel",
    "Completion",
    "ContextWindowExceededError",
    "GenerationRequest",
    "LocalModel",
    "LogprobsUnavailableError",
    "Model",
    "ModelError",
    "ModelIntegrityError",
    "ModelNotFoundError",
    "ModelSpec",
    "OpenAIModel",
    "PromptLike",
    "UnknownModelSpecError",
    "backends",
    "cache_dir",
    "complete_many",
    "load_model",
    "parse_spec",
    "register_backend",
    "unload_all",
    "unregister_backend",
]
