"""What ``litm models`` lists: the embedded models and where they live, the remote backends and whether their SDK
and key are there, and plugin backends. Reads the environment and the cache folder; loads and sends nothing."""

from __future__ import annotations

import importlib.util
import os
from typing import TypedDict

from litm.models._embedded import EMBEDDED, cache_dir
from litm.models._spec import backends

__all__ = ["ModelsInfo", "models_info"]

#: The built-in remote backends: scheme, spec form, the SDK package it needs, the key's variable.
_REMOTE = (
    ("openai", "openai:MODEL", "openai", "OPENAI_API_KEY"),
    ("openai-compatible", "openai-compatible:http://HOST:PORT/v1@MODEL", "openai", None),
    ("anthropic", "anthropic:MODEL", "anthropic", "ANTHROPIC_API_KEY"),
)


class EmbeddedInfo(TypedDict):
    spec: str
    alias: str
    available: bool
    where: str
    description: str


class RemoteInfo(TypedDict):
    scheme: str
    spec: str
    sdk_installed: bool
    key_variable: str | None
    key_set: bool


class ModelsInfo(TypedDict):
    """The listing (``litm models --json`` prints it as is)."""

    cache_dir: str
    embedded: list[EmbeddedInfo]
    local_files: str
    remote: list[RemoteInfo]
    plugins: list[str]


def models_info() -> ModelsInfo:
    """The models litm can use, where the embedded ones live and what each remote backend still needs.

    >>> info = models_info()
    >>> [r["scheme"] for r in info["remote"]]
    ['openai', 'openai-compatible', 'anthropic']
    """
    embedded: list[EmbeddedInfo] = []
    for model in EMBEDDED.values():
        available, where = model.status()
        embedded.append({"spec": model.spec, "alias": model.alias, "available": available, "where": where,
                         "description": model.description})  # fmt: skip
    remote: list[RemoteInfo] = [
        {"scheme": scheme, "spec": form, "sdk_installed": importlib.util.find_spec(package) is not None,
         "key_variable": key_var, "key_set": bool(key_var and os.environ.get(key_var))}
        for scheme, form, package, key_var in _REMOTE
    ]  # fmt: skip
    builtin = {"local", *(r[0] for r in _REMOTE)}
    return {
        "cache_dir": str(cache_dir()),
        "embedded": embedded,
        "local_files": "local:/path/model.gguf",
        "remote": remote,
        "plugins": [s for s in backends() if s not in builtin],
    }
