"""What one gateway worker holds for its life: the spend cap, the key store, each model's tokenizer and the
provider secrets, all built and checked once, before the first request.

Building it is the start-up check: an unknown price, a tokenizer that cannot load or a missing provider
secret refuses to start (:class:`~litm.errors.GatewayConfigError`) instead of refusing every request later.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from litm.budget import TokenGate
from litm.budget._limits import max_input_tokens_from
from litm.errors import GatewayConfigError, LitmError, SpendRequestError
from litm.models.tokenizers import Tokenizer
from litm.models.tokenizers._estimate import EstimateTokenizer
from litm.serve._config import GatewayConfig, ModelRoute
from litm.serve._keystore import AnyKeyStore, open_key_store
from litm.spend import Ledger, SpendCap, SQLiteLedger, open_ledger
from litm.spend._ledger import REDIS_SCHEMES
from litm.tokens import get_tokenizer

__all__ = ["INLINE_LOCK_WAIT_S", "Runtime", "build_runtime", "input_limit", "open_ledger_of", "tokenizer_for"]

#: The longest the event loop waits for a SQLite write lock another connection holds (the other worker's
#: transactions take about 0.1 ms); past it the reservation or settlement waits in a worker thread.
INLINE_LOCK_WAIT_S = 0.005


@dataclass
class Runtime:
    """One worker's state. ``secrets`` maps an upstream name to its provider key (never logged)."""

    config: GatewayConfig
    cap: SpendCap
    keys: AnyKeyStore
    tokenizers: dict[str, Tokenizer]
    secrets: dict[str, str]
    admin_key: str = ""
    #: The most prompt tokens per model (0: no limit): ``max_input_tokens``, or a probe profile's measure.
    max_input: dict[str, int] = field(default_factory=dict)
    #: The token gate of each (model, on_exceed), made at its first request and shared by every thread (a gate
    #: keeps no state between calls).
    gates: dict[tuple[str, str], TokenGate] = field(default_factory=dict)

    @property
    def inline_ledger(self) -> bool:
        """Whether the ledger's work runs on the event loop rather than in a worker thread: only for a SQLite
        file without an fsync per commit (``synchronous`` ``NORMAL`` or ``OFF``). Its reserve or settle is a
        local write of about 0.1 ms, less than the two thread switches of a hop; an fsync (``FULL``) or a
        network round trip (Redis) would hold up every other request of the worker while it waits. Inline
        work waits at most :data:`INLINE_LOCK_WAIT_S` for a lock another process holds (:meth:`on_loop`)."""
        ledger = self.config.ledger
        return "://" not in ledger.url and ledger.synchronous.upper() in ("NORMAL", "OFF")

    def on_loop(self) -> contextlib.AbstractContextManager[None]:
        """The ledger's short lock wait for work on the event loop: a lock held longer (another process's
        long transaction) raises :class:`~litm.errors.LedgerBusyError`, and the work moves to a thread."""
        ledger = self.cap.ledger
        if isinstance(ledger, SQLiteLedger):
            return ledger.lock_wait(INLINE_LOCK_WAIT_S)
        return contextlib.nullcontext()

    @property
    def async_ledger(self) -> bool:
        """Whether the ledger has a native async client (Redis, through ``redis.asyncio``), so a request's
        reservation and settlement need no worker thread."""
        return self.config.ledger.url.startswith(REDIS_SCHEMES)

    def __repr__(self) -> str:  # the default would print the provider secrets
        return f"Runtime(models={sorted(self.tokenizers)}, ledger={self.config.ledger.url!r})"

    def close(self) -> None:
        self.keys.close()
        self.cap.close()


def tokenizer_for(config: GatewayConfig, route: ModelRoute) -> Tokenizer:
    """The tokenizer a route counts with: its ``tokenizer`` spec, else the model's own (OpenAI), the
    Anthropic estimate (Claude's tokenizer is not published; the gateway never sends a prompt to count it),
    or the script-aware estimate with its margin."""
    kind = config.upstreams[route.upstream].kind
    spec = route.tokenizer or {"openai": f"openai:{route.sent_name}",
                               "anthropic": f"anthropic:{route.sent_name}"}.get(kind, "")  # fmt: skip
    if not spec:
        return EstimateTokenizer()
    try:
        if spec.startswith("anthropic:"):
            return get_tokenizer(spec, count_with_api=False)
        return get_tokenizer(spec)
    except (LitmError, ImportError) as exc:
        raise GatewayConfigError(f"models.{route.name}: cannot load tokenizer {spec!r} ({exc})") from None


def input_limit(route: ModelRoute) -> int:
    """A route's prompt limit: its probe profile's measured length (capped by ``max_input_tokens``), else
    ``max_input_tokens`` (0: none)."""
    if not route.profile:
        return route.max_input_tokens
    try:
        return max_input_tokens_from(route.profile, cap=route.max_input_tokens or None)
    except LitmError as exc:
        raise GatewayConfigError(f"models.{route.name}.profile: {exc}") from None


def open_ledger_of(config: GatewayConfig) -> Ledger:
    """The configured ledger: Redis by URL, or the SQLite file with its ``synchronous`` setting."""
    options = config.ledger
    if "://" in options.url:  # a redis:// (rediss://, unix://) URL, or a mistyped one that open_ledger refuses
        if options.url.startswith(REDIS_SCHEMES):
            # The class's own module: litm.spend hands RedisLedger out lazily (the optional redis client), untyped.
            from litm.spend._ledger.redis import RedisLedger

            return RedisLedger(options.url, namespace=options.namespace, socket_timeout_s=options.socket_timeout_s)
        return open_ledger(options.url, namespace=options.namespace)
    try:
        return SQLiteLedger(options.url, synchronous=options.synchronous)
    except SpendRequestError as exc:
        raise GatewayConfigError(f"ledger: {exc}") from None


def build_runtime(config: GatewayConfig) -> Runtime:
    """Open the ledger and the key store, load every tokenizer, check every price and read the secrets."""
    cap = SpendCap(open_ledger_of(config), prices=config.prices() or None, lease_s=config.ledger.lease_s)
    try:
        for route in config.models.values():
            provider = config.upstreams[route.upstream].provider or None
            try:
                cap.rates(route.sent_name, provider)
            except LitmError as exc:
                where = f"models.{route.name}"
                raise GatewayConfigError(f"{where}: no price ({exc}); set {where}.price") from None
        tokenizers = {name: tokenizer_for(config, route) for name, route in config.models.items()}
        secrets = {name: up.api_key() for name, up in config.upstreams.items()}
        admin = config.server.admin_key()
        limits = {name: input_limit(route) for name, route in config.models.items()}
        keys = open_key_store(config.keys.store, namespace=config.keys.namespace,
                              socket_timeout_s=config.keys.socket_timeout_s)  # fmt: skip
    except BaseException:
        cap.close()
        raise
    return Runtime(config, cap, keys, tokenizers, secrets, admin, limits)
