"""Reading a Redis ledger's URL before any client sees it: a bad one is a typed error, never a guess.

redis-py reads ``redis://host:6379/abc`` as database 0 and lets a bad port escape as a bare
``ValueError`` (``:99999``, ``:abc``, ``[::1``); a spend ledger must not quietly count in another database,
so :func:`parse_redis_url` checks every part first and names the part that is wrong.

Accepted forms: ``redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]`` and ``rediss://...`` (TLS), with ``PORT``
1-65535 (6379 when left out) and ``DB`` a non-negative integer (0 when left out, or given as ``?db=N``), and
``unix://[USER[:PASSWORD]@]/PATH/TO/SOCKET[?db=N]``. Other query options go to redis-py as they are.

>>> u = parse_redis_url("redis://127.0.0.1:6380/2")
>>> (u.scheme, u.host, u.port, u.db)
('redis', '127.0.0.1', 6380, 2)
>>> parse_redis_url("redis://127.0.0.1:6379/abc")
Traceback (most recent call last):
...
litm.errors.SpendRequestError: Redis URL 'redis://127.0.0.1:6379/abc': database 'abc' is not a non-negative integer
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, unquote, urlsplit

from litm.errors import SpendRequestError

__all__ = ["MAX_DB", "REDIS_SCHEMES", "RedisURL", "parse_redis_url"]

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: The largest database number accepted (Redis' ``databases`` setting is a C int).
MAX_DB = 2**31 - 1
_DIGITS = re.compile(r"[0-9]{1,10}")
# A DNS name or an IPv4 address (letters, digits, '.', '-', '_'), or an IPv6 address (hex digits, ':', '.').
_HOST = re.compile(r"[a-z0-9._-]{1,253}|[0-9a-f:.]{2,45}")


@dataclass(frozen=True)
class RedisURL:
    """The parts of a Redis ledger URL. ``host`` and ``port`` are empty / 0 for a ``unix://`` socket,
    whose file is ``path``. The password is kept out of ``repr`` (and so out of error messages)."""

    scheme: str
    host: str
    port: int
    db: int
    path: str = ""
    username: str = ""
    password: str = field(default="", repr=False)

    @property
    def url(self) -> str:
        """The canonical URL of these parts (``parse_redis_url(u.url) == u``)."""
        auth = ""
        if self.username or self.password:
            auth = quote(self.username, safe="") + (":" + quote(self.password, safe="") if self.password else "") + "@"
        if self.scheme == "unix":
            return f"unix://{auth}{quote(self.path, safe='/')}?db={self.db}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{auth}{host}:{self.port}/{self.db}"


def _bad(url: str, why: str) -> SpendRequestError:
    shown = url if len(url) <= 80 else url[:77] + "..."
    return SpendRequestError(f"Redis URL {shown!r}: {why}")


def _db(url: str, text: str, where: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) > MAX_DB:
        raise _bad(url, f"{where} {text!r} is not a non-negative integer" if not _DIGITS.fullmatch(text)
                   else f"{where} {text} is above {MAX_DB}")  # fmt: skip
    return int(text)


def parse_redis_url(url: object) -> RedisURL:
    """The parts of a ``redis://``, ``rediss://`` or ``unix://`` URL, or :class:`SpendRequestError`
    naming what is wrong (scheme, host, port, database, a stray fragment).

    >>> parse_redis_url("unix:///run/redis.sock?db=3").path
    '/run/redis.sock'
    """
    if not isinstance(url, str):
        raise SpendRequestError(f"a Redis URL must be a string, got {type(url).__name__}")
    if not url.startswith(REDIS_SCHEMES):
        raise _bad(url, "must start with redis://, rediss:// or unix://")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise _bad(url, "contains whitespace or a control character")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # '[::1', ':abc', ':99999'
        raise _bad(url, f"bad host or port ({exc})") from None
    if parts.fragment:
        raise _bad(url, f"unexpected fragment '#{parts.fragment}'")
    try:
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise _bad(url, f"bad query string ({exc})") from None
    if any(len(values) > 1 for values in query.values()):
        raise _bad(url, "a query option is given twice")
    query_db = query.get("db", [None])[0]
    username, password = unquote(parts.username or ""), unquote(parts.password or "")
    if parts.scheme == "unix":
        if parts.netloc.rpartition("@")[2] or not parts.path or parts.path == "/":
            raise _bad(url, "a unix:// URL names a socket file: unix:///path/to/redis.sock")
        db = _db(url, query_db, "database") if query_db is not None else 0
        return RedisURL("unix", "", 0, db, unquote(parts.path), username, password)
    host = parts.hostname or ""
    if not host:
        raise _bad(url, "no host (write redis://HOST:PORT/DB)")
    if not _HOST.fullmatch(host):
        raise _bad(url, f"bad host {host!r}")
    if port == 0:
        raise _bad(url, "port 0 is not a port (1-65535)")
    path = parts.path.removeprefix("/")
    if path and query_db is not None:
        raise _bad(url, "the database is given twice (in the path and as ?db=)")
    if "/" in path:
        raise _bad(url, f"database {path!r} is not a non-negative integer")
    db = _db(url, path, "database") if path else _db(url, query_db, "database") if query_db is not None else 0
    return RedisURL(parts.scheme, host, port or 6379, db, "", username, password)
