"""``charged(model, cap)``: a litm model whose every ``complete`` is reserved on a spend cap first.

The returned :class:`ChargedModel` is a :class:`~litm.models.Model` like any other (``complete``,
``count_tokens``, :func:`~litm.models.complete_many`'s parallel calls, the probe and the benchmark take
it). Before each call it counts the prompt with the model's own ``count_tokens`` (exact when the model's
tokenizer is, otherwise with that tokenizer's stated margin,
:func:`~litm.models.tokenizers.safety_margin`), reserves the worst case for the call's ``max_tokens``
(which :meth:`Model.complete` always sends: the backend can never return more) and refuses with
:class:`~litm.errors.SpendBudgetExceeded` before anything is sent when it does not fit. After the call it
settles the :class:`~litm.models.Completion` (``input_tokens`` with cache reads and writes,
``cached_tokens``, ``cache_write_tokens``). A call that fails is refunded or charged in full by the rule of
:mod:`litm.spend._outcome`.

Rules that keep the cap exact:

* a local model (llama.cpp in-process, or any model the price table cannot know) is priced by the
  ``price=`` the caller gives; without one it is refused (:class:`~litm.errors.PriceUnknownError`), never
  priced at $0;
* a remote model must not retry inside one call (``max_retries=0``): a retry after a timeout may be billed
  twice under one hold. Retry at the caller (each retry is its own reservation), or guard the SDK client
  with ``litm.budget.guard(client, budget=cap)``, which reserves every retry on its own.

>>> import os, tempfile
>>> from litm.models import load_model
>>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["run:1"])
>>> cap.set_limit("run:1", "0.01")
>>> model = charged(load_model("openai:gpt-4o-mini", max_retries=0), cap)
>>> model.name, model.remote
('gpt-4o-mini', True)
>>> charged(load_model("openai:gpt-4o-mini"), cap)      # retries 3 times inside one call by default
Traceback (most recent call last):
...
litm.errors.InvalidOptionError: openai:gpt-4o-mini retries up to 3 times inside one call, ...
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence

from litm.errors import InvalidOptionError, PriceUnknownError
from litm.models import Completion, GenerationRequest, Model
from litm.models._base import NativePrompt, PromptLike
from litm.models.tokenizers import TokenCount, Tokenizer, safety_margin
from litm.spend._budget import SpendCap
from litm.spend._outcome import may_be_billed
from litm.spend._reservation import Reservation

__all__ = ["ChargedModel", "charged"]

#: Providers a spec scheme bills through; any other scheme needs ``provider=`` or ``price=``.
_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}


class ChargedModel(Model):
    """``model`` with a spend cap in front of every call (see :func:`charged`)."""

    def __init__(self, model: Model, cap: SpendCap, *, provider: str | None, scopes: Sequence[str] | None,
                 key: Callable[[GenerationRequest], str] | None) -> None:  # fmt: skip
        self.inner = model
        self.cap = cap
        self.provider = provider
        self.scopes = tuple(scopes) if scopes else None
        self._key = key
        self.name, self.spec = model.name, model.spec
        self.remote, self.concurrency = model.remote, model.concurrency

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    @property
    def tokenizer(self) -> Tokenizer:
        return self.inner.tokenizer

    @property
    def supports_chat(self) -> bool:
        return self.inner.supports_chat

    def render(self, prompt: PromptLike) -> NativePrompt:
        return self.inner.render(prompt)

    def count(self, prompt: PromptLike) -> TokenCount:
        """``prompt``'s tokens as the model counts them, with the tokenizer's margin when not exact."""
        tok = self.inner.tokenizer
        exact = bool(tok.exact)
        return TokenCount(self.inner.count_tokens(prompt), exact, margin=0.0 if exact else safety_margin(tok))

    def reserve(self, request: GenerationRequest) -> Reservation:
        """The hold for one request (raises before anything is sent when it does not fit)."""
        key = self._key(request) if self._key else f"{self.name}:{uuid.uuid4().hex}"
        return self.cap.reserve(self.name, provider=self.provider, input_tokens=self.count(request.prompt),
                                max_tokens=request.max_tokens, key=key, scopes=self.scopes)  # fmt: skip

    def _generate(self, request: GenerationRequest) -> Completion:
        r = self.reserve(request)
        try:
            out = self.inner.complete(request.prompt, max_tokens=request.max_tokens, stop=list(request.stop),
                                      temperature=request.temperature, seed=request.seed)  # fmt: skip
        except BaseException as exc:
            if may_be_billed(exc):
                r.charge_in_full(f"failed after it may have reached {self.spec} ({type(exc).__name__}: {exc})")
            else:
                r.refund()
            raise
        r.settle(out)
        return out

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"ChargedModel({self.inner!r})"


def charged(
    model: Model,
    cap: SpendCap,
    *,
    price: Mapping[str, object] | None = None,
    provider: str | None = None,
    scopes: Sequence[str] | None = None,
    key: Callable[[GenerationRequest], str] | None = None,
) -> ChargedModel:
    """``model`` charged to ``cap``: every ``complete`` reserves its worst case first and settles after.

    ``price``: the model's rates in USD per million tokens (``{"input": "0.10", "output": "0.40"}``, the
    format of ``SpendCap(prices=...)``), required for a local model and for a server the price table does
    not know. ``provider``: the price table's provider (default: the spec's, ``openai`` or ``anthropic``).
    ``scopes``: the chain (default: the cap's). ``key``: a reservation key per request (default: generated).

    Raises :class:`~litm.errors.PriceUnknownError` now, not at the first call, when the model cannot be
    priced, and :class:`~litm.errors.InvalidOptionError` for a remote model that retries inside one call.
    """
    if not isinstance(model, Model):
        raise InvalidOptionError(f"charged() takes a litm Model, got {type(model).__name__}")
    retries = getattr(model, "max_retries", 0)
    if model.remote and retries:
        raise InvalidOptionError(
            f"{model.spec} retries up to {retries} times inside one call, and a retry after a timeout may be "
            "billed twice under one hold: load it with max_retries=0 (each retry of yours is its own "
            "reservation), or guard the SDK client with litm.budget.guard(client, budget=cap)"
        )
    scheme = model.spec.split(":", 1)[0]
    provider = provider or _PROVIDERS.get(scheme)
    if price is not None:
        cap = cap.with_prices({model.name: price})
    elif not model.remote or provider is None:
        what = "a local model" if not model.remote else "a server the price table cannot know"
        raise PriceUnknownError(
            f"{model.spec} is {what}: pass price={{'input': ..., 'output': ...}} (USD per million tokens) "
            "to charged(); a model is never priced at $0"
        )
    cap.rates(model.name, provider)  # an unknown model is refused here, before any call
    return ChargedModel(model, cap, provider=provider, scopes=scopes, key=key)
