"""A pre-flight token gate around official ``openai`` and ``anthropic`` clients.

``guard(client, max_input_tokens=..., tokenizer=...)`` returns a wrapper whose ``create()`` counts the
request's messages (system prompt and chat overhead included) before anything is sent. Over budget it
raises :class:`~litm.errors.ContextBudgetExceeded`, or with ``on_exceed="trim"`` compacts the history with
:func:`~litm.budget.history.compact_history` and sends the result. Everything else passes through to the
wrapped client untouched.

Example (no request leaves the process when the prompt is over budget)::

    from openai import OpenAI
    from litm.budget import guard
    client = guard(OpenAI(), max_input_tokens=8000, tokenizer="openai:gpt-4o-mini")
    client.chat.completions.create(model="gpt-4o-mini", messages=[...])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from litm.budget.counting import Counter, as_counter
from litm.budget.history import compact_history
from litm.errors import ContextBudgetExceeded, LitmError

__all__ = ["GuardedClient", "guard"]

OnExceed = Literal["raise", "trim"]
Message = dict[str, Any]


class _Gate:
    def __init__(self, max_input_tokens: int, counter: Counter, on_exceed: OnExceed, summarizer: Any) -> None:
        self.max_input_tokens = max_input_tokens
        self.counter = counter
        self.on_exceed = on_exceed
        self.summarizer = summarizer

    def check(self, messages: Sequence[Message], system: Any = None) -> list[Message]:
        """Return the messages to send (possibly compacted); raise when over budget and not trimming."""
        sys_msgs: list[Message] = [{"role": "system", "content": system}] if system else []
        msgs = list(messages)
        tokens = self.counter.messages(sys_msgs + msgs)
        if tokens <= self.max_input_tokens:
            return msgs
        if self.on_exceed == "raise":
            raise ContextBudgetExceeded(
                f"request has {tokens} input tokens, over the budget of {self.max_input_tokens}; nothing was sent",
                prompt_tokens=tokens, budget=self.max_input_tokens,
                advice="trim documents with litm.fit, compact history with litm.compact_history, "
                "or guard(..., on_exceed='trim')",
            )
        out = compact_history(
            sys_msgs + msgs, self.max_input_tokens, counter=self.counter, summarizer=self.summarizer
        ).messages
        # The Anthropic API takes the system prompt separately: hand back only what goes in `messages`.
        return out[len(sys_msgs):] if sys_msgs and out[: len(sys_msgs)] == sys_msgs else out


class _Create:
    def __init__(self, target: Any, gate: _Gate, anthropic: bool) -> None:
        self._target = target
        self._gate = gate
        self._anthropic = anthropic

    def create(self, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise LitmError("guarded create() takes keyword arguments only, as the official SDKs do")
        messages = kwargs.get("messages")
        if not isinstance(messages, list):
            raise LitmError("create() needs messages=[...]")
        kwargs["messages"] = self._gate.check(messages, kwargs.get("system") if self._anthropic else None)
        return self._target.create(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class _Namespace:
    def __init__(self, target: Any, **children: Any) -> None:
        self._target = target
        self.__dict__.update(children)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class GuardedClient:
    """Wraps an ``openai.OpenAI`` or ``anthropic.Anthropic`` client; only ``create()`` is intercepted."""

    def __init__(self, client: Any, gate: _Gate) -> None:
        self._client = client
        self.gate = gate
        chat = getattr(client, "chat", None)
        if chat is not None and hasattr(getattr(chat, "completions", None), "create"):
            self.chat = _Namespace(chat, completions=_Create(chat.completions, gate, anthropic=False))
        elif hasattr(getattr(client, "messages", None), "create"):
            self.messages = _Create(client.messages, gate, anthropic=True)
        else:
            raise LitmError(
                f"guard() supports openai.OpenAI and anthropic.Anthropic clients, got {type(client).__name__}"
            )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def guard(
    client: Any,
    *,
    max_input_tokens: int,
    tokenizer: Any,
    on_exceed: OnExceed = "raise",
    summarizer: Any = None,
) -> GuardedClient:
    """Return ``client`` gated by an input-token budget counted with ``tokenizer``.

    ``tokenizer`` is a litm model or tokenizer, a model spec string (``"openai:gpt-4o-mini"``, ``"local"``),
    or ``callable(text) -> int``. ``on_exceed="raise"`` (default) refuses an over-budget request before it is
    sent; ``"trim"`` compacts the history (system message and latest turns kept, older turns summarised by
    ``summarizer`` or extractively) and sends that.
    """
    if isinstance(max_input_tokens, bool) or not isinstance(max_input_tokens, int) or max_input_tokens <= 0:
        raise LitmError(f"max_input_tokens must be a positive integer, got {max_input_tokens!r}")
    if on_exceed not in ("raise", "trim"):
        raise LitmError(f"on_exceed must be 'raise' or 'trim', got {on_exceed!r}")
    if isinstance(tokenizer, str):
        from litm.tokens import get_tokenizer

        tokenizer = get_tokenizer(tokenizer)
    return GuardedClient(client, _Gate(max_input_tokens, as_counter(tokenizer), on_exceed, summarizer))
