"""The :class:`Tokenizer` protocol, token counts with a safety margin, and counting whole provider requests.

A tokenizer counts text and plain chat messages the way one model does and says whether exactly.
:func:`count_request` counts what a provider bills for a whole request (tool calls, tool results, content
blocks, tool schemas, system blocks) and returns a :class:`TokenCount`: the count, whether it is exact,
why not, and the ``margin`` (a fraction) by which the true count may exceed it. A budget compares
:attr:`TokenCount.upper` (the count plus its margin, rounded up) with its limit, so an approximate count
never lets an over-budget request through.

Example:
    >>> from litm.models.tokenizers._bpe import OpenAITokenizer
    >>> tok = OpenAITokenizer("o200k_base")
    >>> isinstance(tok, Tokenizer), safety_margin(tok)
    (True, 0.0)
    >>> count_request(tok, {"messages": [{"role": "user", "content": "hi"}]}, "openai-chat")
    TokenCount(tokens=8, exact=True, notes=(), margin=0.0)
    >>> TokenCount(1000, False, ("an estimate",), margin=0.15).upper
    1150
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from litm.errors import InvalidOptionError, PromptError
from litm.prompt._messages import ROLES, BilledRequest, Message, billed_request

__all__ = [
    "TOOLS_OVERHEAD_TOKENS",
    "TOOL_CALL_TOKENS",
    "TOOL_SCHEMA_MARGIN",
    "UNSTATED_MARGIN",
    "TokenCount",
    "Tokenizer",
    "count_billed",
    "count_request",
    "safety_margin",
]

#: The margin assumed for a tokenizer that says it is not exact but states no ``margin`` of its own (a
#: third-party tokenizer): a stated value, not a measurement; give the tokenizer a ``margin`` to replace it.
UNSTATED_MARGIN = 0.25

#: Tokens allowed per tool call and per tool result for the wrapper the provider puts around them (a role
#: header, the call id, delimiters), which no provider publishes. The call's name and JSON arguments and the
#: result's text are counted as text; this allowance goes to the upper bound only.
TOOL_CALL_TOKENS = 16

#: Tool schemas are counted as compact JSON. Providers render them differently (OpenAI as a TypeScript-like
#: namespace of function signatures, which ``benchmarks/bench_estimate.py`` measures as shorter than the
#: JSON on every schema tried; Anthropic inside a tool-use system prompt). The upper bound adds this fraction
#: of the schema tokens and a fixed overhead per request (:data:`TOOLS_OVERHEAD_TOKENS`).
TOOL_SCHEMA_MARGIN = 0.10

#: Fixed tokens per request with tools: OpenAI's namespace wrapper (12 in the OpenAI cookbook's rule) and
#: Anthropic's tool-use system prompt (its pricing page lists 159 to 530 tokens by model and ``tool_choice``).
TOOLS_OVERHEAD_TOKENS: dict[str, int] = {"openai-chat": 12, "openai-responses": 12, "anthropic": 600}


def _ceil(value: float) -> int:
    # Rounded first so that 1000 * 1.15 (1150.0000000000002 in binary) is 1150, not 1151.
    return math.ceil(round(value, 6))


@dataclass(frozen=True)
class TokenCount:
    """A token count, whether it equals the provider's own, why not (``notes``), and its safety ``margin``.

    ``margin`` is the fraction by which the true count may exceed ``tokens``: 0.0 when exact, else measured
    or stated by the tokenizer and the request shape (see :func:`count_billed`). :attr:`upper` is the count a
    budget must compare with its limit. Counts add up: ``a + b`` keeps the sum of both upper bounds.

    >>> a = TokenCount(100, True)
    >>> b = TokenCount(100, False, ("an estimate",), margin=0.5)
    >>> (a + b).tokens, (a + b).upper, (a + b).margin
    (200, 250, 0.25)
    """

    tokens: int
    exact: bool
    notes: tuple[str, ...] = ()
    margin: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 0:
            raise InvalidOptionError(f"TokenCount.tokens must be an integer >= 0, got {self.tokens!r}")
        if not isinstance(self.margin, int | float) or not math.isfinite(self.margin) or self.margin < 0:
            raise InvalidOptionError(f"TokenCount.margin must be a finite number >= 0, got {self.margin!r}")
        if self.exact and self.margin:
            raise InvalidOptionError(f"an exact TokenCount has margin 0, got {self.margin!r}")
        object.__setattr__(self, "margin", float(self.margin))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def upper(self) -> int:
        """``ceil(tokens * (1 + margin))``: the most tokens the provider may bill for what was counted."""
        return _ceil(self.tokens * (1.0 + self.margin))

    @classmethod
    def bounded(cls, tokens: int, upper: int, notes: Sequence[str] = ()) -> TokenCount:
        """A count whose upper bound is ``upper``: exact when there are no notes and ``upper == tokens``.

        The margin is rounded up (to 1e-4), so :attr:`upper` is never below ``upper``.

        >>> TokenCount.bounded(300, 340, ["an estimate"]).margin
        0.1334
        """
        upper = max(upper, tokens)
        if not tokens:
            # Only allowances (no counted text): the bound itself is the best count there is.
            return cls(upper, not notes and not upper, tuple(dict.fromkeys(notes)))
        margin = math.ceil((upper / tokens - 1.0) * 1e4 - 1e-9) / 1e4 if upper > tokens else 0.0
        return cls(tokens, not notes and not margin, tuple(dict.fromkeys(notes)), margin)

    def __add__(self, other: object) -> TokenCount:
        if not isinstance(other, TokenCount):
            return NotImplemented
        return TokenCount.bounded(self.tokens + other.tokens, self.upper + other.upper, [*self.notes, *other.notes])


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way one model does.

    ``exact`` is True when counts equal the model's own (for messages: chat-format overhead included).
    Every litm tokenizer also has a ``margin`` attribute (0.0 when exact); it is optional for other
    tokenizers, so read it through :func:`safety_margin`.
    """

    @property
    def name(self) -> str:
        """What does the counting, e.g. ``"llama.cpp:gemma-3-270m-q4_k_m"`` or ``"bpe-openai:o200k_base"``."""
        ...

    @property
    def exact(self) -> bool:
        """True when counts equal the model's own."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text`` as sent on its own (a completion prompt, BOS included where the model adds one)."""
        ...

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of chat ``messages`` as sent, chat-format overhead and reply header included."""
        ...


def safety_margin(tokenizer: object) -> float:
    """The fraction a budget adds to ``tokenizer``'s counts: its ``margin``, else 0 if exact, else
    :data:`UNSTATED_MARGIN`.

    >>> class Words:
    ...     exact = False
    >>> safety_margin(Words())
    0.25
    """
    margin = getattr(tokenizer, "margin", None)
    if margin is None:
        return 0.0 if getattr(tokenizer, "exact", False) is True else UNSTATED_MARGIN
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not math.isfinite(margin) or margin < 0:
        raise InvalidOptionError(f"{type(tokenizer).__name__}.margin must be a finite number >= 0, got {margin!r}")
    return float(margin)


def count_request(tokenizer: Tokenizer, request: Mapping[str, Any], api: str) -> TokenCount:
    """Tokens a provider bills as input for ``request`` (the SDK call's keyword arguments), with a margin.

    ``api`` is the request shape: ``"openai-chat"``, ``"openai-responses"`` or ``"anthropic"``. A tokenizer
    that can count whole requests itself (a ``count_request(request, api)`` method, e.g. Anthropic's
    ``count_tokens`` endpoint) does; otherwise the request is read with
    :func:`~litm.prompt._messages.billed_request` and counted with :func:`count_billed`. What cannot be
    counted or bounded raises :class:`~litm.errors.PromptError`.

    >>> from litm.models.tokenizers._estimate import EstimateTokenizer
    >>> c = count_request(EstimateTokenizer(), {"messages": [{"role": "user", "content": "你好世界"}]}, "anthropic")
    >>> c.exact, c.upper >= c.tokens > 0
    (False, True)
    """
    native = getattr(tokenizer, "count_request", None)
    if callable(native):
        result = native(request, api)
        if not isinstance(result, TokenCount):
            raise PromptError(f"{type(tokenizer).__name__}.count_request must return a TokenCount")
        return result
    return count_billed(tokenizer, billed_request(request, api))


def count_billed(tokenizer: Tokenizer, billed: BilledRequest) -> TokenCount:
    """Count a normalised request with a chat tokenizer: its turns as chat messages, plus tools and images.

    The upper bound adds, to what the tokenizer counts: the tokenizer's own margin (:func:`safety_margin`);
    :data:`TOOL_CALL_TOKENS` per tool call and result; :data:`TOOL_SCHEMA_MARGIN` of the tool schemas plus
    :data:`TOOLS_OVERHEAD_TOKENS`; images at their upper bound. Turns whose role the tokenizer's chat
    format does not take (``developer``, ``tool`` for a chat template) are counted as ``system`` and
    ``user`` turns, with :data:`TOOL_CALL_TOKENS` allowed for each.
    """
    notes = list(billed.approximate)
    margin = safety_margin(tokenizer)
    roles = getattr(tokenizer, "roles", ROLES)
    messages: list[dict[str, str]] = []
    remapped = 0
    for turn in billed.turns:
        role = turn.role
        if roles is not None and role not in roles:
            role = "system" if turn.role == "developer" else "user"
            remapped += 1
            notes.append(f"{turn.role!r} turns are counted as {role!r} turns")
        msg = {"role": role, "content": turn.text}
        if turn.name is not None:
            msg["name"] = turn.name
        messages.append(msg)
    text = tokenizer.count_messages(messages) if messages else 0
    tokens, upper = text, _ceil(text * (1.0 + margin))
    wrappers = (billed.tool_calls + billed.tool_results + remapped) * TOOL_CALL_TOKENS
    upper += wrappers
    if billed.tools:
        schema = tokenizer.count(billed.tools)
        overhead = TOOLS_OVERHEAD_TOKENS.get(billed.api, max(TOOLS_OVERHEAD_TOKENS.values()))
        tokens += schema + overhead
        upper += _ceil(schema * (1.0 + margin) * (1.0 + TOOL_SCHEMA_MARGIN)) + overhead
    tokens += billed.media_tokens
    upper += billed.media_tokens
    if not tokenizer.exact:
        notes.insert(0, getattr(tokenizer, "note", "") or f"{tokenizer.name} is not the model's own tokenizer")
    return TokenCount.bounded(tokens, upper, notes)
