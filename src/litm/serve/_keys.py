"""Virtual keys: what a client presents to the gateway instead of a provider secret.

A key reads ``sk-litm-<id>-<secret>``: ``id`` (12 hex digits) finds its row, ``secret`` (32 random bytes,
URL-safe) is never stored: the store keeps ``sha256(id:secret)`` and compares it in constant time. The
plain key is returned once, by :meth:`KeyStore.create` (and :meth:`KeyStore.rotate`). A key maps to a scope
chain of :mod:`litm.spend` (outermost first; its own scope ``key:<id>`` is always the last), the models it
may call (``*``: every configured model) and its policies: with ``default_max_tokens`` a request that sets
no output limit is sent with that one, without it such a request is refused; with ``compact`` a conversation
over the model's input limit is compacted to fit (litm's history compaction) instead of refused.

Reading (``list``, ``authenticate``) never creates the store; only ``create`` does.

>>> import os, tempfile
>>> store = KeyStore(os.path.join(tempfile.mkdtemp(), "keys.db"))
>>> store.list()
[]
>>> plain, key = store.create(name="alice", scopes=["team:a"], models=["gpt-4o-mini"])
>>> key.chain, store.authenticate(plain).name, store.authenticate(plain + "x")
(('team:a', 'key:...'), 'alice', None)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.errors import SpendRequestError, VirtualKeyError
from litm.spend._scopes import check_chain

__all__ = ["DUMMY_DIGEST", "KEY_PREFIX", "KEY_RE", "KeyStore", "VirtualKey", "check_key_options", "digest"]

KEY_PREFIX = "sk-litm-"
KEY_RE = re.compile(r"^sk-litm-([0-9a-f]{12})-([A-Za-z0-9_-]{43})$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    models TEXT NOT NULL,
    default_max_tokens INTEGER,
    created REAL NOT NULL,
    revoked REAL,
    compact INTEGER NOT NULL DEFAULT 0
)
"""
# A fixed digest to compare against when the id is unknown, so an unknown id costs what a wrong secret does.
DUMMY_DIGEST = hashlib.sha256(b"litm-no-such-key").hexdigest()


def digest(key_id: str, secret: str) -> str:
    """What a store keeps of a key: the SHA-256 of ``id:secret`` (hex)."""
    return hashlib.sha256(f"{key_id}:{secret}".encode()).hexdigest()


#: The largest output limit a key may set as its default.
MAX_OUTPUT_TOKENS = 10_000_000


def check_key_options(name: object, scopes: Sequence[str], models: Sequence[str], default_max_tokens: object,
                      compact: object, key_id: str) -> None:  # fmt: skip
    """Refuse a key's options before anything is written (every store: SQLite and Redis)."""
    if not isinstance(name, str) or not name.strip():
        raise SpendRequestError("a key needs a non-empty name")
    for what, value in (("scopes", scopes), ("models", models)):
        if isinstance(value, str):
            raise SpendRequestError(f"{what} must be a list of names, not the string {value!r}")
    if not models or any(not isinstance(m, str) or not m for m in models):
        raise SpendRequestError(f"models must be model names (or '*'), got {list(models)!r}")
    # No model writes more than a few hundred thousand tokens; the cap keeps the value inside SQLite's integers.
    if default_max_tokens is not None and (
        isinstance(default_max_tokens, bool)
        or not isinstance(default_max_tokens, int)
        or not 1 <= default_max_tokens <= MAX_OUTPUT_TOKENS
    ):
        raise SpendRequestError(
            f"default_max_tokens must be an integer from 1 to {MAX_OUTPUT_TOKENS:,}, got {default_max_tokens!r}"
        )
    if not isinstance(compact, bool):
        raise SpendRequestError(f"compact must be true or false, got {compact!r}")
    check_chain([*scopes, f"key:{key_id}"])


@dataclass(frozen=True)
class VirtualKey:
    """A key's record (never its secret). ``chain`` is the scope chain its calls reserve on."""

    id: str
    name: str
    scopes: tuple[str, ...]
    models: tuple[str, ...]
    default_max_tokens: int | None
    created: float
    revoked: float | None
    compact: bool = False

    @property
    def scope(self) -> str:
        """The key's own scope, the last of its chain."""
        return f"key:{self.id}"

    @property
    def chain(self) -> tuple[str, ...]:
        return (*self.scopes, self.scope)

    @property
    def prefix(self) -> str:
        """What may be shown of the key: its id, not its secret."""
        return f"{KEY_PREFIX}{self.id}-..."

    def may_call(self, model: str) -> bool:
        return "*" in self.models or model in self.models


class KeyStore:
    """The virtual keys in one SQLite file (WAL; safe to share between gateway workers and the CLI)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()

    # -- connections: read-only unless writing, so that a read never creates the file -------------------

    def _reader(self) -> sqlite3.Connection | None:
        conn: sqlite3.Connection | None = getattr(self._local, "reader", None)
        if conn is None:
            if not self.path.exists():
                return None
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
                conn.execute("SELECT 1 FROM keys LIMIT 1")
            except sqlite3.Error as exc:
                raise VirtualKeyError(f"key store {str(self.path)!r} cannot be read: {exc}") from None
            self._local.reader = conn
        return conn

    def _writer(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise VirtualKeyError(f"key store {str(self.path)!r} cannot be written: {exc}") from None
        return conn

    @staticmethod
    def _row(row: tuple[object, ...]) -> VirtualKey:
        kid, name, scopes, models, default, created, revoked, compact = row
        return VirtualKey(str(kid), str(name), tuple(json.loads(str(scopes))), tuple(json.loads(str(models))),
                          None if default is None else int(str(default)), float(str(created)),
                          None if revoked is None else float(str(revoked)), bool(compact))  # fmt: skip

    _COLUMNS = "id, name, scopes, models, default_max_tokens, created, revoked, compact"

    # -- writing -----------------------------------------------------------------------------------------

    def create(self, *, name: str, scopes: Sequence[str] = (), models: Sequence[str] = ("*",),
               default_max_tokens: int | None = None, compact: bool = False) -> tuple[str, VirtualKey]:  # fmt: skip
        """A new key: returns ``(plain key, record)``. The plain key is not stored and cannot be shown again."""
        kid, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        check_key_options(name, scopes, models, default_max_tokens, compact, kid)
        outer = tuple(scopes)
        key = VirtualKey(kid, name.strip(), outer, tuple(models), default_max_tokens, time.time(), None, compact)
        conn = self._writer()
        try:
            conn.execute(f"INSERT INTO keys ({self._COLUMNS}, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (kid, key.name, json.dumps(outer), json.dumps(list(models)), default_max_tokens,
                          key.created, None, int(compact), digest(kid, secret)))  # fmt: skip
        finally:
            conn.close()
        return f"{KEY_PREFIX}{kid}-{secret}", key

    def rotate(self, key_id: str) -> tuple[str, VirtualKey]:
        """A new secret for key ``key_id`` (same id, scopes and budget); the old secret stops working."""
        if not self.path.exists():  # nothing to rotate, and a failed command creates nothing
            raise VirtualKeyError(f"no active key with id {key_id!r} (no key store at {str(self.path)!r})")
        secret = secrets.token_urlsafe(32)
        conn = self._writer()
        try:
            done = conn.execute("UPDATE keys SET hash = ? WHERE id = ? AND revoked IS NULL",
                                (digest(key_id, secret), key_id)).rowcount  # fmt: skip
        finally:
            conn.close()
        if not done:
            raise VirtualKeyError(f"no active key with id {key_id!r}")
        return f"{KEY_PREFIX}{key_id}-{secret}", self.get(key_id)

    def revoke(self, key_id: str) -> VirtualKey:
        """Revoke key ``key_id``: every later request with it is refused (401)."""
        if not self.path.exists():
            raise VirtualKeyError(f"no key with id {key_id!r} (no key store at {str(self.path)!r})")
        conn = self._writer()
        try:
            conn.execute("UPDATE keys SET revoked = ? WHERE id = ? AND revoked IS NULL", (time.time(), key_id))
        finally:
            conn.close()
        return self.get(key_id)

    # -- reading -----------------------------------------------------------------------------------------

    def get(self, key_id: str) -> VirtualKey:
        """The record of key ``key_id``."""
        conn = self._reader()
        row = None if conn is None else conn.execute(f"SELECT {self._COLUMNS} FROM keys WHERE id = ?",
                                                     (key_id,)).fetchone()  # fmt: skip
        if row is None:
            raise VirtualKeyError(f"no key with id {key_id!r}")
        return self._row(row)

    def list(self) -> list[VirtualKey]:
        """Every key, oldest first (revoked ones too)."""
        conn = self._reader()
        if conn is None:
            return []
        return [self._row(r) for r in conn.execute(f"SELECT {self._COLUMNS} FROM keys ORDER BY created, id")]

    def authenticate(self, presented: str | None) -> VirtualKey | None:
        """The active key ``presented`` is, or None (malformed, unknown, wrong secret, revoked)."""
        match = KEY_RE.match(presented or "")
        conn = self._reader()
        if match is None or conn is None:
            hmac.compare_digest(DUMMY_DIGEST, DUMMY_DIGEST)
            return None
        kid, secret = match.groups()
        row = conn.execute(f"SELECT {self._COLUMNS}, hash FROM keys WHERE id = ?", (kid,)).fetchone()
        stored = str(row[-1]) if row is not None else DUMMY_DIGEST
        if not hmac.compare_digest(stored, digest(kid, secret)) or row is None:
            return None
        key = self._row(row[:-1])
        return None if key.revoked is not None else key

    async def aauthenticate(self, presented: str | None) -> VirtualKey | None:
        """:meth:`authenticate` for an event loop. It runs inline: one indexed read of a local WAL file, which
        a writer never blocks, costs less than the hop to a thread would."""
        return self.authenticate(presented)

    async def aclose(self) -> None:
        """Nothing to close on the event loop (the same interface as the Redis store)."""

    def close(self) -> None:
        conn = getattr(self._local, "reader", None)
        if conn is not None:
            conn.close()
            self._local.reader = None
