"""Token counts with each model's own tokenizer, offline: the public entry point.

* Local GGUF models count with llama.cpp's tokenizer, exactly as llama.cpp evaluates the prompt (BOS
  included); chat messages are rendered through the GGUF's own chat template first.
* OpenAI models count with their own BPE encoding (``o200k_base`` for GPT-4o/4.1/5 and the o-series,
  ``cl100k_base`` for GPT-4 and GPT-3.5), shipped in the ``bpe-openai`` package: exact, offline.
* Anthropic models use the ``count_tokens`` endpoint when an API key is configured; OpenAI-compatible
  servers use ``tokenizer="local:/same/model.gguf"`` when given. Otherwise counts are a script-aware
  estimate with a stated margin (:mod:`litm.models.tokenizers._estimate`).

Every tokenizer says whether its counts are ``exact`` and, when not, by how much they may be low::

    >>> tok = get_tokenizer("openai:gpt-4o")
    >>> tok.count("Lost in the middle"), tok.exact, safety_margin(tok)
    (4, True, 0.0)
    >>> safety_margin(get_tokenizer("anthropic:claude-haiku-4-5", count_with_api=False))
    0.15

A budget counts whole requests with :func:`count_request` and compares :attr:`TokenCount.upper` with its
limit. This module sits above :mod:`litm.models` (it loads models from spec strings); the implementations
live in :mod:`litm.models.tokenizers` and next to each backend.
"""

from __future__ import annotations

from litm.models import Model, load_model
from litm.models._base import PromptLike
from litm.models.tokenizers import TokenCount, Tokenizer, count_request, safety_margin

# The tokenizer classes and their constants stay in litm.models.tokenizers' private modules: get_tokenizer
# picks the right one for a model.
__all__ = ["TokenCount", "Tokenizer", "count_request", "count_tokens", "get_tokenizer", "safety_margin"]


def get_tokenizer(spec_or_model: str | Model = "local", **options: object) -> Tokenizer:
    """The tokenizer of a model spec (``"local"``, ``"openai:gpt-4o"``, ...) or of a loaded :class:`Model`.

    ``options`` go to :func:`litm.models.load_model` when a spec is given. Local specs load the GGUF
    (llama.cpp needs the model to tokenize); remote specs send nothing over the network to build a
    tokenizer.
    """
    model = spec_or_model if isinstance(spec_or_model, Model) else load_model(spec_or_model, **options)
    return model.tokenizer


def count_tokens(prompt: PromptLike, model: str | Model = "local", **options: object) -> int:
    """Tokens ``prompt`` (a string, chat messages or a built :class:`litm.Prompt`) occupies in ``model``'s
    context, rendered the way that model receives it.

    >>> count_tokens([{"role": "user", "content": "hi"}], "openai:gpt-4")
    8
    """
    loaded = model if isinstance(model, Model) else load_model(str(model), **options)
    return loaded.count_tokens(prompt)
