"""Tokenizers: count tokens the way each model does, offline, and say how far a count may be off.

The protocol (:class:`Tokenizer`), the count with its margin (:class:`TokenCount`, :func:`safety_margin`),
OpenAI's BPE encodings loaded without network (:class:`OpenAITokenizer`), and a script-aware estimate for
models whose tokenizer is not published (:class:`EstimateTokenizer`). Backends with their own tokenizer
(llama.cpp, Anthropic's ``count_tokens`` endpoint) keep it next to the backend.
"""

from litm.models.tokenizers._base import (
    TOOL_CALL_TOKENS,
    TOOL_SCHEMA_MARGIN,
    TOOLS_OVERHEAD_TOKENS,
    UNSTATED_MARGIN,
    TokenCount,
    Tokenizer,
    count_request,
    safety_margin,
)
from litm.models.tokenizers._bpe import (
    ENCODING_SHA256,
    OPENAI_REPLY_PRIMING,
    OPENAI_TOKENS_PER_MESSAGE,
    OPENAI_TOKENS_PER_NAME,
    OpenAITokenizer,
    openai_tokenizer,
)
from litm.models.tokenizers._estimate import ANTHROPIC_CHARS_PER_TOKEN, ESTIMATE_MARGIN, EstimateTokenizer

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "ENCODING_SHA256",
    "ESTIMATE_MARGIN",
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "TOOLS_OVERHEAD_TOKENS",
    "TOOL_CALL_TOKENS",
    "TOOL_SCHEMA_MARGIN",
    "UNSTATED_MARGIN",
    "EstimateTokenizer",
    "OpenAITokenizer",
    "TokenCount",
    "Tokenizer",
    "count_request",
    "openai_tokenizer",
    "safety_margin",
]
