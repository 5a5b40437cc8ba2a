"""``RedisLedger``: a spend ledger shared by many processes and machines, one Lua script per operation.

All keys of one ledger share a ``{namespace}`` hash tag, so they live in one hash slot (one shard of a
cluster) and every script can touch the whole scope chain atomically. Scopes shared between chains must
be in the same namespace; use one namespace per tenant to spread tenants over shards.

The clock is the Redis server's ``TIME`` (every machine agrees on the windows and lease deadlines). A
``clock`` callable replaces it for deterministic tests and simulations only: its value is passed to the
scripts as an argument.

What Redis does and does not guarantee (read before trusting a dollar cap to it):

* Atomicity: a script runs to completion with no other command in between; a reserve either holds on
  every counter of its chain or writes nothing. A client killed mid-call leaves either nothing or a
  complete reservation, whose lease then expires and is charged in full.
* Durability: only what the server persists. With ``appendonly yes`` and ``appendfsync always`` an
  acknowledged reserve survives a server crash; with ``everysec`` (the usual setting) up to about one
  second of writes can be lost on a crash or power cut; with RDB snapshots only, minutes; with neither,
  everything on restart. A lost reservation means a call that ran is not counted: run the ledger with
  AOF, and treat a restart from an old snapshot as an incident.
* Replication is asynchronous: a failover to a replica can lose the latest acknowledged writes (WAIT
  narrows this, it does not close it). Point every client at the primary; do not read counters from a
  replica to make decisions.
* ``maxmemory`` with an eviction policy other than ``noeviction`` can evict ledger keys: configure
  ``noeviction`` so that a full server refuses writes (and the ledger then refuses calls).
* Unreachable, read-only or erroring server: every call raises
  :class:`~litm.errors.LedgerUnavailableError` (fail closed), after up to twice ``socket_timeout_s``.
* A reserve sent and never answered raises :class:`~litm.errors.ReserveUncertainError` (its ``key``): the
  server may still run it. Retry with that key (a booked hold is returned) or ``SpendCap.release(key)``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Protocol, TypedDict, TypeVar, Unpack

from litm.errors import (
    CorruptLedgerError,
    LedgerUnavailableError,
    MissingDependencyError,
    ReservationError,
    SpendRequestError,
)
from litm.spend._ledger import redis_lua as lua
from litm.spend._ledger.base import (
    CounterStatus,
    Event,
    HoldRequest,
    Hooks,
    Limit,
    Mismatch,
    ReservationRecord,
    Settlement,
)
from litm.spend._ledger.redis_conn import AsyncConnections
from litm.spend._ledger.redis_url import RedisURL, parse_redis_url
from litm.spend._ledger.rules import (
    check_count,
    check_hold,
    check_limit,
    check_seconds,
    exceeded,
    mismatches,
    not_set,
    replay,
    sorted_limits,
    sorted_status,
    statuses,
    uncertain,
)
from litm.spend._money import check_micros
from litm.spend._scopes import Window

__all__ = ["AsyncRedisLedger", "RedisLedger"]

T = TypeVar("T")


class _Connection(Protocol):
    # The part of redis-py's connection the call path talks to directly (its own annotations are partial).
    def send_command(self, *args: str | int) -> None: ...
    def read_response(self) -> Any: ...  # a Redis reply: nested lists of bytes and ints, as the script returns
    def disconnect(self) -> None: ...
    def can_read(self, timeout: float = 0) -> bool: ...


class RedisOptions(TypedDict, total=False):
    """The options of :class:`RedisLedger` besides the URL and the hooks (see its docstring)."""

    namespace: str
    clock: Callable[[], float] | None
    socket_timeout_s: float
    sweep_batch: int


# The namespace is spliced into every key inside a {hash tag}: printable, no whitespace, braces or '|'.
_NAMESPACE_RE = re.compile(r"[^{}|\s]{1,64}")
_SCRIPTS = {"reserve": lua.RESERVE, "settle": lua.SETTLE, "sweep": lua.SWEEP, "set_limit": lua.SET_LIMIT,
            "reset": lua.RESET, "window_ids": lua.WINDOW_IDS, "status": lua.STATUS}  # fmt: skip


def _redis_module() -> ModuleType:
    try:
        import redis
    except ImportError:
        raise MissingDependencyError("RedisLedger needs the redis client: pip install 'litm[spend-redis]'") from None
    return redis


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _names(csv: str) -> tuple[str, ...]:
    return tuple(name for name in csv.split(",") if name)


def _record(key: str, raw: object) -> ReservationRecord:
    """A stored record (``redis_lua``'s tab-separated format, or the JSON of earlier development builds);
    :class:`CorruptLedgerError` when it is neither."""
    try:
        return _decode_record(key, raw)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CorruptLedgerError(f"Redis ledger: reservation {key!r} has a record this litm cannot read "
                                 f"({type(exc).__name__})") from None  # fmt: skip


def _decode_record(key: str, raw: object) -> ReservationRecord:
    text = _text(raw)
    if text.startswith("{"):
        rec = json.loads(text)
        rec.update(ch=",".join(rec["ch"]), k=",".join(rec["k"] or ()))
    else:
        tag, *values = text.split("\t", len(lua.RECORD_FIELDS))
        if tag != "2" or len(values) != len(lua.RECORD_FIELDS):
            raise CorruptLedgerError(f"Redis ledger: reservation {key!r} has a record this litm cannot read")
        rec = dict(zip(lua.RECORD_FIELDS, values, strict=True))
    return ReservationRecord(
        key=key, chain=_names(rec["ch"]), counters=_names(rec["k"]), amount=int(rec["a"]),
        created=float(rec["t"]), deadline=float(rec["d"]), price_version=rec["v"], model=rec["m"],
        provider=rec["p"], state=rec["s"], charged=int(rec["c"]), over_hold=str(rec["o"]) == "1",
        late=str(rec["l"]) == "1",
    )  # fmt: skip


class _Codec:
    """What the sync and async ledgers share: options, key names, script arguments and reply parsing."""

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "default",
        clock: Callable[[], float] | None = None,
        socket_timeout_s: float = 2.0,
        sweep_batch: int = 32,
    ) -> None:
        self.parsed: RedisURL = parse_redis_url(url)
        if not isinstance(namespace, str) or not _NAMESPACE_RE.fullmatch(namespace) or not namespace.isprintable():
            raise SpendRequestError(f"bad Redis namespace {namespace!r}: 1-64 printable characters, no braces, "
                                    "'|' or whitespace")  # fmt: skip
        tag = f"litm:spend:{{{namespace}}}"
        self.url = url
        self.namespace = namespace
        self.keys = [f"{tag}:limits", f"{tag}:counters", f"{tag}:res", f"{tag}:leases", f"{tag}:events"]
        self.clock = clock
        self.socket_timeout_s = check_seconds(socket_timeout_s, "socket_timeout_s", positive=True, maximum=3600)
        self.sweep_batch = check_count(sweep_batch, "sweep_batch")

    def now_arg(self) -> str:
        return "" if self.clock is None else repr(float(self.clock()))

    def reserve_args(self, hold: HoldRequest) -> list[str | int]:
        check_hold(hold)
        return [hold.key, hold.amount, repr(float(hold.lease_s)), hold.price_version, hold.model, hold.provider,
                self.now_arg(), self.sweep_batch, *hold.chain]  # fmt: skip

    @staticmethod
    def reserve_reply(hold: HoldRequest, reply: Sequence[Any], *, resent: bool = False) -> ReservationRecord:
        """The reserve script's reply as a record. ``resent``: the script was sent again after a lost reply,
        so a replay of the same key is this call's own reservation, not an earlier one."""
        tag = _text(reply[0])
        if tag == "ok":
            return ReservationRecord(hold.key, hold.chain, _names(_text(reply[3])), hold.amount, float(reply[1]),
                                     float(reply[2]), hold.price_version, hold.model, hold.provider)  # fmt: skip
        if tag == "replay":
            record = replay(hold, _record(hold.key, reply[1]))
            return dataclasses.replace(record, replayed=False) if resent and record.state == "held" else record
        if tag == "nolimit":
            raise not_set(_text(reply[1]))
        scope, window, wid, limit, settled, held = (_text(x) for x in reply[1:7])
        raise exceeded(CounterStatus(scope, window, wid, int(limit), int(settled), int(held)), hold.amount)  # type: ignore[arg-type]

    @staticmethod
    def settle_reply(key: str, reply: Sequence[Any]) -> Settlement:
        tag = _text(reply[0])
        if tag == "unknown":
            raise ReservationError(f"unknown reservation key {key!r}")
        rec = _record(key, reply[1])
        status = tuple(_statuses(reply[2])) if len(reply) > 2 else ()
        return Settlement(key, rec.state, rec.amount, rec.charged, rec.over_hold, rec.late, replayed=tag == "replay",
                          status=status)  # fmt: skip


@contextmanager
def _guard(url: str) -> Iterator[None]:
    """Redis client errors as :class:`LedgerUnavailableError` (fail closed)."""
    redis = _redis_module()
    try:
        yield
    except redis.exceptions.RedisError as exc:
        raise LedgerUnavailableError(f"Redis ledger {url}: {type(exc).__name__}: {exc}") from None
    except OSError as exc:
        raise LedgerUnavailableError(f"Redis ledger {url}: {exc}") from None


def _from_url(from_url: Callable[..., T], url: str, socket_timeout_s: float) -> T:
    """``from_url(url)`` (a client class's): an option redis-py cannot read in the query string is a typed error."""
    try:
        return from_url(url, **_client_options(socket_timeout_s))
    except (ValueError, TypeError) as exc:
        raise SpendRequestError(f"Redis URL {url!r}: {exc}") from None


def _client_options(socket_timeout_s: float) -> dict[str, object]:
    redis = _redis_module()
    # One retry: a reserve or settle resent after a dropped reply is harmless (same key: a replay).
    retry = redis.retry.Retry(redis.backoff.ExponentialBackoff(cap=0.1, base=0.01), 1)
    return {"socket_timeout": socket_timeout_s, "socket_connect_timeout": socket_timeout_s, "retry": retry}


class RedisLedger(_Codec):
    """A spend ledger in Redis at ``url`` (``redis://host:6379/0``), keys tagged ``{namespace}``.

    Options: ``namespace`` (the hash tag), ``socket_timeout_s`` (2 s: the longest wait for one reply; a
    lost reply is waited for once more on a new connection, so a server that does not answer refuses the
    call after up to twice this), ``sweep_batch`` (expired leases charged per reserve), ``clock`` (tests only,
    see the module docstring). ``hooks``: fault injection for crash tests (``reserve:sent``,
    ``settle:sent``: the script was sent and its reply not yet read).
    """

    def __init__(self, url: str, *, hooks: Hooks | None = None, **options: Unpack[RedisOptions]) -> None:
        super().__init__(url, **options)
        self._hooks = dict(hooks or {})
        self._redis = redis = _redis_module()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._own: list[_Connection] = []
        with _guard(url):
            self._client = _from_url(redis.Redis.from_url, url, self.socket_timeout_s)
            self._scripts = {name: self._client.register_script(text) for name, text in _SCRIPTS.items()}
            if self._hooks:  # a crash test kills the process right after sending: the script must be there
                for script in self._scripts.values():
                    self._client.script_load(script.script)

    def _connection(self) -> _Connection:
        # The call path keeps one connection per thread (and per process: never across fork()), and talks
        # to it directly: no pool checkout, retry wrapper or reply callbacks around every script.
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = self._client.connection_pool.make_connection()
            self._local.conn, self._local.pid = conn, os.getpid()
            with self._lock:
                self._own.append(conn)
        elif _hung_up(conn, self._redis.exceptions):
            # The server closed it while it sat idle (a restart): a script written to it would count as sent,
            # and a reserve as uncertain, although Redis never read it. Reconnect before sending instead.
            conn.disconnect()
        return conn

    def _eval(
        self, name: str, args: Sequence[str | int], point: str = "", sent: list[bool] | None = None
    ) -> tuple[Any, bool]:
        """Run script ``name`` in one round trip; return its reply and whether it had to be sent again.

        A reply lost with the connection is retried once: every script is safe to run twice (the same key
        replays). A script the server forgot (a restart, SCRIPT FLUSH) is loaded and run again. So a server
        that does not answer refuses the call after up to twice ``socket_timeout_s`` (the first wait, and the
        wait for the resent script or for a new connection's handshake). ``sent[0]`` becomes True once the
        script was written whole to a connection: from then on, a failure leaves its outcome unknown.
        """
        script, hook = self._scripts[name], self._hooks.get(point)
        errors = self._redis.exceptions
        resent = False
        with _guard(self.url):
            while True:
                conn = self._connection()
                try:
                    conn.send_command("EVALSHA", script.sha, len(self.keys), *self.keys, *args)
                    if sent is not None:
                        sent[0] = True
                    if hook is not None:
                        hook()
                    return conn.read_response(), resent
                except errors.NoScriptError:
                    conn.send_command("SCRIPT", "LOAD", script.script)
                    conn.read_response()
                except (errors.ConnectionError, errors.TimeoutError, OSError):
                    conn.disconnect()
                    if resent:
                        raise
                    resent = True

    def _run(self, name: str, args: Sequence[str | int], point: str = "") -> Any:
        return self._eval(name, args, point)[0]

    def now(self) -> float:
        """The ledger's clock: the server's TIME (or the test clock)."""
        return float(_text(self._run("window_ids", [self.now_arg()])[0]))

    def reserve(self, hold: HoldRequest) -> ReservationRecord:
        """Hold ``hold.amount`` on every counter of the chain in one script, or write nothing and raise.

        A script that was sent and got no answer raises :class:`~litm.errors.ReserveUncertainError`: the
        server may run it when it answers again (a retry with the same key returns that hold).
        """
        args, sent = self.reserve_args(hold), [False]
        try:
            reply, resent = self._eval("reserve", args, "reserve:sent", sent)
        except LedgerUnavailableError as exc:
            if sent[0]:
                raise uncertain(hold.key, exc) from None
            raise
        return self.reserve_reply(hold, reply, resent=resent)

    def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement:
        """Close ``key`` at ``cost`` micro-dollars (once; a second settle is a no-op)."""
        check_micros(cost, "cost")
        return self.settle_reply(key, self._run("settle", [key, cost, int(refund), self.now_arg()], "settle:sent"))

    def get(self, key: str) -> ReservationRecord | None:
        with _guard(self.url):
            raw = self._client.hget(self.keys[2], key)
        return None if raw is None else _record(key, raw)

    def reservations(self, state: str | None = None) -> list[ReservationRecord]:
        """Every stored reservation (in ``state`` when given): for audits and tests, not the call path."""
        with _guard(self.url):
            raw = self._client.hgetall(self.keys[2])
        records = [_record(_text(key), value) for key, value in raw.items()]
        return [r for r in records if state is None or r.state == state]

    def sweep(self, max_items: int = 64) -> int:
        """Charge up to ``max_items`` expired leases in full; return how many were charged."""
        check_count(max_items, "sweep max_items")
        return int(self._run("sweep", [self.now_arg(), max_items]))

    def set_limit(self, scope: str, window: Window, micros: int) -> None:
        check_limit(scope, window, micros)
        self._run("set_limit", [scope, window, micros, self.now_arg()])

    def remove_limit(self, scope: str, window: Window) -> bool:
        return bool(self._run("set_limit", [scope, window, "", self.now_arg()]))

    def limits(self) -> list[Limit]:
        with _guard(self.url):
            return _limits(self._client.hgetall(self.keys[0]))

    def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        if scopes is not None:  # one script that reads only these scopes (the every-request path)
            return _statuses(self._run("status", [self.now_arg(), *dict.fromkeys(scopes)]))
        _, daily, monthly = (_text(x) for x in self._run("window_ids", [self.now_arg()]))
        counters = self.counters()
        return statuses(self.limits(), scopes, {"total": "total", "daily": daily, "monthly": monthly},
                        lambda name: counters.get(name, (0, 0)))  # fmt: skip

    def counters(self) -> dict[str, tuple[int, int]]:
        """Every counter ever touched: name -> (held, settled), read in one command."""
        with _guard(self.url):
            return _counters(self._client.hgetall(self.keys[1]))

    def _events(self, reverse: bool, count: int | None) -> Iterator[Event]:
        start, end, step = ("+", "-", self._client.xrevrange) if reverse else ("-", "+", self._client.xrange)
        seen = 0
        while count is None or seen < count:
            batch = step(self.keys[4], start, end, count=500)
            if not batch:
                return
            for entry_id, fields in batch:
                f = {_text(k): _text(v) for k, v in fields.items()}
                # Comma-separated; a JSON list in the events of earlier development builds.
                names = json.loads(f["counters"]) or [] if f["counters"].startswith("[") else _names(f["counters"])
                seq = _text(entry_id)
                yield Event(seq, float(f["ts"]), f["kind"], f["key"],
                            tuple((c, int(f["dh"]), int(f["ds"])) for c in names), f["detail"])  # fmt: skip
                seen += 1
            last = _text(batch[-1][0])
            start = f"({last}"

    def history(self, scope: str | None = None, limit: int = 50) -> list[Event]:
        check_count(limit, "history limit")
        out = []
        with _guard(self.url):
            for event in self._events(reverse=True, count=None):
                if scope is None or event.key == scope or any(c.startswith(f"{scope}|") for c, _, _ in event.deltas):
                    out.append(event)
                    if len(out) >= limit:
                        break
        return out

    def reset(self, scope: str, window: Window) -> int:
        check_limit(scope, window)
        return int(_text(self._run("reset", [scope, window, self.now_arg()])))

    def verify(self) -> list[Mismatch]:
        """Counters whose value differs from the sum of the event stream (read while quiescent)."""
        sums: dict[str, tuple[int, int]] = {}
        with _guard(self.url):
            for event in self._events(reverse=False, count=None):
                for name, d_held, d_settled in event.deltas:
                    held, settled = sums.get(name, (0, 0))
                    sums[name] = (held + d_held, settled + d_settled)
        return mismatches(self.counters(), sums)

    def asynchronous(self) -> AsyncRedisLedger:
        """The same ledger through ``redis.asyncio`` (same scripts, same keys)."""
        return AsyncRedisLedger(self.url, namespace=self.namespace, clock=self.clock,
                                socket_timeout_s=self.socket_timeout_s, sweep_batch=self.sweep_batch)  # fmt: skip

    def drop(self) -> None:
        """Delete every key of this namespace (tests and ``litm spend reset --all``)."""
        with _guard(self.url):
            self._client.delete(*self.keys)

    def close(self) -> None:
        with self._lock:
            for conn in self._own:
                conn.disconnect()
            self._own.clear()
        self._local = threading.local()
        self._client.close()

    def __repr__(self) -> str:
        return f"RedisLedger({self.url!r}, namespace={self.namespace!r})"


def _hung_up(conn: _Connection, errors: Any) -> bool:
    """Whether the server closed ``conn`` since its last reply (a poll, no wait): an idle connection has
    nothing to read, so readable means the end of the stream (or a stray reply, which must not be read either)."""
    if getattr(conn, "_sock", None) is None:
        return False
    try:
        return bool(conn.can_read(timeout=0))
    except (errors.ConnectionError, errors.TimeoutError, OSError):
        return True


def _limits(raw: Mapping[Any, Any]) -> list[Limit]:
    """The limits hash, as report-ordered :class:`Limit` rows."""
    out = []
    for field, value in raw.items():
        scope, window = _text(field).rsplit("|", 1)
        out.append(Limit(scope, window, int(value)))  # type: ignore[arg-type]
    return sorted_limits(out)


def _counters(raw: Mapping[Any, Any]) -> dict[str, tuple[int, int]]:
    """The counters hash (``name|h``, ``name|s`` fields), as name -> (held, settled)."""
    out: dict[str, tuple[int, int]] = {}
    for field, value in raw.items():
        name, kind = _text(field).rsplit("|", 1)
        held, settled = out.get(name, (0, 0))
        out[name] = (int(value), settled) if kind == "h" else (held, int(value))
    return out


def _statuses(rows: Sequence[Sequence[Any]]) -> list[CounterStatus]:
    """The STATUS script's rows ``(scope, window, wid, limit, settled, held)`` in :meth:`status` order."""
    out = [CounterStatus(_text(s), _text(w), _text(wid), int(lim), int(settled), int(held))  # type: ignore[arg-type]
           for s, w, wid, lim, settled, held in rows]  # fmt: skip
    return sorted_status(out)


class AsyncRedisLedger(_Codec):
    """The async twin of :class:`RedisLedger` for event loops (``redis.asyncio``); same options."""

    def __init__(self, url: str, **options: Unpack[RedisOptions]) -> None:
        super().__init__(url, **options)
        _redis_module()
        import redis.asyncio as aioredis

        with _guard(url):
            self._client = _from_url(aioredis.Redis.from_url, url, self.socket_timeout_s)
            self._scripts = {name: self._client.register_script(text) for name, text in _SCRIPTS.items()}
        self._calls = AsyncConnections(self._client)

    async def _eval(self, name: str, args: Sequence[str | int], sent: list[bool] | None = None) -> tuple[Any, bool]:
        """:meth:`RedisLedger._eval` for an event loop: one round trip on a raw connection (see
        :mod:`~litm.spend._ledger.redis_conn`), a lost reply resent once, a forgotten script loaded again."""
        script = self._scripts[name]
        errors = _redis_module().exceptions
        with _guard(self.url):
            while True:
                try:
                    return await self._calls.call("EVALSHA", script.sha, len(self.keys), *self.keys, *args, sent=sent)
                except errors.NoScriptError:
                    await self._calls.call("SCRIPT", "LOAD", script.script)

    async def _run(self, name: str, args: Sequence[str | int]) -> Any:
        return (await self._eval(name, args))[0]

    async def reserve(self, hold: HoldRequest) -> ReservationRecord:
        """:meth:`RedisLedger.reserve`: a script that was sent and got no answer raises
        :class:`~litm.errors.ReserveUncertainError`."""
        args, sent = self.reserve_args(hold), [False]
        try:
            reply, resent = await self._eval("reserve", args, sent)
        except LedgerUnavailableError as exc:
            if sent[0]:
                raise uncertain(hold.key, exc) from None
            raise
        return self.reserve_reply(hold, reply, resent=resent)

    async def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement:
        check_micros(cost, "cost")
        return self.settle_reply(key, await self._run("settle", [key, cost, int(refund), self.now_arg()]))

    async def get(self, key: str) -> ReservationRecord | None:
        with _guard(self.url):
            raw = await self._client.hget(self.keys[2], key)
        return None if raw is None else _record(key, raw)

    async def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        """:meth:`RedisLedger.status`; every scope with a limit when ``scopes`` is None."""
        if scopes is not None:
            return _statuses(await self._run("status", [self.now_arg(), *dict.fromkeys(scopes)]))
        _, daily, monthly = (_text(x) for x in await self._run("window_ids", [self.now_arg()]))
        with _guard(self.url):
            limits = _limits(await self._client.hgetall(self.keys[0]))
            counters = _counters(await self._client.hgetall(self.keys[1]))
        return statuses(limits, None, {"total": "total", "daily": daily, "monthly": monthly},
                        lambda name: counters.get(name, (0, 0)))  # fmt: skip

    async def aclose(self) -> None:
        with _guard(self.url):
            await self._calls.aclose()
            await self._client.aclose()
