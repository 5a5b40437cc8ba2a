"""Key administration over a gateway's configuration: the key store and the ledger it names.

``create_key`` stores the key and sets its own scope's limit in the ledger in one call, so a new key is
never left without a budget (a scope without a limit refuses every call). The outer scopes of its chain
(``org:acme``, ``team:a``) keep the limits set with ``litm spend set-limit``.

>>> import os, tempfile
>>> from litm.serve._config import config_from_mapping
>>> d = tempfile.mkdtemp()
>>> cfg = config_from_mapping({"ledger": {"url": os.path.join(d, "spend.db")},
...                            "keys": {"store": os.path.join(d, "keys.db")}}, env={})
>>> plain, key = create_key(cfg, name="ci", limit="5", window="daily")
>>> plain.startswith("sk-litm-"), [k.name for k in list_keys(cfg)]
(True, ['ci'])
"""

from __future__ import annotations

from collections.abc import Sequence

from litm.serve._config import GatewayConfig
from litm.serve._keys import VirtualKey
from litm.serve._keystore import AnyKeyStore, open_key_store
from litm.spend import open_ledger, parse_usd
from litm.spend._reservation import Money
from litm.spend._scopes import Window, check_window

__all__ = ["create_key", "list_keys", "revoke_key", "rotate_key"]


def _store(config: GatewayConfig) -> AnyKeyStore:
    return open_key_store(config.keys.store, namespace=config.keys.namespace)


def create_key(config: GatewayConfig, *, name: str, limit: Money, window: Window = "total",
               scopes: Sequence[str] = (), models: Sequence[str] = ("*",),
               default_max_tokens: int | None = None, compact: bool = False) -> tuple[str, VirtualKey]:  # fmt: skip
    """A new virtual key whose own scope may spend ``limit`` dollars per ``window``; returns the plain key
    (shown once) and its record. ``compact``: compact a conversation over the model's limit instead of
    refusing it."""
    micros = parse_usd(limit, what="limit")
    check_window(window)
    # The ledger first: one that cannot be opened leaves no key behind (a key without its limit would
    # refuse every call).
    ledger = open_ledger(config.ledger.url, namespace=config.ledger.namespace)
    try:
        plain, key = _store(config).create(
            name=name, scopes=scopes, models=models, default_max_tokens=default_max_tokens, compact=compact
        )
        ledger.set_limit(key.scope, window, micros)
    finally:
        ledger.close()
    return plain, key


def list_keys(config: GatewayConfig) -> list[VirtualKey]:
    """Every key of the store (revoked ones too); never creates the store."""
    return _store(config).list()


def revoke_key(config: GatewayConfig, key_id: str) -> VirtualKey:
    """Revoke a key: its next request is refused (401)."""
    return _store(config).revoke(key_id)


def rotate_key(config: GatewayConfig, key_id: str) -> tuple[str, VirtualKey]:
    """A new secret for a key (same id, scope and budget); returns the new plain key, shown once."""
    return _store(config).rotate(key_id)
