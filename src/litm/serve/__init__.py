"""``litm serve``: the token gate and the spend cap as an OpenAI- and Anthropic-compatible HTTP gateway.

Any client that talks to a model by base URL (any language, any agent framework) points at the gateway
with a litm virtual key; before anything is sent upstream the gateway counts the request with the model's
tokenizer, refuses what exceeds the model's context, and reserves the worst-case cost on every scope of the
key's chain (402 when it does not fit). See ``docs/serve.md``.

The web parts (Starlette, uvicorn, aiohttp) are the ``serve`` extra and load only with :func:`create_app`
and :func:`serve`; configuration and keys need nothing beyond litm.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> cfg = config_from_mapping({"ledger": {"url": os.path.join(d, "spend.db")},
...                            "keys": {"store": os.path.join(d, "keys.db")}}, env={})
>>> plain, key = create_key(cfg, name="alice", limit="5", window="daily", scopes=["team:a"])
>>> key.chain == ("team:a", f"key:{key.id}")
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from litm.errors import GatewayConfigError, VirtualKeyError
from litm.serve._admin import create_key, list_keys, revoke_key, rotate_key
from litm.serve._config import GatewayConfig, config_from_mapping, load_config
from litm.serve._keys import VirtualKey
from litm.serve._run import serve

if TYPE_CHECKING:
    from starlette.applications import Starlette

# The sections of a GatewayConfig (server, ledger, keys, upstreams, models) are reached as its attributes;
# the key store is the gateway's own: both stay in the implementation modules.
__all__ = [
    "GatewayConfig",
    "GatewayConfigError",
    "VirtualKey",
    "VirtualKeyError",
    "config_from_mapping",
    "create_app",
    "create_key",
    "list_keys",
    "load_config",
    "revoke_key",
    "rotate_key",
    "serve",
]


def create_app(config: GatewayConfig) -> Starlette:
    """The gateway as an ASGI app (Starlette) for ``config``; run it with any ASGI server."""
    from litm.serve._app import create_app as build

    return build(config)
