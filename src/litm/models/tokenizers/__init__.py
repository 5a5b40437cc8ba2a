"""Tokenizers: count tokens the way each model does, offline, and say whether the count is exact.

The protocol (:class:`Tokenizer`), OpenAI's BPE encodings loaded without network, and an estimate for
models whose tokenizer is not published. Backends with their own tokenizer (llama.cpp, Anthropic's
``count_tokens`` endpoint) keep it next to the backend.
"""

from litm.models.tokenizers.base import TokenCount, Tokenizer, count_billed, count_request
from litm.models.tokenizers.bpe import (
    OPENAI_REPLY_PRIMING,
    OPENAI_TOKENS_PER_MESSAGE,
    OPENAI_TOKENS_PER_NAME,
    TiktokenTokenizer,
    openai_tokenizer,
)
from litm.models.tokenizers.estimate import ANTHROPIC_CHARS_PER_TOKEN, EstimateTokenizer
from litm.models.tokenizers.offline import CL100K_SHA256, CL100K_URL, ensure_offline_tiktoken, offline_encoding

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "CL100K_SHA256",
    "CL100K_URL",
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "TokenCount",
    "Tokenizer",
    "count_billed",
    "count_request",
    "ensure_offline_tiktoken",
    "offline_encoding",
    "openai_tokenizer",
]
