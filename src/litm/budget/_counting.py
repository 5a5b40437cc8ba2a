"""One way to count tokens, whatever the caller hands the gate: a tokenizer, a model, a spec or a function.

Everything the gate counts goes through :class:`Counter`, which wraps one
:class:`~litm.models.tokenizers.Tokenizer`: a prompt string with :meth:`Counter.count_text`, a whole
provider request (messages with tool calls and content blocks, system blocks, tool schemas) with
:meth:`Counter.count_request`, which is :func:`~litm.models.tokenizers.count_request`. Both return a
:class:`~litm.models.tokenizers.TokenCount` that says whether the count is exact, so the budget code can
apply a margin when it is not (:mod:`litm.budget._margin`).

A plain function ``text -> int`` is accepted too (your own tokenizer); litm cannot know what it counts,
so its counts are marked approximate and carry the margin.

Example:
    >>> counter = as_counter("openai:gpt-4")
    >>> counter.count_request({"messages": [{"role": "user", "content": "hi"}]}, "openai-chat")
    TokenCount(tokens=8, exact=True, notes=(), margin=0.0)
    >>> counter.calls
    1
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from litm.budget._margin import text_count
from litm.errors import ModelError, UnsupportedTypeError
from litm.models.tokenizers import TokenCount, Tokenizer, count_request
from litm.prompt._messages import Message, check_messages
from litm.tokens import get_tokenizer

__all__ = ["Counter", "FunctionTokenizer", "as_counter", "as_tokenizer"]


class FunctionTokenizer:
    """A :class:`~litm.models.tokenizers.Tokenizer` made of a function ``text -> int``; never exact.

    Chat messages count their contents only (the function knows no chat format), or use
    ``messages_fn`` when given.

    >>> FunctionTokenizer(lambda t: len(t.split())).count_messages([{"role": "user", "content": "a b"}])
    2
    """

    def __init__(
        self, text_fn: Callable[[str], int], messages_fn: Callable[[Sequence[Message]], int] | None = None
    ) -> None:
        self.text_fn = text_fn
        self.messages_fn = messages_fn

    @property
    def name(self) -> str:
        return f"function {getattr(self.text_fn, '__name__', type(self.text_fn).__name__)}"

    @property
    def exact(self) -> bool:
        return False

    def encode(self, text: str) -> list[int]:
        raise ModelError(f"{self.name} only counts; it has no token ids")

    def count(self, text: str) -> int:
        return int(self.text_fn(text))

    def count_messages(self, messages: Sequence[Message]) -> int:
        if self.messages_fn is not None:
            return int(self.messages_fn(messages))
        return sum(self.count(m["content"]) for m in check_messages(messages))


class Counter:
    """Counts with one tokenizer and remembers how many times it was asked (benchmarks report it).

    ``Counter(tokenizer)``; wrap a plain counting function with :func:`as_counter`.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer: Tokenizer = tokenizer
        self.calls = 0

    @property
    def exact(self) -> bool:
        """True when the tokenizer's counts equal the model's own."""
        return bool(self.tokenizer.exact)

    def count_text(self, text: str) -> TokenCount:
        """``text`` as sent on its own (a completion prompt)."""
        self.calls += 1
        return text_count(self.tokenizer, text)

    def count_request(self, request: Mapping[str, object], api: str) -> TokenCount:
        """What a provider bills as input for ``request``; a :class:`~litm.errors.PromptError` if uncountable."""
        self.calls += 1
        return count_request(self.tokenizer, request, api)

    def text(self, text: str) -> int:
        """The raw count of ``text`` (no margin)."""
        return self.count_text(text).tokens

    def messages(self, messages: Sequence[Message]) -> int:
        """The raw count of OpenAI-style chat ``messages`` (tool calls included; no margin)."""
        return self.count_request({"messages": list(messages)}, "openai-chat").tokens


def as_tokenizer(obj: object) -> Tokenizer:
    """A :class:`~litm.models.tokenizers.Tokenizer` from a tokenizer, a litm model, a spec string or a function."""
    if isinstance(obj, Counter):
        return obj.tokenizer
    if isinstance(obj, str):
        # Remote specs build their tokenizer offline; local ones load the GGUF (llama.cpp needs it to tokenize).
        return get_tokenizer(obj)
    if isinstance(obj, Tokenizer):
        return obj
    inner = getattr(obj, "tokenizer", None)
    if isinstance(inner, Tokenizer):
        return inner
    if callable(obj) and not isinstance(obj, type):
        return FunctionTokenizer(obj)
    raise UnsupportedTypeError(
        f"cannot count tokens with a {type(obj).__name__}: pass a litm tokenizer, a litm model, a model spec "
        "such as 'openai:gpt-4', or a function text -> token count"
    )


def as_counter(obj: object) -> Counter:
    """Adapt a tokenizer, a litm model, a spec string, a :class:`Counter` or ``callable(text) -> int``."""
    return obj if isinstance(obj, Counter) else Counter(as_tokenizer(obj))
