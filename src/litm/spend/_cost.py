"""What a call may cost before it is sent (the worst case), and what it did cost (its reported usage).

Worst case (:func:`worst_case`): every prompt token at the highest input-side rate it could be billed
at (plain input, or a cache write where the provider charges more for writing the cache; no cache-read
discount), at the long-context tier the prompt falls in, plus ``max_tokens`` output tokens at that tier's
output rate. The prompt count is either a :class:`~litm.models.tokenizers.TokenCount` (what the token
gate and ``count_request`` return), whose own bound :attr:`~litm.models.tokenizers.TokenCount.upper` is
used as it is (no second margin), or a bare int with ``input_exact``: an int not stated exact is raised by
:data:`APPROX_MARGIN`, which IS the tokenizer layer's margin for an approximate count that states none
(:data:`~litm.models.tokenizers._base.UNSTATED_MARGIN`, 25 %): one policy for the token gate and the cap.
The total is rounded up to whole micro-dollars. The guarded call must send ``max_tokens``, so the provider
cannot bill more output.

Actual cost (:func:`price_usage`): the provider's usage, normalised by :func:`usage_from` (OpenAI Chat
Completions and Responses, Anthropic Messages, plain dicts, litm ``Completion``):

* OpenAI: ``prompt_tokens`` / ``input_tokens`` INCLUDE ``*_tokens_details.cached_tokens`` (and
  ``cache_write_tokens`` where reported).
* Anthropic: ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.

>>> from litm.spend._prices import PriceTable
>>> rates = PriceTable.load().rates("gpt-4o-mini", provider="openai")
>>> worst_case(rates, input_tokens=1000, input_exact=True, max_tokens=500).micros   # 150 + 300 µ$
450
>>> price_usage(rates, usage_from({"prompt_tokens": 1000, "completion_tokens": 20,
...     "prompt_tokens_details": {"cached_tokens": 800}}))                          # 30 + 60 + 12 µ$
102
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from litm.errors import PriceUnknownError, SpendRequestError
from litm.models import Completion
from litm.models.tokenizers import TokenCount
from litm.models.tokenizers._base import UNSTATED_MARGIN
from litm.spend._money import micros_ceil
from litm.spend._prices import ModelRates, PriceTable, default_table

__all__ = [
    "APPROX_MARGIN",
    "Estimate",
    "Usage",
    "check_margin",
    "input_bound",
    "price_completion",
    "price_usage",
    "usage_from",
    "worst_case",
]

#: The margin (a fraction) added to a bare-int prompt count that is not stated exact: the tokenizer
#: layer's own margin for an approximate count that states none, so the cap and the token gate bound the
#: same prompt alike.
APPROX_MARGIN = UNSTATED_MARGIN


@dataclass(frozen=True)
class Usage:
    """Token usage of one call. ``input_tokens`` counts every prompt token, cached or not; the cache
    fields say how many of them were read from, or written to, the provider's prompt cache."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                     "cache_write_1h_tokens"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SpendRequestError(f"usage {name} must be an int >= 0, got {value!r}")
        cached = self.cache_read_tokens + self.cache_write_tokens + self.cache_write_1h_tokens
        if cached > self.input_tokens:
            raise SpendRequestError(f"usage has {cached} cache tokens but only {self.input_tokens} input tokens")


@dataclass(frozen=True)
class Estimate:
    """A worst case: ``micros`` to hold, with the numbers it was computed from."""

    micros: int
    input_tokens: int
    max_tokens: int
    tier_start: int | None
    margin: float


def _tokens(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpendRequestError(f"{what} must be an int >= 0, got {value!r}")
    return value


def check_margin(margin: object) -> float:
    """``margin`` as a float fraction in [0, 10) (bools, strings and NaN refused).

    >>> check_margin(0.25)
    0.25
    """
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < 10:
        raise SpendRequestError(f"margin must be a fraction in [0, 10), such as 0.25, got {margin!r}")
    return float(margin)


def input_bound(input_tokens: int | TokenCount, *, input_exact: bool = False,
                margin: float = APPROX_MARGIN) -> tuple[int, float]:  # fmt: skip
    """The most prompt tokens a count can stand for, and the margin that bound carries.

    A :class:`~litm.models.tokenizers.TokenCount` brings its own bound (``upper``; an approximate count
    that states no margin gets :data:`APPROX_MARGIN`, as the token gate does) and ``input_exact`` is not
    read. A bare int is exact only when ``input_exact`` says so; otherwise ``margin`` is added, rounded as
    the tokenizer layer rounds.

    >>> input_bound(TokenCount(1000, False, margin=0.1)), input_bound(1000), input_bound(1000, input_exact=True)
    ((1100, 0.1), (1250, 0.25), (1000, 0.0))
    """
    if not isinstance(input_exact, bool):  # "no" is truthy: a string must not count as exact
        raise SpendRequestError(f"input_exact must be True or False, got {input_exact!r}")
    if isinstance(input_tokens, TokenCount):
        if input_tokens.exact or input_tokens.margin:
            return input_tokens.upper, input_tokens.margin
        input_tokens, input_exact, margin = input_tokens.tokens, False, APPROX_MARGIN
    counted = _tokens(input_tokens, "input_tokens")
    if input_exact:
        return counted, 0.0
    stated = check_margin(margin)
    return TokenCount(counted, False, margin=stated).upper, stated


def worst_case(
    rates: ModelRates,
    *,
    input_tokens: int | TokenCount,
    input_exact: bool = False,
    max_tokens: int | None,
    cache_writes: bool = True,
    margin: float = APPROX_MARGIN,
) -> Estimate:
    """The most a call with this prompt and ``max_tokens`` can be billed, in micro-dollars (rounded up).

    ``input_tokens`` is a :class:`~litm.models.tokenizers.TokenCount` (its bound is used as is) or an int
    (raised by ``margin`` unless ``input_exact``); see :func:`input_bound`. ``cache_writes=False`` says the
    request asks for no prompt caching, so cache-write rates (1.25x or 2x the input rate on Anthropic)
    need not be held.
    """
    if not isinstance(cache_writes, bool):
        raise SpendRequestError(f"cache_writes must be True or False, got {cache_writes!r}")
    if max_tokens is None:
        raise SpendRequestError("max_tokens is required: without it the provider may bill any output length")
    if _tokens(max_tokens, "max_tokens") < 1:
        raise SpendRequestError("max_tokens must be >= 1")
    charged, margin = input_bound(input_tokens, input_exact=input_exact, margin=margin)
    tier = rates.at(charged)
    tier_start = next((start for start, r in rates.tiers if r is tier), None)
    if tier.output is None:
        raise PriceUnknownError(f"no output rate for model {rates.model!r} ({rates.provider}, {rates.version})")
    candidates = [tier.input]
    if cache_writes:
        candidates += [r for r in (tier.cache_write, tier.cache_write_1h) if r is not None]
    picos = charged * max(candidates) + max_tokens * tier.output
    return Estimate(micros_ceil(picos), charged, max_tokens, tier_start, margin)


def price_usage(rates: ModelRates, usage: Usage) -> int:
    """What ``usage`` costs at ``rates``, in micro-dollars (rounded up).

    The tier is chosen by all input tokens (cached ones included). A cache rate the provider does not
    publish is charged at the input rate, which is what such providers bill.
    """
    tier = rates.at(usage.input_tokens)
    if tier.output is None and usage.output_tokens:
        raise PriceUnknownError(f"no output rate for model {rates.model!r} ({rates.provider}, {rates.version})")
    plain = usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens - usage.cache_write_1h_tokens
    picos = (
        plain * tier.input
        + usage.cache_read_tokens * (tier.input if tier.cache_read is None else tier.cache_read)
        + usage.cache_write_tokens * (tier.input if tier.cache_write is None else tier.cache_write)
        + usage.cache_write_1h_tokens * _first(tier.cache_write_1h, tier.cache_write, tier.input)
        + usage.output_tokens * (tier.output or 0)
    )
    return micros_ceil(picos)


def _first(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _get(obj: object, *path: str) -> object:
    """``obj.a.b`` or ``obj["a"]["b"]``, None when any step is missing (SDK objects and dicts alike)."""
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
    return obj


def _int(value: object, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpendRequestError(f"usage field {what} is {value!r}, not an int")
    return value


def usage_from(obj: object, *, provider: str | None = None) -> Usage:
    """Normalise a provider usage object, a response that has ``.usage``, a dict, or a litm ``Completion``.

    Anthropic's shape is recognised by its cache fields (``cache_read_input_tokens`` /
    ``cache_creation_input_tokens``) or by ``provider="anthropic"``; then ``input_tokens`` excludes cache
    tokens and they are added back. A litm :class:`~litm.models.Completion` is read as it is defined,
    whatever the backend: ``input_tokens`` includes ``cached_tokens`` (reads) and ``cache_write_tokens``.
    A Completion does not say which cache lifetime was written, so its writes are priced at the dearer
    one (Anthropic's 1 h rate): a cap may over-charge a write, never under-charge it.

    >>> usage_from({"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5})
    Usage(input_tokens=100, output_tokens=5, cache_read_tokens=90, cache_write_tokens=0, cache_write_1h_tokens=0)
    """
    if isinstance(obj, Usage):
        return obj
    if isinstance(obj, Completion):
        return Usage(obj.input_tokens, obj.output_tokens, obj.cached_tokens, 0, obj.cache_write_tokens)
    if isinstance(obj, Mapping):
        if "usage" in obj:
            obj = obj["usage"]
    elif hasattr(obj, "usage") and not any(hasattr(obj, k) for k in ("prompt_tokens", "input_tokens")):
        obj = obj.usage  # a response object: its usage block (None on a stream chunk without usage)
    if obj is None:
        raise SpendRequestError("no usage to price: the response carries no usage block")
    anthropic = (provider or "").lower() == "anthropic" or any(
        _get(obj, k) is not None for k in ("cache_read_input_tokens", "cache_creation_input_tokens")
    )
    if _get(obj, "prompt_tokens") is not None:  # OpenAI Chat Completions (and compatible servers)
        return Usage(
            _int(_get(obj, "prompt_tokens"), "prompt_tokens"),
            _int(_get(obj, "completion_tokens"), "completion_tokens"),
            cache_read_tokens=_int(_get(obj, "prompt_tokens_details", "cached_tokens"), "cached_tokens"),
            cache_write_tokens=_int(_get(obj, "prompt_tokens_details", "cache_write_tokens"), "cache_write_tokens"),
        )
    if _get(obj, "input_tokens") is None:
        raise SpendRequestError(f"cannot read token usage from {type(obj).__name__}: no prompt_tokens or input_tokens")
    output = _int(_get(obj, "output_tokens"), "output_tokens")
    if anthropic:
        read = _int(_get(obj, "cache_read_input_tokens"), "cache_read_input_tokens")
        write = _int(_get(obj, "cache_creation_input_tokens"), "cache_creation_input_tokens")
        write_1h = _int(_get(obj, "cache_creation", "ephemeral_1h_input_tokens"), "ephemeral_1h_input_tokens")
        if _get(obj, "cached_tokens") is not None and not read:  # a litm Completion from the Anthropic backend
            read = _int(_get(obj, "cached_tokens"), "cached_tokens")
        uncached = _int(_get(obj, "input_tokens"), "input_tokens")
        return Usage(uncached + read + write, output, read, write - min(write, write_1h), min(write, write_1h))
    cached = _get(obj, "input_tokens_details", "cached_tokens")  # OpenAI Responses API
    if cached is None:
        cached = _get(obj, "cached_tokens")  # a litm Completion: input_tokens includes cached_tokens
    written = _get(obj, "input_tokens_details", "cache_write_tokens")
    return Usage(_int(_get(obj, "input_tokens"), "input_tokens"), output, _int(cached, "cached_tokens"),
                 _int(written, "cache_write_tokens"))  # fmt: skip


def price_completion(completion: object, *, provider: str | None = None, prices: PriceTable | None = None,
                     on: date | None = None) -> int:  # fmt: skip
    """What a litm :class:`~litm.models.Completion` cost, in micro-dollars, priced by its ``model`` at
    ``provider`` (its ``input_tokens`` include cache reads and writes, whatever the backend).

    >>> from litm.models import Completion
    >>> price_completion(Completion("Paris", 1000, 10, 0.1, "stop", model="gpt-4o-mini"), provider="openai")
    156
    """
    model = getattr(completion, "model", "")
    if not model:
        raise PriceUnknownError("completion has no model name to price it by")
    rates = (prices or default_table()).rates(str(model), provider, on=on)
    return price_usage(rates, usage_from(completion, provider=provider))
