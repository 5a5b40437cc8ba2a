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

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, TypeVar, Unpack

from litm.errors import InvalidOptionError, PromptError
from litm.prompt import Prompt
from litm.prompt._messages import Message, check_messages, is_messages

T = TypeVar("T")

if TYPE_CHECKING:
    from litm.models.tokenizers._base import Tokenizer

#: A plain completion prompt, or chat messages.
PromptInput: TypeAlias = str | Sequence[Message]
#: What :meth:`Model.complete` and :meth:`Model.count_tokens` accept: a string, chat messages, or a built
#: :class:`litm.Prompt`, which each model renders in its own native form.
PromptLike: TypeAlias = str | Sequence[Message] | Prompt
#: A prompt in a model's native form: a completion string or validated chat messages.
NativePrompt: TypeAlias = str | list[dict[str, str]]


@dataclass(frozen=True)
class Completion:
    """One model answer with its measured cost.

    ``input_tokens`` is every prompt token the backend billed or evaluated, cache reads and writes
    included (llama.cpp's evaluation, OpenAI's ``prompt_tokens``, Anthropic's ``input_tokens`` plus its
    ``cache_read_input_tokens`` and ``cache_creation_input_tokens``, which Anthropic reports apart).
    ``cached_tokens`` is how many of them were read from a cache instead of being evaluated (llama.cpp
    prefix reuse, OpenAI/Anthropic prompt caching; 0 when cold) and ``cache_write_tokens`` how many were
    written to one (Anthropic's cache creation; 0 elsewhere). ``output_tokens`` comes from the backend too.
    ``finish_reason`` is normalised to ``"stop"`` (natural end or stop sequence) or ``"length"``
    (``max_tokens`` reached); other backend reasons pass through unchanged. ``sampled`` is True when the
    answer was drawn by sampling rather than greedy decoding: a ``temperature`` above 0 was asked for, or
    the backend takes no temperature (Anthropic's current API; OpenAI's reasoning models), so the same
    request can answer differently; a results row should record it.

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
    cache_write_tokens: int = 0
    sampled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


@dataclass(frozen=True)
class GenerationRequest:
    """One validated request in the model's native form: what :meth:`Model._generate` receives.

    ``prompt`` is a completion string or checked chat messages (see :meth:`Model.render`); ``stop``
    holds the non-empty stop sequences; ``cache_at`` the caller's prompt-cache breakpoints (character
    offsets into a string prompt, increasing), which a backend with explicit prompt caching honours and
    every other backend ignores.
    """

    prompt: NativePrompt
    max_tokens: int
    stop: tuple[str, ...] = ()
    temperature: float = 0.0
    seed: int = 0
    cache_at: tuple[int, ...] = ()

    @property
    def greedy(self) -> bool:
        """True when greedy decoding was asked for (``temperature == 0``)."""
        return self.temperature == 0


def check_prompt(prompt: PromptInput) -> str | list[dict[str, str]]:
    """A validated prompt: the string itself, or checked messages (see :func:`check_messages`)."""
    if isinstance(prompt, str):
        return prompt
    if is_messages(prompt):
        return check_messages(prompt)
    raise PromptError(f"a prompt is a string, a list of messages or a litm.Prompt, not {type(prompt).__name__}")


def check_max_tokens(max_tokens: int) -> int:
    """``max_tokens`` as an int >= 1, else :class:`~litm.errors.InvalidOptionError` (a ``ValueError``)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidOptionError(f"max_tokens must be an integer >= 1, got {max_tokens!r}")
    return max_tokens


def _check_sampling(stop: Sequence[str] | str | None, temperature: float, seed: int) -> tuple[str, ...]:
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not math.isfinite(temperature):
        raise InvalidOptionError(f"temperature must be a number >= 0, got {temperature!r}")
    if temperature < 0:
        raise InvalidOptionError(f"temperature must be a number >= 0, got {temperature!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidOptionError(f"seed must be an integer, got {seed!r}")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    for s in stops:
        if not isinstance(s, str):
            raise InvalidOptionError(f"stop sequences must be strings, got {s!r}")
    return tuple(s for s in stops if s)


def _check_cache_at(cache_at: Sequence[int], prompt: PromptLike) -> tuple[int, ...]:
    """Cache breakpoints: increasing character offsets strictly inside a string prompt."""
    points = tuple(cache_at)
    if not points:
        return ()
    if not isinstance(prompt, str):
        raise InvalidOptionError("cache_at takes offsets into a string prompt; this prompt is not a string")
    for p in points:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 < p < len(prompt):
            raise InvalidOptionError(f"cache_at offsets must be integers in [1, {len(prompt) - 1}], got {p!r}")
    if list(points) != sorted(set(points)):
        raise InvalidOptionError(f"cache_at offsets must be increasing, got {list(points)}")
    return points


class Model(ABC):
    """A language model behind one spec string (``local``, ``openai:gpt-4o-mini``, ...).

    :meth:`complete` validates its arguments, renders the prompt in the model's native form
    (:meth:`render`) and hands one :class:`GenerationRequest` to the backend's :meth:`_generate`.
    Subclasses implement :meth:`_generate`, :attr:`context_window` and :attr:`tokenizer`, and override
    :meth:`_render_prompt` / :meth:`_native` where their native form differs. Generation is greedy by
    default (``temperature=0``) so that measurements repeat (see :attr:`Completion.sampled`). ``remote``
    backends may be called from several threads at once; :func:`complete_many` runs up to
    ``concurrency`` requests in parallel for them and one at a time for in-process models.

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

    def complete(
        self,
        prompt: PromptLike,
        *,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        cache_at: Sequence[int] = (),
    ) -> Completion:
        """Answer ``prompt`` (a completion string, chat messages or a built :class:`litm.Prompt`) with at
        most ``max_tokens`` tokens; greedy when ``temperature`` is 0.

        ``cache_at`` (a string prompt only) asks a provider with explicit prompt caching (Anthropic) to
        cache the prompt's prefixes ending at these character offsets; other backends ignore it.
        Raises :class:`~litm.errors.InvalidOptionError` for a bad ``max_tokens``, ``stop``,
        ``temperature``, ``seed`` or ``cache_at`` and :class:`~litm.errors.PromptError` for a prompt this
        model cannot take.
        """
        limit = check_max_tokens(max_tokens)
        stops = _check_sampling(stop, temperature, seed)
        points = _check_cache_at(cache_at, prompt)
        request = GenerationRequest(self.render(prompt), limit, stops, float(temperature), seed, points)
        return self._generate(request)

    @abstractmethod
    def _generate(self, request: GenerationRequest) -> Completion:
        """Run one validated request (the backend's part of :meth:`complete`)."""

    def render(self, prompt: PromptLike) -> NativePrompt:
        """``prompt`` in this model's native form: what :meth:`complete` sends and :meth:`count_tokens` counts.

        A built :class:`litm.Prompt` goes through :meth:`_render_prompt` (its text for a base model, its
        messages for a chat model); a string or messages are validated and passed to :meth:`_native`.
        """
        if isinstance(prompt, Prompt):
            return self._native(self._render_prompt(prompt))
        return self._native(check_prompt(prompt))

    def _render_prompt(self, prompt: Prompt) -> NativePrompt:
        """A built prompt for this model: OpenAI-style messages for a chat model, else the plain text."""
        if not self.supports_chat:
            return prompt.text
        return check_messages(_as_messages(prompt.messages("openai")))

    def _native(self, prompt: NativePrompt) -> NativePrompt:
        """A validated string or message list in the form this backend sends (identity by default)."""
        return prompt

    def count_tokens(self, prompt: PromptLike) -> int:
        """Tokens ``prompt`` occupies in this model's context as :meth:`complete` would send it, chat-format
        overhead included."""
        native = self.render(prompt)
        if isinstance(native, str):
            return self.tokenizer.count(native)
        return self.tokenizer.count_messages(native)

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


def _as_messages(rendered: object) -> list[dict[str, str]]:
    if not isinstance(rendered, list):
        raise PromptError(f"a prompt's chat messages must be a list, got {type(rendered).__name__}")
    return rendered


class CompleteOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`Model.complete`, as :func:`complete_many` passes them on."""

    max_tokens: int
    stop: Sequence[str] | None
    temperature: float
    seed: int
    cache_at: Sequence[int]


def complete_many(
    model: Model,
    prompts: Sequence[PromptLike],
    *,
    concurrency: int | None = None,
    on_result: Callable[[int, Completion], None] | None = None,
    **kwargs: Unpack[CompleteOptions],
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
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidOptionError(f"concurrency must be an integer >= 1, got {limit!r}")
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
