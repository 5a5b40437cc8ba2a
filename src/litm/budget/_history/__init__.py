"""Compact an agent's conversation to a token budget without breaking tool-call pairs.

Long agent loops bury the task in the middle of the context, exactly where models look least. Compaction
keeps the head (system prompt) and the most recent turns verbatim, replaces everything older with one
state summary, and can repeat the core instruction at the very end, where it is seen. It works on the
three request shapes the providers take (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages) and
hands back a request each provider accepts.
"""

from litm.budget._history.compact import Compaction, compact_history, compact_request
from litm.budget._history.summary import SUMMARY_PREFIX, Summarizer, extractive_summary

__all__ = ["SUMMARY_PREFIX", "Compaction", "Summarizer", "compact_history", "compact_request", "extractive_summary"]
