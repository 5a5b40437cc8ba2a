"""The interface every model backend implements: :class:`Model`, :class:`Completion`, messages.

A model answers a prompt (a plain completion string, or chat messages) and counts tokens with its own
tokenizer. Backends differ in where the model runs (llama.cpp in-process, an OpenAI-compatible server,
OpenAI, Anthropic) but return the same :class:`Completion`, so measurements compare across them::

    >>> from litm.models import load_model
    >>> model = load_model("local")                                    # doctest: +SKIP
    >>> prompt = "Question: What is the capital of France?\\nAnswer:"
    >>> out = model.complete(prompt, max_tokens=8, stop=["\\n"])        # doctest: +SKIP
    >>> out.text, out.input_tokens, out.finish_reason                  # doctest: +SKIP
    (' Paris', 13, 'stop')
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from litm.errors import PromptError
from litm.prompt.messages import Message, check_messages, is_messages

T = TypeVar("T")

if TYPE_CHECKING:
    from litm.models.tokenizers.base import Tokenizer

#: What :meth:`Model.complete` accepts: a plain completion prompt, or chat messages.
PromptInput: TypeAlias = str | Sequence[Message]

@dataclass(frozen=True)
class Completion:
    """One model answer with its measured cost.

    ``input_tokens`` and ``output_tokens`` come from the backend itself (llama.cpp's evaluation, the
    server's ``usage`` block). ``cached_tokens`` is how many prompt tokens were served from a cache
    instead of being evaluated (llama.cpp prefix reuse, OpenAI/Anthropic prompt caching; 0 when cold).
    ``finish_reason`` is normalised to ``"stop"`` (natural end or stop sequence) or ``"length"``
    (``max_tokens`` reached); other backend reasons pass through unchanged.

    >>> Completion("Paris", 13, 2, 0.08, "stop").to_dict()["text"]
    'Paris'
    """

    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    finish_reason: str
    model: str = ""
    cached_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


def check_prompt(prompt: PromptInput) -> str | list[dict[str, str]]:
    """A validated prompt: the string itself, or checked messages (see :func:`check_messages`)."""
    if isinstance(prompt, str):
        return prompt
    if is_messages(prompt):
        return check_messages(prompt)
    raise PromptError(f"a prompt is a string or a list of messages, not {type(prompt).__name__}")


def check_max_tokens(max_tokens: int) -> int:
    """``max_tokens`` as an int >= 1 (a programming error otherwise, hence a plain ValueError)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be an integer >= 1, got {max_tokens!r}")
    return max_tokens


class Model(ABC):
    """A language model behind one spec string (``local``, ``openai:gpt-4o-mini``, ...).

    Subclasses implement :meth:`complete`, :attr:`context_window` and :attr:`tokenizer`. Generation is
    greedy by default (``temperature=0``) so that measurements repeat. ``remote`` backends may be called
    from several threads at once; :func:`complete_many` runs up to ``concurrency`` requests in parallel
    for them and one at a time for in-process models.

    >>> from litm.models import load_model
    >>> with load_model("openai:gpt-4o-mini") as m:      # no request is sent until complete()
    ...     m.name, m.remote
    ('gpt-4o-mini', True)
    """

    #: Short model name (a file stem, or the provider's model id).
    name: str = ""
    #: The spec string this model was loaded from.
    spec: str = ""
    #: True when requests leave the process (a server or an API).
    remote: bool = False
    #: How many requests :func:`complete_many` runs at once by default.
    concurrency: int = 1

    @property
    @abstractmethod
    def context_window(self) -> int:
        """The largest number of tokens (prompt plus answer) one request may use."""

    @property
    @abstractmethod
    def tokenizer(self) -> Tokenizer:
        """The tokenizer whose counts match this model (see :mod:`litm.tokens`)."""

    @property
    def supports_chat(self) -> bool:
        """Whether chat messages are accepted (False for a base model without a chat template)."""
        return True

    @abstractmethod
    def complete(
        self,
        prompt: PromptInput,
        *,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Completion:
        """Answer ``prompt`` (a completion string or chat messages) with at most ``max_tokens`` tokens."""

    def count_tokens(self, prompt: PromptInput) -> int:
        """Tokens ``prompt`` occupies in this model's context, chat-format overhead included."""
        checked = check_prompt(prompt)
        if isinstance(checked, str):
            return self.tokenizer.count(checked)
        return self.tokenizer.count_messages(checked)

    def close(self) -> None:  # noqa: B027 - an optional hook: most backends hold nothing to release
        """Release clients or loaded weights; the model reloads them if used again."""

    def __enter__(self) -> Model:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r})"


def complete_many(
    model: Model,
    prompts: Sequence[PromptInput],
    *,
    concurrency: int | None = None,
    on_result: Callable[[int, Completion], None] | None = None,
    **kwargs: Any,
) -> list[Completion]:
    """Complete every prompt and return the answers in input order.

    Remote models run up to ``concurrency`` requests at once in a thread pool (default:
    ``model.concurrency``); in-process models run one prompt at a time, in order, since they share one
    llama.cpp context. ``kwargs`` go to :meth:`Model.complete`; ``on_result(index, completion)`` is called
    as each answer arrives (in completion order), always in the calling thread, so it may write files or
    update a progress bar without a lock. The first error stops the batch and is raised.

    >>> from litm.models import load_model
    >>> answers = complete_many(load_model("local"), ["Q: 2+2?\\nA:", "Q: 3+3?\\nA:"], max_tokens=4)  # doctest: +SKIP
    """
    limit = model.concurrency if concurrency is None else concurrency
    if limit < 1:
        raise ValueError(f"concurrency must be >= 1, got {limit}")
    results: list[Completion | None] = [None] * len(prompts)

    def collect(i: int, done: Completion) -> None:
        results[i] = done
        if on_result is not None:
            on_result(i, done)

    run_each(model, range(len(prompts)), lambda i: model.complete(prompts[i], **kwargs), collect, concurrency=limit)
    return [r for r in results if r is not None]


def run_each(
    model: Model,
    items: Iterable[T],
    call: Callable[[T], Completion],
    on_done: Callable[[T, Completion], None],
    *,
    concurrency: int | None = None,
) -> None:
    """Run ``call(item)`` for every item and hand each result to ``on_done`` in the calling thread.

    In-process models run in order (they share one llama.cpp context); remote models run up to
    ``concurrency`` (default ``model.concurrency``) calls at once and report in completion order. Callers
    that persist rows one by one (the probe, the benchmark) need no lock. The first error is raised and
    queued calls are dropped.
    """
    todo = list(items)
    limit = getattr(model, "concurrency", 1) if concurrency is None else concurrency
    if not getattr(model, "remote", False) or limit <= 1 or len(todo) <= 1:
        for item in todo:
            on_done(item, call(item))
        return
    pool = ThreadPoolExecutor(max_workers=min(limit, len(todo)), thread_name_prefix="litm-model")
    try:
        futures = {pool.submit(call, item): item for item in todo}
        for future in as_completed(futures):
            on_done(futures[future], future.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class Timer:
    """Wall-clock latency of a block, in seconds (``perf_counter``)."""

    def __init__(self) -> None:
        self.start = 0.0
        self.elapsed = 0.0

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self.start


def __getattr__(name: str) -> Any:
    # ``Prompt`` was renamed ``PromptInput`` (it clashed with the built prompt, ``litm.Prompt``).
    if name == "Prompt":
        import warnings

        warnings.warn(
            "litm.models.base.Prompt is now PromptInput (litm.Prompt is the built prompt)",
            DeprecationWarning,
            stacklevel=2,
        )
        return PromptInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
