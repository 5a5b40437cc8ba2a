"""Token counts with each model's own tokenizer, offline: the public entry point.

* Local GGUF models count with llama.cpp's tokenizer, exactly as llama.cpp evaluates the prompt (BOS
  included); chat messages are rendered through the GGUF's own chat template first.
* OpenAI-style models count with tiktoken encodings loaded from files shipped in packages (see
  :mod:`litm.models.tokenizers.offline`); OpenAI-compatible servers are counted approximately unless
  given ``tokenizer="local:/same/model.gguf"``.
* Anthropic models use the ``count_tokens`` endpoint when an API key is configured, otherwise an
  estimate marked approximate.

Every tokenizer says whether its counts are ``exact``::

    >>> tok = get_tokenizer("openai:gpt-4")
    >>> tok.count("Lost in the middle"), tok.exact
    (4, True)

This module sits above :mod:`litm.models` (it loads models from spec strings); the implementations live
in :mod:`litm.models.tokenizers` and next to each backend.
"""

from __future__ import annotations

from typing import Any

from litm.models.base import Model, PromptInput, check_prompt
from litm.models.spec import load_model
from litm.models.tokenizers import (
    ANTHROPIC_CHARS_PER_TOKEN,
    CL100K_SHA256,
    CL100K_URL,
    OPENAI_REPLY_PRIMING,
    OPENAI_TOKENS_PER_MESSAGE,
    OPENAI_TOKENS_PER_NAME,
    EstimateTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    ensure_offline_tiktoken,
    offline_encoding,
    openai_tokenizer,
)

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "CL100K_SHA256",
    "CL100K_URL",
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "count_tokens",
    "ensure_offline_tiktoken",
    "get_tokenizer",
    "offline_encoding",
    "openai_tokenizer",
]


def get_tokenizer(spec_or_model: str | Model = "local", **options: Any) -> Tokenizer:
    """The tokenizer of a model spec (``"local"``, ``"openai:gpt-4"``, ...) or of a loaded :class:`Model`.

    ``options`` go to :func:`litm.models.load_model` when a spec is given. Local specs load the GGUF
    (llama.cpp needs the model to tokenize); remote specs send nothing over the network to build a
    tokenizer.
    """
    model = spec_or_model if isinstance(spec_or_model, Model) else load_model(spec_or_model, **options)
    return model.tokenizer


def count_tokens(prompt: PromptInput, model: str | Model = "local", **options: Any) -> int:
    """Tokens ``prompt`` (a string or chat messages) occupies in ``model``'s context.

    >>> count_tokens([{"role": "user", "content": "hi"}], "openai:gpt-4")
    8
    """
    checked = check_prompt(prompt)
    loaded = model if isinstance(model, Model) else load_model(str(model), **options)
    return loaded.count_tokens(checked)
