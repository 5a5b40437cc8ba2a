"""The summariser: what replaces the turns compaction leaves out.

Without a model, the summary is extractive and free: one line per message (its first sentence, or the
tools it called), the first user message (usually the task) first, then the newest lines that fit. With a
litm model (anything with ``complete(prompt, max_tokens=...)``), the model writes a state summary. Any
``callable(old_messages, max_tokens) -> str`` works too.

Example:
    >>> old = [{"role": "user", "content": "Book a flight to Oslo. Under 300 euros."},
    ...        {"role": "assistant", "content": None,
    ...         "tool_calls": [{"id": "c1", "function": {"name": "search_flights", "arguments": "{}"}}]},
    ...        {"role": "tool", "tool_call_id": "c1", "content": "TP100 at 250 EUR. TP101 at 260 EUR."}]
    >>> print(extractive_summary(old, 100))
    user: Book a flight to Oslo.
    assistant called search_flights
    tool result: TP100 at 250 EUR.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from litm.budget._counting import Counter, as_counter
from litm.budget._history.units import content_text, is_tool_call, is_tool_result
from litm.errors import UnsupportedTypeError
from litm.util._sentences import first_sentence

__all__ = ["SUMMARY_PREFIX", "Summarizer", "choose_lines", "describe", "extractive_summary", "summarizer_of"]

Message = Mapping[str, Any]
#: ``summarize(old_messages, max_tokens) -> summary text``.
Summarizer = Callable[[Sequence[Message], int], str]

SUMMARY_PREFIX = "Summary of the earlier conversation (state so far):"


def _tool_names(message: Message) -> list[str]:
    names = [str((c.get("function") or {}).get("name", "?")) for c in message.get("tool_calls") or []]
    if isinstance(message.get("function_call"), Mapping):
        names.append(str(message["function_call"].get("name", "?")))
    content = message.get("content")
    if isinstance(content, list):
        names += [str(b.get("name", "?")) for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
    if message.get("type") == "function_call":
        names.append(str(message.get("name", "?")))
    return names


def describe(message: Message) -> str:
    """One line for ``message``: ``role: first sentence``, the tools an assistant called, or a tool result."""
    if message.get("type") == "reasoning":
        return ""  # the model's own scratch work: nothing the summary must carry
    if is_tool_call(message):
        return f"assistant called {', '.join(_tool_names(message)) or 'a tool'}"
    if is_tool_result(message):
        return f"tool result: {first_sentence(_text(message), 160)}"
    return f"{message.get('role', '?')}: {first_sentence(_text(message))}"


def _text(message: Message) -> str:
    # A Responses tool result carries its text as ``output``; every other message as ``content``.
    is_output = message.get("type") == "function_call_output"
    return content_text(message.get("output") if is_output else message.get("content"))


def choose_lines(messages: Sequence[Message], fits: Callable[[str], bool]) -> str | None:
    """The most informative extractive summary that ``fits``: the first user line, then the newest lines.

    Returns None when even the empty summary does not fit. Found by binary search on how many of the newest
    lines are kept, so it costs about ``log2(n)`` checks rather than one per line.
    """
    lines = [describe(m) for m in messages]
    first = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)

    def text(k: int, with_first: bool) -> str:
        chosen = ([first] if with_first and first is not None and first < k else []) + list(range(k, len(lines)))
        return "\n".join(lines[i] for i in chosen if lines[i])

    for with_first in (True, False):
        if not fits(text(len(lines), with_first)):
            continue
        lo, hi = -1, len(lines)  # invariant: keeping lines[hi:] fits; keeping lines[lo:] does not (or lo = -1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(text(mid, with_first)):
                hi = mid
            else:
                lo = mid
        return text(hi, with_first)
    return None


def extractive_summary(messages: Sequence[Message], max_tokens: int, counter: object = None) -> str:
    """A summary made of the first sentence of each message, newest kept when space runs out.

    The first user message (usually the task) is kept first; then the most recent lines that fit in
    ``max_tokens`` as ``counter`` counts them (all lines when no counter is given). Deterministic and free.
    """
    if counter is None:
        return "\n".join(line for line in map(describe, messages) if line)
    count = as_counter(counter)
    return choose_lines(messages, lambda text: count.text(text) <= max_tokens) or ""


def _model_summarizer(model: Any) -> Summarizer:
    def summarize(old: Sequence[Message], max_tokens: int) -> str:
        transcript = "\n".join(
            describe(m) if is_tool_call(m) else f"{m.get('role', 'tool')}: {_text(m)}"
            for m in old
        )
        prompt = (
            "Summarise the state of the conversation below for the assistant who continues it: the user's goal, "
            "decisions made, facts learned (with numbers and names), tool results that matter, and open tasks.\n\n"
            f"{transcript}\n\nSummary:"
        )
        return str(model.complete(prompt, max_tokens=max_tokens).text).strip()

    return summarize


def summarizer_of(summarizer: object, counter: Counter) -> Summarizer:
    """A :data:`Summarizer` from a litm model, a callable, or None (extractive, counted with ``counter``)."""
    if summarizer is None:
        return lambda old, max_tokens: extractive_summary(old, max_tokens, counter)
    if callable(getattr(summarizer, "complete", None)):
        return _model_summarizer(summarizer)
    if callable(summarizer):
        return summarizer
    raise UnsupportedTypeError(
        f"summarizer must be a litm model, a function (old_messages, max_tokens) -> str, or None; "
        f"got {type(summarizer).__name__}"
    )
