"""Compact an agent's message history to a token budget without breaking tool-call pairs.

Long agent loops bury the task in the middle of the context, exactly where models look least. Compaction
keeps the leading system message(s) and the most recent turns verbatim, replaces everything older with one
state-summary message, and can repeat the core instruction at the very end, where it is seen.

An assistant message that calls tools and the tool results that answer it form one unit that is kept or
summarised whole, in both OpenAI (``tool_calls`` + ``role: "tool"``) and Anthropic (``tool_use`` blocks +
a user message of ``tool_result`` blocks) shapes; a provider rejects a history where they are split.

Example:
    >>> msgs = [{"role": "system", "content": "Be brief."}] + [
    ...     {"role": r, "content": f"turn {i} " + "word " * 40} for i, r in enumerate(["user", "assistant"] * 5)]
    >>> out = compact_history(msgs, max_tokens=150, counter=lambda t: len(t.split()))
    >>> out.messages[0]["content"], out.summarized > 0, out.tokens <= 150
    ('Be brief.', True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from litm.budget.counting import Counter, _content_text, as_counter
from litm.errors import ContextBudgetExceeded, LitmError
from litm.util.sentences import first_sentence

__all__ = ["Compaction", "compact_history", "extractive_summary"]

Message = dict[str, Any]
Summarizer = Callable[[list[Message], int], str]

SUMMARY_PREFIX = "Summary of the earlier conversation (state so far):"


@dataclass(frozen=True)
class Compaction:
    """The compacted messages, how many originals were summarised, and the final token count."""

    messages: list[Message]
    tokens: int
    summarized: int = 0
    summary: str | None = None
    kept: list[int] = field(default_factory=list)


def _is_tool_call(m: Message) -> bool:
    if m.get("role") != "assistant":
        return False
    if m.get("tool_calls") or m.get("function_call"):
        return True
    content = m.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)


def _is_tool_result(m: Message) -> bool:
    if m.get("role") in ("tool", "function"):
        return True
    content = m.get("content")
    return (
        m.get("role") == "user"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _units(messages: Sequence[Message], start: int) -> list[list[int]]:
    """Group message indices into units that must be kept or dropped together."""
    units: list[list[int]] = []
    i = start
    while i < len(messages):
        unit = [i]
        if _is_tool_call(messages[i]):
            j = i + 1
            while j < len(messages) and _is_tool_result(messages[j]):
                unit.append(j)
                j += 1
            i = j
        else:
            i += 1
        units.append(unit)
    return units


def _describe(m: Message) -> str:
    role = str(m.get("role", "?"))
    if _is_tool_call(m):
        names = [c.get("function", {}).get("name", "?") for c in m.get("tool_calls") or []]
        content = m.get("content")
        if isinstance(content, list):
            names += [str(b.get("name", "?")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        return f"assistant called {', '.join(names) or 'a tool'}"
    if _is_tool_result(m):
        return f"tool result: {first_sentence(_content_text(m), 160)}"
    return f"{role}: {first_sentence(_content_text(m))}"


def extractive_summary(messages: list[Message], max_tokens: int, counter: Counter | None = None) -> str:
    """A summary made of the first sentence of each message, newest kept when space runs out.

    The first user message (usually the task) is always kept first; then the most recent lines that fit.
    Used when no summarising model is given; deterministic and free.
    """
    lines = [_describe(m) for m in messages]
    if not lines:
        return ""
    if counter is None:
        return "\n".join(lines)
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    chosen: list[int] = [first_user] if first_user is not None else []
    for i in range(len(lines) - 1, -1, -1):
        if i in chosen:
            continue
        trial = sorted([*chosen, i])
        if counter.text("\n".join(lines[j] for j in trial)) > max_tokens:
            break
        chosen = trial
    text = "\n".join(lines[j] for j in sorted(chosen))
    while chosen and counter.text(text) > max_tokens:
        chosen = sorted(chosen)[:-1]
        text = "\n".join(lines[j] for j in chosen)
    return text


def _model_summarizer(model: Any) -> Summarizer:
    def summarize(old: list[Message], max_tokens: int) -> str:
        transcript = "\n".join(
            _describe(m) if _is_tool_call(m) else f"{m.get('role')}: {_content_text(m)}" for m in old
        )
        prompt = (
            "Summarise the state of the conversation below for the assistant who continues it: the user's goal, "
            "decisions made, facts learned (with numbers and names), tool results that matter, and open tasks.\n\n"
            f"{transcript}\n\nSummary:"
        )
        return str(model.complete(prompt, max_tokens=max_tokens).text).strip()

    return summarize


def compact_history(
    messages: Sequence[Message],
    max_tokens: int,
    *,
    counter: Any,
    summarizer: Summarizer | Any | None = None,
    summary_tokens: int | None = None,
    summary_role: str = "system",
    repeat_instruction: str | None = None,
) -> Compaction:
    """Fit ``messages`` into ``max_tokens``: keep system messages and recent turns, summarise the rest.

    ``counter`` counts tokens (a litm model or tokenizer, or ``callable(text) -> int``); ``summarizer`` is a
    litm model, a ``callable(old_messages, max_tokens) -> str``, or None for the extractive fallback.
    ``summary_tokens`` caps the summary (default: a quarter of the budget). ``repeat_instruction`` is appended
    as a final system message. Raises :class:`~litm.errors.ContextBudgetExceeded` when the system messages and
    the latest turn alone do not fit. The input list is not modified.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise LitmError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if not isinstance(messages, Sequence) or any(not isinstance(m, dict) for m in messages):
        raise LitmError("messages must be a list of dicts with 'role' and 'content'")
    count = as_counter(counter)
    msgs = [dict(m) for m in messages]
    tail_extra = [{"role": "system", "content": repeat_instruction}] if repeat_instruction else []
    total = count.messages(msgs + tail_extra)
    if total <= max_tokens:
        return Compaction(messages=msgs + tail_extra, tokens=total, kept=list(range(len(msgs))))

    head_end = 0
    while head_end < len(msgs) and msgs[head_end].get("role") == "system":
        head_end += 1
    head = msgs[:head_end]
    units = _units(msgs, head_end)
    if not units:
        raise ContextBudgetExceeded(
            f"the system messages alone take {total} tokens, over the budget of {max_tokens}",
            prompt_tokens=total, budget=max_tokens, floor=total, advice="shorten the system prompt",
        )
    cap = summary_tokens if summary_tokens is not None else max(16, max_tokens // 4)
    placeholder = [{"role": summary_role, "content": SUMMARY_PREFIX + " …"}]

    # Keep the newest units that fit next to the head, a summary placeholder and the repeated instruction.
    kept_units: list[list[int]] = []
    for unit in reversed(units):
        trial = [i for u in [unit, *kept_units] for i in u]
        if kept_units and count.messages(head + placeholder + [msgs[i] for i in trial] + tail_extra) + cap > max_tokens:
            break
        kept_units.insert(0, unit)
    kept = [i for u in kept_units for i in u]
    floor = count.messages(head + [msgs[i] for i in units[-1]] + tail_extra)
    if floor > max_tokens:
        raise ContextBudgetExceeded(
            f"the system messages and the latest turn take {floor} tokens, over the budget of {max_tokens}",
            prompt_tokens=total, budget=max_tokens, floor=floor,
            advice="raise the budget, or shorten the latest message or the system prompt",
        )
    old = [msgs[i] for i in range(head_end, kept[0])]

    def assemble(summary: str | None, keep: list[int]) -> list[Message]:
        mid = [{"role": summary_role, "content": f"{SUMMARY_PREFIX}\n{summary}"}] if summary else []
        return head + mid + [msgs[i] for i in keep] + tail_extra

    if callable(summarizer) and not hasattr(summarizer, "complete"):
        summarize: Summarizer = summarizer
    elif summarizer is not None:
        summarize = _model_summarizer(summarizer)
    else:
        def summarize(o: list[Message], n: int) -> str:
            return extractive_summary(o, n, count)

    summary = summarize(old, cap).strip() if old else ""
    out = assemble(summary or None, kept)
    tokens = count.messages(out)
    # A model's summary can overrun its cap; then fall back to extractive text that is trimmed to fit, and as
    # a last resort drop the oldest kept units (never the latest one) into the summary as well.
    while tokens > max_tokens:
        room = max_tokens - count.messages(assemble(None, kept)) - count.text(SUMMARY_PREFIX) - 8
        summary = extractive_summary(old, max(room, 0), count) if room > 0 else ""
        out = assemble(summary or None, kept)
        tokens = count.messages(out)
        if tokens <= max_tokens:
            break
        if len(kept_units) <= 1:
            out = assemble(None, kept)
            tokens = count.messages(out)
            break
        moved = kept_units.pop(0)
        kept = [i for u in kept_units for i in u]
        old = old + [msgs[i] for i in moved]
    return Compaction(messages=out, tokens=tokens, summarized=len(old), summary=summary or None, kept=kept)
