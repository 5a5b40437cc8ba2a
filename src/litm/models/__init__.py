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
:func:`register_backend` (a factory from a :class:`ModelSpec` to a :class:`Model` subclass, which implements
``_generate`` for a :class:`GenerationRequest`).
"""

from litm.errors import (
    ContextWindowExceededError,
    LogprobsUnavailableError,
    ModelError,
    ModelIntegrityError,
    ModelNotFoundError,
    UnknownModelSpecError,
)
from litm.models._base import Completion, GenerationRequest, Model, complete_many
from litm.models._spec import ModelSpec, backends, load_model, register_backend, unregister_backend

# The backends' classes (LocalModel, OpenAIModel, AnthropicModel) are reached through load_model; the embedded
# catalogue, the cache folder and spec parsing are the CLI's (litm.models._embedded, litm.models._spec).
__all__ = [
    "Completion",
    "ContextWindowExceededError",
    "GenerationRequest",
    "LogprobsUnavailableError",
    "Model",
    "ModelError",
    "ModelIntegrityError",
    "ModelNotFoundError",
    "ModelSpec",
    "UnknownModelSpecError",
    "backends",
    "complete_many",
    "load_model",
    "register_backend",
    "unregister_backend",
]
