"""The gate decision: count the whole request, then send it, refuse it, or compact it to fit.

The request is counted as the provider bills it (:func:`~litm.models.tokenizers.count_request`: messages
with tool calls and results, content blocks, system blocks, tool schemas). It passes when its bound
``upper`` (the count, plus the safety margin when the count is approximate) is within the budget. Over
budget, ``on_exceed="raise"`` refuses with :class:`~litm.errors.ContextBudgetExceeded` and
``on_exceed="trim"`` compacts the conversation (:func:`~litm.budget._history.compact_request`) into a
request the provider accepts. A request the gate cannot count (an unknown content block, input stored on
the provider's side such as ``previous_response_id``) is refused with a
:class:`~litm.errors.PromptError`: the gate never guesses.

Example:
    >>> gate = TokenGate(20, "openai:gpt-4")
    >>> call = gate.before(Call("openai-chat", "/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}))
    >>> call.count.tokens, call.upper
    (8, 8)
    >>> gate.before(Call("openai-chat", "/chat/completions", {"messages": [{"role": "user", "content": "hi " * 40}]}))
    Traceback (most recent call last):
    ...
    litm.errors.ContextBudgetExceeded: request has 48 input tokens, over the budget of 20; nothing was sent (...)
"""

from __future__ import annotations

from typing import Literal

from litm.budget._counting import as_counter
from litm.budget._guard.pipeline import Call, Step
from litm.budget._history import compact_request
from litm.budget._margin import describe_count, margin_of, upper_of
from litm.errors import ContextBudgetExceeded, InvalidOptionError, PromptError

__all__ = ["ON_EXCEED", "OnExceed", "TokenGate"]

OnExceed = Literal["raise", "trim"]
ON_EXCEED: tuple[str, ...] = ("raise", "trim")


class TokenGate(Step):
    """The input-token check: the first step of every guarded call.

    With ``max_input_tokens=None`` the gate only counts (for a spend cap's reservation) and refuses nothing
    but what it cannot count.
    """

    def __init__(
        self, max_input_tokens: int | None, tokenizer: object, on_exceed: OnExceed = "raise", summarizer: object = None
    ) -> None:
        if max_input_tokens is not None and (
            isinstance(max_input_tokens, bool) or not isinstance(max_input_tokens, int) or max_input_tokens <= 0
        ):
            raise InvalidOptionError(f"max_input_tokens must be a positive integer, got {max_input_tokens!r}")
        if on_exceed not in ON_EXCEED:
            raise InvalidOptionError(f"on_exceed must be one of {', '.join(ON_EXCEED)}, got {on_exceed!r}")
        if on_exceed == "trim" and max_input_tokens is None:
            raise InvalidOptionError("on_exceed='trim' needs max_input_tokens= (the budget to trim to)")
        self.max_input_tokens = max_input_tokens
        self.counter = as_counter(tokenizer)
        self.on_exceed = on_exceed
        self.summarizer = summarizer

    def before(self, call: Call) -> Call:
        try:
            count = self.counter.count_request(call.body, call.api)
        except PromptError as exc:
            raise PromptError(f"{exc}; the guard cannot count this request, so nothing was sent") from exc
        upper = upper_of(count)
        if self.max_input_tokens is None or upper <= self.max_input_tokens:
            return call.replace(count=count, upper=upper)
        if self.on_exceed == "raise":
            raise ContextBudgetExceeded(
                f"request has {describe_count(count).replace('tokens', 'input tokens', 1)}, over the budget of "
                f"{self.max_input_tokens}; nothing was sent",
                prompt_tokens=count.tokens, budget=self.max_input_tokens, margin=margin_of(count), upper=upper,
                advice="trim documents with litm.fit, compact history with litm.compact_history, "
                "or guard(..., on_exceed='trim')",
            )  # fmt: skip
        compacted = compact_request(
            call.body, call.api, self.max_input_tokens, counter=self.counter, summarizer=self.summarizer
        )
        # Counted once more as a whole, so the call carries the count of exactly what is sent (notes included).
        recount = self.counter.count_request(compacted.request, call.api)
        return call.replace(body=compacted.request, count=recount, upper=upper_of(recount), compacted=True)
