"""Tokenizers: count tokens the way each model does, offline, and say how far a count may be off.

The protocol (:class:`Tokenizer`), the count with its margin (:class:`TokenCount`, :func:`safety_margin`),
OpenAI's BPE encodings loaded without network, and a script-aware estimate for models whose tokenizer is not
published (what :func:`litm.tokens.get_tokenizer` gives for them). Backends with their own tokenizer
(llama.cpp, Anthropic's ``count_tokens`` endpoint) keep it next to the backend.
"""

from litm.models.tokenizers._base import TokenCount, Tokenizer, count_request, safety_margin

# The implementations (OpenAITokenizer, EstimateTokenizer) and their constants live in the private modules:
# users get a tokenizer from litm.tokens.get_tokenizer or a model's ``tokenizer``.
__all__ = ["TokenCount", "Tokenizer", "count_request", "safety_margin"]
