"""``SQLiteLedger``: the embedded ledger, safe across threads and processes on one host.

Every write is one ``BEGIN IMMEDIATE`` transaction: it takes the database's single write lock before
reading anything, so two processes can never both read "under budget" and both write. The journal is
WAL (readers never block the writer); ``synchronous=FULL`` by default, so a committed reservation
survives a power cut as well as a crash (``NORMAL`` is faster and survives process crashes, not power
loss). Each transaction appends its event to ``ops`` (append-only, enforced by triggers), and a trigger on
that insert moves the counters it names, so the counters equal the event sums by construction: no write
can change one without the other. One event moves every counter it names by the same
``(d_held, d_settled)``: a reserve, settle or expiry treats the whole chain alike.

The common path is short: a reserve is ``BEGIN IMMEDIATE``, the bounded lease sweep, one read of the
chain's limits and counters, the reservation insert, the event insert, ``COMMIT``; a settle is ``BEGIN
IMMEDIATE``, one ``UPDATE ... RETURNING`` of the held reservation, the event insert, ``COMMIT``.

Waiting for the lock: a connection's setup, ``BEGIN IMMEDIATE`` and every read wait for up to
``busy_timeout_s`` while another connection holds the lock they need, then refuse with
:class:`~litm.errors.LedgerUnavailableError` (fail closed; :mod:`litm.spend._ledger.sqlite_lock`). Workers
that open a closed ledger at once (a pre-forking server starting) queue behind the first, which sets the
WAL up.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "spend.db")
>>> ledger = SQLiteLedger(path)
>>> ledger.set_limit("project:demo", "total", 1_000_000)
>>> r = ledger.reserve(HoldRequest("call-1", ("project:demo",), 400_000, lease_s=60))
>>> ledger.settle("call-1", 150_000).refunded
250000
>>> [(c.settled, c.held) for c in ledger.status()]
[(150000, 0)]
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from litm.errors import CorruptLedgerError, LedgerNotFoundError, LitmError, ReservationError, SpendRequestError
from litm.spend._ledger.base import (
    AsyncLedger,
    CounterStatus,
    Event,
    HoldRequest,
    Hooks,
    Limit,
    Mismatch,
    ReservationRecord,
    Settlement,
    State,
)
from litm.spend._ledger.rules import (
    MAX_COUNT,
    book_reserve,
    book_settle,
    check_count,
    check_hold,
    check_limit,
    check_seconds,
    mismatches,
    refusal,
    replay,
    sorted_limits,
    sorted_status,
    statuses,
)
from litm.spend._ledger.sqlite_lock import REPAIR, ledger_error, one_line, retry_locked
from litm.spend._ledger.sqlite_schema import MOVE_COUNTERS, RES_COLS, SCHEMA, names_json, record
from litm.spend._ledger.threaded import ThreadedAsyncLedger
from litm.spend._money import check_micros
from litm.spend._scopes import WINDOWS, Window, counter_name, window_id

__all__ = ["SQLiteLedger"]

_T = TypeVar("_T")

PAGE_SIZE = 1024
WAL_CHECKPOINT_BYTES = 4 * 1024 * 1024
SYNCHRONOUS = ("FULL", "NORMAL", "EXTRA")
TABLES = ("counters", "limits", "ops", "reservations")
# What decoding a stored row raises when its bytes are not what the ledger wrote (a damaged file).
_UNREADABLE = (ValueError, TypeError, KeyError, IndexError, OverflowError)
#: The most scopes :meth:`SQLiteLedger.status` reads with one ``IN (...)`` query (well under SQLite's limit on
#: bound variables); more read every limit and keep those.
_SCOPED_STATUS_MAX = 500


def _chain_query(scopes: Sequence[str], now: float) -> tuple[str, tuple[object, ...]]:
    """The query (and its arguments) for the current window of every limit of ``scopes``, with its counter."""
    return (
        "SELECT l.scope, l.window, l.micros, c.settled, c.held FROM limits l LEFT JOIN counters c ON c.name ="
        " l.scope || '|' || l.window || '|' || CASE l.window WHEN 'daily' THEN ? WHEN 'monthly' THEN ?"
        f" ELSE 'total' END WHERE l.scope IN ({','.join('?' * len(scopes))})",
        (window_id("daily", now), window_id("monthly", now), *scopes),
    )


def _chain_counters(rows: Sequence[Sequence[Any]], now: float) -> list[CounterStatus]:
    """:func:`_chain_query`'s rows as counters (a counter not yet touched is 0)."""
    return [CounterStatus(str(scope), window, window_id(window, now), int(micros), int(settled or 0), int(held or 0))
            for scope, window, micros, settled, held in rows]  # fmt: skip


class SQLiteLedger:
    """A spend ledger in one SQLite file (see the module docstring for the locking and durability rules).

    ``clock`` returns seconds since the epoch (UTC); tests inject a fake one. ``busy_timeout_s``: how long
    to wait for another connection's lock (a number of seconds >= 0). ``synchronous``: ``FULL``, ``NORMAL``
    or ``EXTRA``. ``sweep_batch``: expired leases charged per reserve (>= 1). ``create=False`` opens only an
    existing ledger (:class:`~litm.errors.LedgerNotFoundError` when the file is missing, nothing written),
    as every command that reads or administers one does. ``hooks`` are fault-injection points for crash
    tests (``reserve:in_txn``, ``settle:in_txn``: inside the open transaction, after its writes, before
    COMMIT).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = 10.0,
        synchronous: str = "FULL",
        sweep_batch: int = 32,
        create: bool = True,
        hooks: Hooks | None = None,
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise SpendRequestError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, got {synchronous!r}")
        if not isinstance(create, bool):
            raise SpendRequestError(f"create must be True or False, got {create!r}")
        self.path = Path(path)
        self.clock = clock
        self.busy_timeout_s = check_seconds(busy_timeout_s, "busy_timeout_s")
        self._synchronous = synchronous
        self.sweep_batch = check_count(sweep_batch, "sweep_batch")
        self._hooks = dict(hooks or {})
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if self.path.exists() and not self.path.is_file():
            raise LedgerNotFoundError(f"spend ledger {str(self.path)!r} is a directory, not a ledger file")
        if not create and not self.path.exists():
            raise LedgerNotFoundError(f"spend ledger {str(self.path)!r} does not exist (nothing was created)")
        if not create:
            # Checked before anything is written: the file may be empty, or some other database.
            found = self._tables()
            if not set(TABLES) <= found:
                missing = ", ".join(sorted(set(TABLES) - found))
                raise CorruptLedgerError(
                    f"SQLite ledger {self.path}: not a litm spend ledger (no {missing} table); if it was one, {REPAIR}"
                )
            return
        with self._write() as conn:
            for stmt in [*SCHEMA.split(";\n"), MOVE_COUNTERS]:
                if stmt.strip():
                    conn.execute(stmt)

    # -- connections and transactions -------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        # A connection must not cross fork(): a pre-forking server that built the ledger at import time
        # gets a fresh connection in each worker.
        if conn is None or self._local.pid != os.getpid():
            try:
                conn = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                raise ledger_error(f"SQLite ledger {self.path}: cannot open ({exc})", exc) from None
            try:
                self._retrying(lambda: self._configure(conn), "cannot open")
            except BaseException:
                conn.close()
                raise
            self._local.conn, self._local.pid = conn, os.getpid()
            with self._lock:
                self._all.append(conn)
        return conn

    def _tables(self) -> set[str]:
        """The tables of an existing file, read on a plain connection: the ledger's own connections switch a
        file to WAL, which would write to a file that turns out not to be a ledger (or to an empty one)."""
        try:
            probe = sqlite3.connect(self.path, timeout=0, isolation_level=None)
        except sqlite3.Error as exc:
            raise ledger_error(f"SQLite ledger {self.path}: cannot open ({exc})", exc) from None
        try:
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            rows = self._retrying(lambda: probe.execute(query).fetchall(), "cannot open")
        finally:
            probe.close()
        return {str(name) for (name,) in rows}

    def _configure(self, conn: sqlite3.Connection) -> None:
        # Set before WAL mode first writes a new file (an existing file keeps its page size): every commit
        # appends each page it touched to the WAL, and a call touches ~9 pages of small rows, so 1 KiB pages
        # write a quarter of the bytes of the 4 KiB default (1.36x the reserve + settle pairs per second
        # with one process, benchmarks/bench_spend_page_size.py). The checkpoint threshold keeps the
        # default's 4 MiB of WAL between checkpoints, counted in the file's own pages (an existing file may
        # have kept 4 KiB ones).
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode=WAL")
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_BYTES // page_size}")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")

    def _retrying(self, action: Callable[[], _T], failing: str = "") -> _T:
        quick: float | None = getattr(self._local, "lock_wait_s", None)
        return retry_locked(action, timeout_s=self.busy_timeout_s if quick is None else quick,
                            where=f"SQLite ledger {self.path}", failing=failing, busy=quick is not None)  # fmt: skip

    @contextmanager
    def lock_wait(self, seconds: float) -> Iterator[None]:
        """In this thread, wait at most ``seconds`` for a lock another connection holds, then raise
        :class:`~litm.errors.LedgerBusyError` (nothing written; try again, for instance in a worker thread).

        For callers that must not wait long where they are, such as an event loop: the gateway reserves and
        settles on its loop within ``lock_wait(0.005)`` and moves to a thread when the lock is busy.

        >>> import tempfile, os
        >>> ledger = SQLiteLedger(os.path.join(tempfile.mkdtemp(), "spend.db"))
        >>> with ledger.lock_wait(0.005):
        ...     ledger.set_limit("team:a", "total", 1_000_000)
        >>> ledger.close()
        """
        check_seconds(seconds, "lock_wait seconds")
        before = getattr(self._local, "lock_wait_s", None)
        self._local.lock_wait_s = seconds
        try:
            yield
        finally:
            self._local.lock_wait_s = before

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        self._retrying(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            raise ledger_error(f"SQLite ledger {self.path}: {exc}", exc) from None
        except _UNREADABLE as exc:
            self._rollback(conn)
            if isinstance(exc, LitmError):
                raise
            raise self._unreadable(exc) from None
        except BaseException:
            self._rollback(conn)
            raise

    def _unreadable(self, exc: BaseException) -> CorruptLedgerError:
        reason = one_line(f"{type(exc).__name__}: {exc}", 200)
        return CorruptLedgerError(f"SQLite ledger {self.path}: a stored row cannot be read ({reason}): the file is "
                                  f"damaged; {REPAIR}")  # fmt: skip

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        """Rows read back that are not what the ledger wrote, as :class:`CorruptLedgerError`."""
        try:
            yield
        except _UNREADABLE as exc:
            if isinstance(exc, LitmError):
                raise
            raise self._unreadable(exc) from None

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        conn = self._conn()
        return self._retrying(lambda: conn.execute(sql, args).fetchall())

    def _hook(self, point: str) -> None:
        hook = self._hooks.get(point)
        if hook is not None:
            hook()

    def now(self) -> float:
        """The ledger's clock (seconds since the epoch, UTC)."""
        return float(self.clock())

    # -- booking --------------------------------------------------------------------------------

    @staticmethod
    def _apply(conn: sqlite3.Connection, ts: float, kind: str, key: str, counters: Sequence[str] | str,
               d_held: int, d_settled: int, detail: str = "") -> None:  # fmt: skip
        """Append one event; its trigger moves each of its counters (a list, or their stored JSON text) by
        ``(d_held, d_settled)`` in the same transaction (a counter's first use creates it)."""
        names = counters if isinstance(counters, str) else names_json(tuple(counters))
        conn.execute(
            "INSERT INTO ops (ts, kind, key, counters, d_held, d_settled, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (ts, kind, key, names, d_held, d_settled, detail),
        )

    def _sweep(self, conn: sqlite3.Connection, now: float, max_items: int) -> int:
        rows = conn.execute(
            f"SELECT {RES_COLS} FROM reservations WHERE state = 'held' AND deadline <= ? ORDER BY deadline LIMIT ?",
            (now, max_items),
        ).fetchall()
        for row in rows:
            rec = record(row)
            conn.execute(
                "UPDATE reservations SET state = 'expired', charged = amount, closed = ? WHERE key = ?", (now, rec.key)
            )
            self._apply(conn, now, "expire", rec.key, rec.counters, -rec.amount, rec.amount)
        return len(rows)

    def sweep(self, max_items: int = 64) -> int:
        """Charge up to ``max_items`` expired leases in full; return how many were charged."""
        check_count(max_items, "sweep max_items")
        with self._write() as conn:
            return self._sweep(conn, self.now(), max_items)

    @staticmethod
    def _existing(conn: sqlite3.Connection, hold: HoldRequest) -> ReservationRecord | None:
        row = conn.execute(f"SELECT {RES_COLS} FROM reservations WHERE key = ?", (hold.key,)).fetchone()
        return None if row is None else replay(hold, record(row))

    def reserve(self, hold: HoldRequest) -> ReservationRecord:
        """Hold ``hold.amount`` on every counter of the chain, or write nothing and raise."""
        check_hold(hold)
        refused = None
        with self._write() as conn:
            now = self.now()
            self._sweep(conn, now, self.sweep_batch)
            current = _chain_counters(conn.execute(*_chain_query(hold.chain, now)).fetchall(), now)
            refused = refusal(hold, current)
            if refused is not None:
                # A retried reserve that was booked before is a replay, even once the budget is full.
                existing = self._existing(conn, hold)
                if existing is not None:
                    return existing
            else:
                counters = tuple(book_reserve(hold, current))
                names = names_json(counters)
                # The key's first use inserts; a retried reserve conflicts and replays, having moved nothing.
                inserted = conn.execute(
                    f"INSERT INTO reservations ({RES_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'held', 0, 0, 0)"
                    " ON CONFLICT (key) DO NOTHING",
                    (hold.key, names_json(hold.chain), names, hold.amount, now, now + hold.lease_s,
                     hold.price_version, hold.model, hold.provider),
                ).rowcount  # fmt: skip
                existing = None if inserted else self._existing(conn, hold)
                if existing is not None:
                    return existing
                self._apply(conn, now, "reserve", hold.key, names, hold.amount, 0)
                self._hook("reserve:in_txn")
                result = ReservationRecord(hold.key, hold.chain, counters, hold.amount, now, now + hold.lease_s,
                                           hold.price_version, hold.model, hold.provider)  # fmt: skip
        if refused is not None:
            raise refused  # after COMMIT: the sweep above is kept even when this reserve is refused
        return result

    def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement:
        """Close ``key`` at ``cost`` micro-dollars (once; a second settle is a no-op)."""
        check_micros(cost, "cost")
        state: State = "refunded" if refund else "settled"
        with self._write() as conn:
            now = self.now()
            # The common case, a held reservation, in one statement; anything else is read and booked below.
            held = conn.execute(
                "UPDATE reservations SET state = ?, charged = ?, over_hold = (? > amount), late = 0, closed = ?"
                " WHERE key = ? AND state = 'held' RETURNING counters, amount",
                (state, cost, cost, now, key),
            ).fetchone()
            if held is not None:
                names, amount = held
                self._apply(conn, now, "refund" if refund else "settle", key, names, -amount, cost)
                self._hook("settle:in_txn")
                return Settlement(key, state, amount, cost, over_hold=cost > amount)
            row = conn.execute(f"SELECT {RES_COLS} FROM reservations WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise ReservationError(f"unknown reservation key {key!r}")
            rec = record(row)
            outcome, delta = book_settle(rec, cost, refund=refund)
            if not outcome.replayed:
                conn.execute(
                    "UPDATE reservations SET state = ?, charged = ?, over_hold = ?, late = ?, closed = ? WHERE key = ?",
                    (outcome.state, outcome.cost, int(outcome.over_hold), int(outcome.late), now, key),
                )
                if delta is not None:
                    self._apply(conn, now, "refund" if refund else "settle", key, rec.counters, *delta)
                self._hook("settle:in_txn")
        return outcome

    def get(self, key: str) -> ReservationRecord | None:
        """The stored reservation ``key``, or None."""
        rows = self._read(f"SELECT {RES_COLS} FROM reservations WHERE key = ?", (key,))
        with self._decoding():
            return record(rows[0]) if rows else None

    def reservations(self, state: str | None = None) -> list[ReservationRecord]:
        """Every stored reservation (in ``state`` when given): for audits and tests, not the call path."""
        if state is None:
            rows = self._read(f"SELECT {RES_COLS} FROM reservations")
        else:
            rows = self._read(f"SELECT {RES_COLS} FROM reservations WHERE state = ?", (state,))
        with self._decoding():
            return [record(row) for row in rows]

    # -- limits and reports ------------------------------------------------------------------------

    def set_limit(self, scope: str, window: Window, micros: int) -> None:
        """Set (or replace) the limit of ``scope`` for ``window``; logged as an event."""
        check_limit(scope, window, micros)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO limits (scope, window, micros) VALUES (?, ?, ?) "
                "ON CONFLICT (scope, window) DO UPDATE SET micros = excluded.micros",
                (scope, window, micros),
            )
            self._apply(conn, self.now(), "limit", scope, (), 0, 0, f"{window}={micros}")

    def remove_limit(self, scope: str, window: Window) -> bool:
        """Remove one limit (a scope left without limits refuses every reservation)."""
        with self._write() as conn:
            gone = conn.execute("DELETE FROM limits WHERE scope = ? AND window = ?", (scope, window)).rowcount
            if gone:
                self._apply(conn, self.now(), "limit", scope, (), 0, 0, f"{window}=removed")
        return bool(gone)

    def limits(self) -> list[Limit]:
        """Every limit, sorted by scope and window."""
        rows = self._read("SELECT scope, window, micros FROM limits")
        with self._decoding():
            for scope, window, micros in rows:
                try:
                    check_limit(scope, window, micros)  # a damaged row must not pass as a limit
                except SpendRequestError as exc:
                    raise self._unreadable(exc) from None
            return sorted_limits(Limit(scope, window, micros) for scope, window, micros in rows)

    def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        """The current window of every limit (of ``scopes`` when given)."""
        now = self.now()
        if scopes is not None and len(scopes) <= _SCOPED_STATUS_MAX:
            return self._status_of(list(dict.fromkeys(scopes)), now)

        def counter(name: str) -> tuple[int, int]:
            got = self._read("SELECT held, settled FROM counters WHERE name = ?", (name,))
            return (int(got[0][0]), int(got[0][1])) if got else (0, 0)

        with self._decoding():
            return statuses(self.limits(), scopes, {w: window_id(w, now) for w in WINDOWS}, counter)

    def _status_of(self, scopes: list[str], now: float) -> list[CounterStatus]:
        """:meth:`status` of a few scopes in one indexed query (what the gateway reads on every request), not
        a read of every limit of the ledger."""
        if not scopes:
            return []
        rows = self._read(*_chain_query(scopes, now))
        with self._decoding():
            return sorted_status(_chain_counters(rows, now))

    def counters(self) -> dict[str, tuple[int, int]]:
        """Every counter ever touched: name -> (held, settled)."""
        with self._decoding():
            return {str(name): (int(held), int(settled))
                    for name, held, settled in self._read("SELECT name, held, settled FROM counters")}  # fmt: skip

    def history(self, scope: str | None = None, limit: int = 50) -> list[Event]:
        """The latest ``limit`` events, newest first (those touching ``scope`` when given)."""
        cols = "seq, ts, kind, key, counters, d_held, d_settled, detail"
        check_count(limit, "history limit")
        if scope is None:
            rows = self._read(f"SELECT {cols} FROM ops ORDER BY seq DESC LIMIT ?", (limit,))
        else:
            rows = self._read(
                f"SELECT {cols} FROM ops WHERE key = ? OR EXISTS (SELECT 1 FROM json_each(ops.counters) j"
                " WHERE substr(j.value, 1, ?) = ?) ORDER BY seq DESC LIMIT ?",
                (scope, len(scope) + 1, f"{scope}|", limit),
            )
        with self._decoding():
            return [
                Event(str(seq), float(ts), str(kind), str(key),
                      tuple((str(c), int(d_held), int(d_settled)) for c in json.loads(names)), str(detail))
                for seq, ts, kind, key, names, d_held, d_settled, detail in rows
            ]  # fmt: skip

    def reset(self, scope: str, window: Window) -> int:
        """Zero the settled spend of ``scope``'s current ``window`` (held amounts stay); return what was cleared.

        Written as a compensating event, so the log still sums to the counters.
        """
        check_limit(scope, window)
        with self._write() as conn:
            now = self.now()
            name = counter_name(scope, window, window_id(window, now))
            got = conn.execute("SELECT settled FROM counters WHERE name = ?", (name,)).fetchone()
            cleared = int(got[0]) if got else 0
            detail = f"{window} cleared {cleared}"
            self._apply(conn, now, "reset", scope, [name] if cleared else [], 0, -cleared, detail)
        return cleared

    def verify(self) -> list[Mismatch]:
        """Counters whose value differs from the sum of their events (an empty list when consistent)."""
        sums = {
            name: (held, settled)
            for name, held, settled in self._read(
                "SELECT j.value, SUM(d_held), SUM(d_settled) FROM ops, json_each(ops.counters) j GROUP BY j.value"
            )
        }
        return mismatches(self.counters(), sums)

    def check(self) -> None:
        """Raise :class:`~litm.errors.CorruptLedgerError` unless the file is sound: SQLite's integrity check
        passes, every row reads back, the counters equal their event sums, each counter's ``held`` equals the
        amounts of the reservations held on it, and each limit equals its latest logged value.

        What this cannot see: a changed byte that leaves every one of these consistent (a model name, a
        timestamp, an event's detail text). ``litm spend check LEDGER`` runs it.

        >>> import tempfile, os
        >>> SQLiteLedger(os.path.join(tempfile.mkdtemp(), "spend.db")).check()
        """
        problems = [str(row[0]) for row in self._read("PRAGMA integrity_check") if row[0] != "ok"]
        if not problems:
            self.reservations(), self.history(limit=MAX_COUNT), self.limits()  # every row decodes
            problems = [f"counter {m.counter} is (held {m.held}, settled {m.settled}) but its events sum to "
                        f"({m.event_held}, {m.event_settled})" for m in self.verify()]  # fmt: skip
            problems += self._held_mismatches() + self._limit_mismatches()
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = one_line(problems[0], 200)
            raise CorruptLedgerError(f"SQLite ledger {self.path}: {first}{more}: the file is damaged; {REPAIR}")

    def _held_mismatches(self) -> list[str]:
        held: dict[str, int] = {}
        for rec in self.reservations("held"):
            for name in rec.counters:
                held[name] = held.get(name, 0) + rec.amount
        return [f"counter {name} holds {h} but its held reservations sum to {held.get(name, 0)}"
                for name, (h, _) in sorted(self.counters().items()) if h != held.get(name, 0)]  # fmt: skip

    def _limit_mismatches(self) -> list[str]:
        logged: dict[tuple[str, str], str] = {}
        with self._decoding():
            for key, detail in self._read("SELECT key, detail FROM ops WHERE kind = 'limit' ORDER BY seq"):
                window, _, value = str(detail).partition("=")
                logged[(str(key), window)] = value
        out = []
        for lim in self.limits():
            said = logged.get((lim.scope, lim.window))
            if said != str(lim.micros):
                out.append(f"limit of {lim.scope} {lim.window} is {lim.micros} but its log says {said}")
        return out

    def asynchronous(self) -> AsyncLedger:
        """An async view whose calls run in worker threads (never on the event loop)."""
        return ThreadedAsyncLedger(self)

    def close(self) -> None:
        """Close every connection this ledger opened (in any thread)."""
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SQLiteLedger({str(self.path)!r})"
