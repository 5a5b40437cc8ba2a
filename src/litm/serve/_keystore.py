"""Which key store a configuration names: an SQLite file (one host) or a Redis URL (several gateways).

>>> import os, tempfile
>>> open_key_store(os.path.join(tempfile.mkdtemp(), "keys.db"))  # doctest: +ELLIPSIS
<litm.serve._keys.KeyStore object at ...>
"""

from __future__ import annotations

from litm.serve._keys import KeyStore
from litm.serve._keys_redis import RedisKeyStore

__all__ = ["AnyKeyStore", "open_key_store"]

#: Either store: the same methods (create, rotate, revoke, get, list, authenticate, aauthenticate, close, aclose).
AnyKeyStore = KeyStore | RedisKeyStore


def open_key_store(spec: str, *, namespace: str = "default", socket_timeout_s: float = 2.0) -> AnyKeyStore:
    """The key store of ``spec``: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or an SQLite file path."""
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisKeyStore(spec, namespace=namespace, socket_timeout_s=socket_timeout_s)
    return KeyStore(spec)
