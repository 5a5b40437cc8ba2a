"""The booking rules both stores follow, as pure functions (the Redis Lua scripts mirror them).

Keeping the rules apart from the storage makes each store a thin transaction around them, and lets the
tests hold both stores to one reference.

>>> hold = HoldRequest("k", ("project:a",), 300, lease_s=60)
>>> refusal(hold, [CounterStatus("project:a", "total", "total", 1000, 500, 300)]).requested
300
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from litm.errors import (
    ReservationError,
    ReserveUncertainError,
    SpendBudgetExceeded,
    SpendLimitNotSetError,
    SpendRequestError,
)
from litm.spend._ledger.base import CounterStatus, HoldRequest, Limit, Mismatch, ReservationRecord, Settlement, State
from litm.spend._money import check_micros, format_usd
from litm.spend._scopes import WINDOWS, Window, check_chain, check_scope, check_window, counter_name

__all__ = ["book_reserve", "book_settle", "check_count", "check_hold", "check_lease", "check_limit",
           "check_seconds", "exceeded", "mismatches", "not_set", "refusal", "replay", "sorted_limits", "statuses",
           "uncertain"]  # fmt: skip

MAX_KEY = 200
#: The largest count a ledger call takes (``history(limit=)``, ``sweep(max_items=)``): far above any real
#: need, and below the 64-bit integers SQLite binds.
MAX_COUNT = 1_000_000_000
MAX_LEASE_S = 7 * 86400


def check_count(value: object, what: str, *, minimum: int = 1) -> int:
    """``value`` if it is an int in ``[minimum, MAX_COUNT]`` (bools refused).

    >>> check_count(20, "history limit")
    20
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpendRequestError(f"{what} must be an int, got {value!r}")
    if not minimum <= value <= MAX_COUNT:
        raise SpendRequestError(f"{what} must be between {minimum} and {MAX_COUNT}, got {value}")
    return value


def check_seconds(value: object, what: str, *, positive: bool = False, maximum: float = 86400.0) -> float:
    """``value`` as a finite number of seconds in ``[0, maximum]`` (``(0, maximum]`` when ``positive``).

    >>> check_seconds(2, "socket_timeout_s", positive=True)
    2.0
    """
    low = "(0" if positive else "[0"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpendRequestError(f"{what} must be a number of seconds, got {value!r}")
    if not (0 < value <= maximum if positive else 0 <= value <= maximum):  # NaN fails both
        raise SpendRequestError(f"{what} must be in {low}, {maximum:g}] seconds, got {value!r}")
    return float(value)


def check_lease(value: object) -> float:
    """A lease length: a number of seconds in (0, 7 days].

    >>> check_lease(900)
    900.0
    """
    return check_seconds(value, "lease_s", positive=True, maximum=MAX_LEASE_S)


def check_hold(hold: HoldRequest) -> None:
    """Reject malformed holds before any store is touched."""
    if not isinstance(hold.key, str) or not hold.key or len(hold.key) > MAX_KEY:
        raise SpendRequestError(f"reservation key must be a string of 1-{MAX_KEY} characters, got {hold.key!r}")
    check_chain(hold.chain)
    check_micros(hold.amount, "amount")
    check_lease(hold.lease_s)
    for what, text in (("model", hold.model), ("provider", hold.provider), ("price version", hold.price_version)):
        # Stores keep these in plain-text records: a control character would split a record.
        if not isinstance(text, str) or any(ch in text for ch in "\t\n\r"):
            raise SpendRequestError(f"reservation {what} must be text without tabs or line breaks, got {text!r}")


def check_limit(scope: str, window: Window, micros: int | None = None) -> None:
    """Reject a malformed limit (scope, window and, when given, the amount) before any store is touched."""
    check_scope(scope)
    check_window(window)
    if micros is not None:
        check_hold(HoldRequest("limit", (scope,), micros, 1.0))


def sorted_limits(limits: Iterable[Limit]) -> list[Limit]:
    """Limits in report order: by scope, then total, daily, monthly."""
    return sorted(limits, key=lambda lim: (lim.scope, WINDOWS.index(lim.window)))


def sorted_status(current: Iterable[CounterStatus]) -> list[CounterStatus]:
    """Counters in report order, as :func:`sorted_limits` orders their limits."""
    return sorted(current, key=lambda c: (c.scope, WINDOWS.index(c.window)))


def statuses(
    limits: Iterable[Limit], scopes: Sequence[str] | None, wids: Mapping[str, str],
    counter: Callable[[str], tuple[int, int]],
) -> list[CounterStatus]:  # fmt: skip
    """The current window of every limit (of ``scopes`` when given).

    ``wids`` maps each window to its current id; ``counter`` reads one counter's ``(held, settled)``.
    """
    out = []
    for lim in limits:
        if scopes is None or lim.scope in scopes:
            wid = wids[lim.window]
            held, settled = counter(counter_name(lim.scope, lim.window, wid))
            out.append(CounterStatus(lim.scope, lim.window, wid, lim.micros, settled, held))
    return out


def _ordered(hold: HoldRequest, current: Sequence[CounterStatus]) -> list[CounterStatus]:
    rank = {scope: i for i, scope in enumerate(hold.chain)}
    return sorted(current, key=lambda c: (rank[c.scope], WINDOWS.index(c.window)))


def refusal(hold: HoldRequest, current: Sequence[CounterStatus]) -> Exception | None:
    """Why ``hold`` may not be booked on the ``current`` counters of its chain, or None when it fits.

    A scope with no limit refuses: an unconfigured scope is a typo or a missing setup, never "unlimited".
    """
    limited = {c.scope for c in current}
    for scope in hold.chain:
        if scope not in limited:
            return not_set(scope)
    for c in _ordered(hold, current):
        if c.settled + c.held + hold.amount > c.limit:
            return exceeded(c, hold.amount)
    return None


def not_set(scope: str) -> SpendLimitNotSetError:
    """The error for a scope that has no limit."""
    return SpendLimitNotSetError(f"scope {scope!r} has no spend limit; set one with set_limit()")


def exceeded(c: CounterStatus, requested: int) -> SpendBudgetExceeded:
    """The 402 error for counter ``c`` refusing ``requested`` micro-dollars."""
    return SpendBudgetExceeded(
        f"spend limit of scope {c.scope!r} ({c.window} {c.wid}) exceeded: limit {format_usd(c.limit)}, "
        f"settled {format_usd(c.settled)}, held {format_usd(c.held)}, requested {format_usd(requested)}",
        scope=c.scope, window=c.window, limit=c.limit, settled=c.settled, held=c.held, requested=requested,
    )  # fmt: skip


def uncertain(key: str, reason: object) -> ReserveUncertainError:
    """The error for a reserve that was sent and whose answer never came: it may have been booked."""
    return ReserveUncertainError(
        f"{reason}; reserve {key!r} was sent and may still be booked when the ledger answers again: retry it with"
        f" key={key!r} (a booked hold is returned, never held twice) or release it with SpendCap.release({key!r})",
        key=key,
    )


def book_reserve(hold: HoldRequest, current: Sequence[CounterStatus]) -> list[str]:
    """The counters a fitting hold is booked to, chain order then window order."""
    return [counter_name(c.scope, c.window, c.wid) for c in _ordered(hold, current)]


def replay(hold: HoldRequest, rec: ReservationRecord) -> ReservationRecord:
    """A retried reserve: the stored reservation if the terms match, else :class:`ReservationError`."""
    if not hold.same_terms(rec):
        raise ReservationError(f"reservation key {hold.key!r} was already used for a different call")
    return replace(rec, replayed=True)


def book_settle(
    rec: ReservationRecord, cost: int, *, refund: bool = False
) -> tuple[Settlement, tuple[int, int] | None]:
    """The outcome of settling ``rec`` at ``cost``, and how each of its counters moves ``(d_held, d_settled)``.

    * held: the hold leaves ``held``, the cost enters ``settled``;
    * expired (charged in full): a late settle moves the charge from the hold to the cost;
    * settled or refunded: nothing changes (``replayed``, no delta).
    """
    check_micros(cost, "cost")
    state: State = "refunded" if refund else "settled"
    over = cost > rec.amount
    if rec.state == "held":
        return Settlement(rec.key, state, rec.amount, cost, over_hold=over), (-rec.amount, cost)
    if rec.state == "expired":
        return Settlement(rec.key, state, rec.amount, cost, over_hold=over, late=True), (0, cost - rec.amount)
    return Settlement(rec.key, rec.state, rec.amount, rec.charged, rec.over_hold, rec.late, replayed=True), None


def mismatches(counters: Mapping[str, tuple[int, int]], sums: Mapping[str, tuple[int, int]]) -> list[Mismatch]:
    """Counters ``(held, settled)`` that differ from their event sums; a missing entry counts as (0, 0)."""
    out = []
    for name in sorted(set(counters) | set(sums)):
        held, settled = counters.get(name, (0, 0))
        ev_held, ev_settled = sums.get(name, (0, 0))
        if (held, settled) != (ev_held, ev_settled):
            out.append(Mismatch(name, held, settled, ev_held, ev_settled))
    return out
