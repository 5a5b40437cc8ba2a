"""Scopes and windows: which counters one reservation touches.

A reservation names a *chain* of nested scopes, outermost first (``project:acme`` > ``user:42`` >
``run:7f3a``). Each scope may carry one limit per *window*: ``total`` (never resets), ``daily`` (UTC
days) or ``monthly`` (UTC calendar months). A counter is the triple (scope, window, window id), and a
reservation must fit every counter of every scope in its chain.

Window rollover rule: a reservation belongs to the window ids current at the instant it was reserved
(the ledger's clock). Its settle, refund or lease expiry is booked to those same window ids, even when
it happens after midnight UTC: the money was committed in that window, so a day's spend can never
exceed the day's limit, and a new day starts with only the calls reserved in it.

>>> window_id("daily", 86400 * 365)
'd1971-01-01'
>>> window_id("monthly", 0), window_id("total", 0)
('m1970-01', 'total')
>>> check_chain(["project:acme", "user:42"])
('project:acme', 'user:42')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal, get_args

from litm.errors import SpendRequestError

Window = Literal["total", "daily", "monthly"]
WINDOWS: tuple[str, ...] = get_args(Window)

# No braces (Redis hash tags), separators used in counter keys (``|``, ``;``) or whitespace: a scope name
# must survive being spliced into a key in every store without escaping.
_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/+-]{0,127}$")
MAX_CHAIN = 8

__all__ = ["MAX_CHAIN", "WINDOWS", "Window", "check_chain", "check_scope", "check_window", "counter_name", "window_id"]


def check_scope(name: object) -> str:
    """``name`` if it is a valid scope name (1-128 of ``A-Z a-z 0-9 _ . : @ / + -``, starting alphanumeric).

    >>> check_scope("user:42")
    'user:42'
    """
    if not isinstance(name, str) or not _SCOPE_RE.match(name):
        raise SpendRequestError(
            f"bad scope name {name!r}: use 1-128 characters from A-Z a-z 0-9 _ . : @ / + -, starting alphanumeric"
        )
    return name


def check_window(window: object) -> Window:
    """``window`` if it is ``total``, ``daily`` or ``monthly``.

    >>> check_window("daily")
    'daily'
    """
    if window not in WINDOWS:
        raise SpendRequestError(f"unknown window {window!r}; expected one of {', '.join(WINDOWS)}")
    return window  # type: ignore[return-value]


def check_chain(chain: Sequence[str]) -> tuple[str, ...]:
    """A validated scope chain: 1 to 8 distinct scope names, outermost first."""
    if isinstance(chain, str):
        raise SpendRequestError(f"scopes must be a list of scope names, not the string {chain!r}")
    names = tuple(chain)
    if all(type(name) is str for name in names):
        return _checked(names)  # a gateway checks its keys' few chains several times per request
    return _checked.__wrapped__(names)


@functools.lru_cache(maxsize=4096)
def _checked(chain: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(check_scope(name) for name in chain)
    if not names:
        raise SpendRequestError("a reservation needs at least one scope")
    if len(names) > MAX_CHAIN:
        raise SpendRequestError(f"a scope chain has at most {MAX_CHAIN} scopes, got {len(names)}")
    if len(set(names)) != len(names):
        raise SpendRequestError(f"scope chain {list(names)} names a scope twice")
    return names


def window_id(window: str, now: float) -> str:
    """The id of the window that contains the UTC instant ``now`` (seconds since the epoch).

    The Redis ledger computes the same ids inside its Lua scripts from the server clock; both are tested
    to agree.

    >>> window_id("daily", 1_767_225_599), window_id("daily", 1_767_225_600)
    ('d2025-12-31', 'd2026-01-01')
    """
    check_window(window)
    if window == "total":
        return "total"
    daily, monthly = _day_ids(int(now // 86400))
    return daily if window == "daily" else monthly


@functools.lru_cache(maxsize=64)
def _day_ids(day_number: int) -> tuple[str, str]:
    """The daily and monthly ids of one UTC day (cached: every reserve asks for them)."""
    day = datetime.fromtimestamp(day_number * 86400, UTC)
    return f"d{day:%Y-%m-%d}", f"m{day:%Y-%m}"


def counter_name(scope: str, window: str, wid: str) -> str:
    """The one-string name of a counter, as both stores spell it.

    >>> counter_name("user:42", "daily", "d2026-01-01")
    'user:42|daily|d2026-01-01'
    """
    return f"{scope}|{window}|{wid}"
