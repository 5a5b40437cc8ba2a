"""Virtual keys in Redis, for gateways on several machines that share one key store (``keys.store =
"redis://..."``), as they share one budget on a Redis ledger.

The same keys, records and rules as :class:`~litm.serve._keys.KeyStore`: only ``sha256(id:secret)`` is stored,
compared in constant time; reading never writes. One hash per key (``litm:keys:{NAMESPACE}:key:<id>``) and a
sorted set of ids by creation time; rotate and revoke are one Lua script each, so a revoked key can never be
rotated back to life. A server that does not answer is :class:`~litm.errors.VirtualKeyError` (the gateway
answers 503, fail closed). Requests read their key with one ``HGETALL``, through ``redis.asyncio`` in the
gateway (:meth:`RedisKeyStore.aauthenticate`, on a raw connection), so a slow server never holds up a
worker's event loop.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from litm.errors import MissingDependencyError, VirtualKeyError
from litm.serve._keys import DUMMY_DIGEST, KEY_PREFIX, KEY_RE, VirtualKey, check_key_options, digest
from litm.spend._ledger.redis_conn import AsyncConnections  # not exported by litm.spend

T = TypeVar("T")

__all__ = ["RedisKeyStore"]

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# Set a key's hash only while it exists and is not revoked: rotate never revives a revoked key.
_ROTATE = """
if redis.call('HEXISTS', KEYS[1], 'hash') == 1 and redis.call('HGET', KEYS[1], 'revoked') == '' then
  redis.call('HSET', KEYS[1], 'hash', ARGV[1]) return 1 end
return 0
"""
_REVOKE = """
if redis.call('HEXISTS', KEYS[1], 'hash') == 1 and redis.call('HGET', KEYS[1], 'revoked') == '' then
  redis.call('HSET', KEYS[1], 'revoked', ARGV[1]) end
return redis.call('HEXISTS', KEYS[1], 'hash')
"""


class RedisKeyStore:
    """The virtual keys of one namespace on a Redis server (``redis://``, ``rediss://`` or ``unix://`` URL)."""

    def __init__(self, url: str, *, namespace: str = "default", socket_timeout_s: float = 2.0) -> None:
        try:
            import redis
        except ImportError:
            raise MissingDependencyError(
                "a Redis key store needs the redis client: pip install 'litm[spend-redis]'"
            ) from None
        if not _NAMESPACE_RE.match(namespace):
            raise VirtualKeyError(f"key store namespace {namespace!r}: use 1-64 of A-Z a-z 0-9 _ . : -")
        self.url, self.namespace = url, namespace
        self._prefix = f"litm:keys:{{{namespace}}}:"
        # One quick retry (a dropped connection), as the ledger's: a store that does not answer is a 503 after
        # about twice the timeout, not after redis-py's default of three retries with seconds of backoff.
        self._timeout_s = socket_timeout_s
        retry = redis.retry.Retry(redis.backoff.ExponentialBackoff(cap=0.1, base=0.01), 1)
        try:
            self._client: Any = redis.Redis.from_url(url, decode_responses=True, socket_timeout=socket_timeout_s,
                                                     socket_connect_timeout=socket_timeout_s, retry=retry)
        except ValueError as exc:
            raise VirtualKeyError(f"key store URL cannot be used: {exc}") from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        # The event loop's own client (redis.asyncio connections belong to the loop that opened them).
        self._aclient: Any = None
        self._acalls: AsyncConnections | None = None
        self._aloop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"RedisKeyStore(namespace={self.namespace!r})"  # never the URL: it may carry a password

    def _key(self, key_id: str) -> str:
        return f"{self._prefix}key:{key_id}"

    def _call(self, what: str, fn: Callable[..., T], *args: object) -> T:
        try:
            return fn(*args)
        except self._errors as exc:
            raise VirtualKeyError(f"key store (Redis, namespace {self.namespace!r}) cannot {what}: "
                                  f"{type(exc).__name__}") from None  # fmt: skip

    @staticmethod
    def _record(key_id: str, fields: dict[str, str]) -> VirtualKey:
        default, revoked = fields.get("default_max_tokens", ""), fields.get("revoked", "")
        scopes, models = tuple(json.loads(fields["scopes"])), tuple(json.loads(fields["models"]))
        return VirtualKey(key_id, fields["name"], scopes, models, int(default) if default else None,
                          float(fields["created"]), float(revoked) if revoked else None,
                          fields.get("compact") == "1")  # fmt: skip

    # -- writing -----------------------------------------------------------------------------------------

    def create(self, *, name: str, scopes: Sequence[str] = (), models: Sequence[str] = ("*",),
               default_max_tokens: int | None = None, compact: bool = False) -> tuple[str, VirtualKey]:  # fmt: skip
        """A new key: returns ``(plain key, record)``; the plain key is not stored."""
        kid, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        check_key_options(name, scopes, models, default_max_tokens, compact, kid)
        key = VirtualKey(
            kid, name.strip(), tuple(scopes), tuple(models), default_max_tokens, time.time(), None, compact
        )
        fields = {"hash": digest(kid, secret), "name": key.name, "scopes": json.dumps(list(key.scopes)),
                  "models": json.dumps(list(key.models)), "default_max_tokens": str(default_max_tokens or ""),
                  "created": repr(key.created), "revoked": "", "compact": "1" if compact else "0"}  # fmt: skip

        def write() -> None:
            pipe = self._client.pipeline(transaction=True)
            pipe.hset(self._key(kid), mapping=fields)
            pipe.zadd(f"{self._prefix}ids", {kid: key.created})
            pipe.execute()

        self._call("be written", write)
        return f"{KEY_PREFIX}{kid}-{secret}", key

    def rotate(self, key_id: str) -> tuple[str, VirtualKey]:
        """A new secret for key ``key_id`` (same id, scopes and budget); the old secret stops working."""
        secret = secrets.token_urlsafe(32)
        done = self._call("be written", self._client.eval, _ROTATE, 1, self._key(key_id), digest(key_id, secret))
        if not done:
            raise VirtualKeyError(f"no active key with id {key_id!r}")
        return f"{KEY_PREFIX}{key_id}-{secret}", self.get(key_id)

    def revoke(self, key_id: str) -> VirtualKey:
        """Revoke key ``key_id``: every later request with it is refused (401)."""
        if not self._call("be written", self._client.eval, _REVOKE, 1, self._key(key_id), repr(time.time())):
            raise VirtualKeyError(f"no key with id {key_id!r}")
        return self.get(key_id)

    # -- reading -----------------------------------------------------------------------------------------

    def get(self, key_id: str) -> VirtualKey:
        """The record of key ``key_id``."""
        fields = self._call("be read", self._client.hgetall, self._key(key_id))
        if not fields:
            raise VirtualKeyError(f"no key with id {key_id!r}")
        return self._record(key_id, fields)

    def list(self) -> list[VirtualKey]:
        """Every key, oldest first (revoked ones too)."""
        ids = self._call("be read", self._client.zrange, f"{self._prefix}ids", 0, -1)
        return [self.get(kid) for kid in ids]

    def authenticate(self, presented: str | None) -> VirtualKey | None:
        """The active key ``presented`` is, or None (malformed, unknown, wrong secret, revoked)."""
        match = KEY_RE.match(presented or "")
        if match is None:
            hmac.compare_digest(DUMMY_DIGEST, DUMMY_DIGEST)
            return None
        kid, secret = match.groups()
        fields = self._call("be read", self._client.hgetall, self._key(kid))
        stored = fields.get("hash", DUMMY_DIGEST) if fields else DUMMY_DIGEST
        if not hmac.compare_digest(stored, digest(kid, secret)) or not fields:
            return None
        key = self._record(kid, fields)
        return None if key.revoked is not None else key

    async def aauthenticate(self, presented: str | None) -> VirtualKey | None:
        """:meth:`authenticate` for an event loop: the lookup goes through ``redis.asyncio``, so the loop
        keeps serving other requests while the server is slow (or until the socket timeout when it is down)."""
        match = KEY_RE.match(presented or "")
        if match is None:
            hmac.compare_digest(DUMMY_DIGEST, DUMMY_DIGEST)
            return None
        kid, secret = match.groups()
        try:
            reply, _ = await self._async().call("HGETALL", self._key(kid))
        except self._errors as exc:
            raise VirtualKeyError(f"key store (Redis, namespace {self.namespace!r}) cannot be read: "
                                  f"{type(exc).__name__}") from None  # fmt: skip
        # The raw reply: a flat [field, value, ...] list (RESP2), or a map (RESP3).
        fields = reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2], strict=True))
        stored = fields.get("hash", DUMMY_DIGEST) if fields else DUMMY_DIGEST
        if not hmac.compare_digest(stored, digest(kid, secret)) or not fields:
            return None
        key = self._record(kid, fields)
        return None if key.revoked is not None else key

    def _async(self) -> AsyncConnections:
        loop, calls = asyncio.get_running_loop(), self._acalls
        if calls is None or self._aloop is not loop:
            import redis.asyncio

            # Only its connection pool is used: AsyncConnections sends the command and resends it once itself.
            self._aclient = redis.asyncio.Redis.from_url(self.url, decode_responses=True,
                                                         socket_timeout=self._timeout_s,
                                                         socket_connect_timeout=self._timeout_s)
            self._acalls = calls = AsyncConnections(self._aclient)
            self._aloop = loop
        return calls

    async def aclose(self) -> None:
        """Close the event loop's client (the gateway's shutdown); :meth:`close` closes the other."""
        client, calls = self._aclient, self._acalls
        self._aclient, self._acalls, self._aloop = None, None, None
        if client is not None and calls is not None:
            await calls.aclose()
            await client.aclose()

    def close(self) -> None:
        self._client.close()
