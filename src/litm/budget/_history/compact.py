"""Compact a conversation to a token budget: keep the head and the latest turns, summarise the middle.

The steps, each in its own module: group the messages into units that travel together (:mod:`.units`),
plan how many recent units fit next to a summary (:mod:`.plan`), write the summary (:mod:`.summary`), and
put summary and instruction where the provider accepts them (:mod:`.shapes`). The whole request is
counted with :func:`~litm.models.tokenizers.count_request` (tool calls, tool results, content blocks,
system blocks and tool schemas included), and it fits when its bound ``upper`` (the count plus the safety
margin of an approximate count) is within the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from litm.budget._counting import Counter, as_counter
from litm.budget._history.plan import plan_cut
from litm.budget._history.shapes import SUMMARY_ROLES, Parts, shape_of
from litm.budget._history.summary import choose_lines, summarizer_of
from litm.budget._history.units import group_units, last_turn
from litm.budget._margin import describe_count, margin_of, upper_of
from litm.errors import ContextBudgetExceeded, InvalidOptionError
from litm.models.tokenizers import TokenCount

__all__ = ["Compaction", "compact_history", "compact_request"]

Message = dict[str, Any]
_PLACEHOLDER = "…"


@dataclass(frozen=True)
class Compaction:
    """A compacted conversation and what it cost.

    ``messages`` are the messages to send (the ``input`` items for the Responses API) and ``system`` the
    system prompt to send with them (Anthropic; None otherwise); ``request`` is the whole request rebuilt,
    every other field untouched. ``tokens`` is its count, ``exact`` whether that count is the provider's
    own, ``margin`` the safety margin applied when it is not, and ``upper`` the bound held to the budget.
    ``summarized`` messages were replaced by ``summary`` (None when nothing was left out); ``kept`` are the
    indices of the original messages that were kept (with Anthropic's ``summary_role="user"`` the first of
    them carries the summary).
    """

    messages: list[Message]
    tokens: int
    summarized: int = 0
    summary: str | None = None
    kept: list[int] = field(default_factory=list)
    system: Any = None
    request: dict[str, Any] = field(default_factory=dict)
    exact: bool = True
    margin: float = 0.0
    upper: int = 0


def compact_history(
    messages: Sequence[Mapping[str, object]],
    max_tokens: int,
    *,
    counter: object,
    api: str = "openai-chat",
    system: object = None,
    tools: Sequence[object] | None = None,
    summarizer: object = None,
    summary_tokens: int | None = None,
    summary_role: str = "system",
    repeat_instruction: str | None = None,
) -> Compaction:
    """Fit a conversation into ``max_tokens``: keep the head and the latest turns, summarise the rest.

    ``messages`` are in the shape of ``api``: ``"openai-chat"`` (system messages first, tool calls and
    ``role: "tool"`` results), ``"anthropic"`` (user and assistant turns with content blocks; the system
    prompt as ``system=``, a string or a list of blocks) or ``"openai-responses"`` (input items; ``system=``
    is the ``instructions``). ``tools`` (the tool schemas sent with the request) are counted too.

    ``counter`` counts tokens (a litm tokenizer or model, a spec such as ``"openai:gpt-4"``, or
    ``callable(text) -> int``, counted as approximate). ``summarizer`` is a litm model, a
    ``callable(old_messages, max_tokens) -> str``, or None for the extractive summary; ``summary_tokens``
    caps it (default: a quarter of the budget). ``summary_role`` is ``"system"`` (default) or ``"user"``.
    ``repeat_instruction`` is repeated at the very end, where it is seen. A tool call is never split from
    its results, and the latest turn is always kept; when it does not fit with the head,
    :class:`~litm.errors.ContextBudgetExceeded` is raised. The input is not modified.

    Returns a ``Compaction``: ``messages`` to send (with ``system`` for Anthropic), the whole ``request``
    rebuilt, its count (``tokens``, ``exact``, ``margin``, ``upper``), and what was left out (``summarized``
    messages replaced by ``summary``; ``kept``, the indices of the original messages that were kept).

    Example:
        >>> msgs = [{"role": "system", "content": "Be brief."}] + [
        ...     {"role": r, "content": f"Turn {i}. " + "word " * 40} for i, r in enumerate(["user", "assistant"] * 5)]
        >>> out = compact_history(msgs, max_tokens=150, counter="openai:gpt-4")
        >>> out.messages[0]["content"], out.summarized > 0, out.upper <= 150, out.messages[-1] == msgs[-1]
        ('Be brief.', True, True, True)
    """
    request: dict[str, object] = {shape_of(api).key: messages}
    if system is not None:
        if api == "openai-chat":
            raise InvalidOptionError("for openai-chat the system prompt is a message: put it first in messages")
        request["instructions" if api == "openai-responses" else "system"] = system
    if tools:
        request["tools"] = list(tools)
    return compact_request(
        request, api, max_tokens, counter=counter, summarizer=summarizer, summary_tokens=summary_tokens,
        summary_role=summary_role, repeat_instruction=repeat_instruction,
    )  # fmt: skip


def compact_request(
    request: Mapping[str, object],
    api: str,
    max_tokens: int,
    *,
    counter: object,
    summarizer: object = None,
    summary_tokens: int | None = None,
    summary_role: str = "system",
    repeat_instruction: str | None = None,
) -> Compaction:
    """:func:`compact_history` over a whole provider request (the SDK call's keyword arguments).

    Only the conversation (``messages`` / ``input``, and Anthropic's ``system``) is rewritten; every other
    field (model, tools, sampling settings) is kept as it is and counted.
    """
    _check(max_tokens, summary_tokens, summary_role)
    shape = shape_of(api)
    count = as_counter(counter)
    head, items = shape.split(request)

    def build(summary: str | None, start: int) -> dict[str, Any]:
        return shape.assemble(request, Parts(head, summary, items[start:], repeat_instruction, summary_role))

    def done(rebuilt: dict[str, Any], counted: TokenCount, start: int, summary: str | None) -> Compaction:
        kept = [*range(len(head)), *(len(head) + i for i in range(start, len(items)))]
        return Compaction(
            messages=list(rebuilt[shape.key]), tokens=counted.tokens, summarized=start,
            summary=summary or None, kept=kept, system=rebuilt.get("system") if api == "anthropic" else None,
            request=rebuilt, exact=counted.exact, margin=margin_of(counted), upper=upper_of(counted),
        )  # fmt: skip

    whole = build(None, 0)
    total = count.count_request(whole, api)
    if upper_of(total) <= max_tokens:
        return done(whole, total, 0, None)

    units = group_units(items)
    floor = last_turn(items, units)
    starts = [u[0] for u in units[: floor + 1]]  # starts[u]: the first message of unit u, up to the latest turn

    floor_request = build("", starts[floor]) if floor > 0 else whole
    floor_count = count.count_request(floor_request, api) if floor > 0 else total
    if upper_of(floor_count) > max_tokens:
        raise ContextBudgetExceeded(
            f"the system prompt and the latest turn take {describe_count(floor_count)}, over the budget of "
            f"{max_tokens}",
            prompt_tokens=total.tokens, budget=max_tokens, floor=floor_count.tokens, margin=margin_of(total),
            upper=upper_of(total), advice="raise the budget, or shorten the latest message or the system prompt",
        )  # fmt: skip

    cap = summary_tokens if summary_tokens is not None else max(16, max_tokens // 4)
    cuts = shape.cuts(items, starts)
    cut = plan_cut(cuts, lambda u: count.count_request(build(_PLACEHOLDER, starts[u]), api), max_tokens, cap)
    summarize = summarizer_of(summarizer, count)
    summary = summarize(items[: starts[cut]], cap).strip()
    while True:
        start = starts[cut]
        rebuilt = build(summary, start)
        counted = count.count_request(rebuilt, api)
        if upper_of(counted) <= max_tokens:
            return done(rebuilt, counted, start, summary)
        # The summary overran its cap (a model's can): the extractive summary that fits instead, and when not
        # even an empty one does, the next allowed cut. At the floor an empty summary is known to fit.
        fitted = choose_lines(items[:start], _fitter(count, build, start, api, max_tokens))
        if fitted is not None:
            summary = fitted
        elif cut < floor:
            cut = next(c for c in cuts if c > cut)
        else:  # unreachable while counts are deterministic: the floor was counted with an empty summary
            return done(floor_request, floor_count, start, "")


def _fitter(
    count: Counter, build: Callable[[str | None, int], dict[str, Any]], start: int, api: str, budget: int
) -> Callable[[str], bool]:
    """Whether the request with summary ``text`` and the messages from ``start`` on fits the budget."""

    def fits(text: str) -> bool:
        return upper_of(count.count_request(build(text, start), api)) <= budget

    return fits


def _check(max_tokens: int, summary_tokens: int | None, summary_role: str) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise InvalidOptionError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if summary_tokens is not None and (
        isinstance(summary_tokens, bool) or not isinstance(summary_tokens, int) or summary_tokens < 0
    ):
        raise InvalidOptionError(f"summary_tokens must be a non-negative integer or None, got {summary_tokens!r}")
    if summary_role not in SUMMARY_ROLES:
        raise InvalidOptionError(f"summary_role must be one of {', '.join(SUMMARY_ROLES)}, got {summary_role!r}")
