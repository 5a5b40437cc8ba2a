"""The gateway's configuration: one TOML file, every option also an environment variable.

An option at TOML path ``section.name`` (or ``upstreams.NAME.option``, ``models.NAME.option``) can be set or
overridden by the variable ``LITM_SERVE__`` + the path's segments upper-cased and joined by ``__``, with every
character that is not a letter or a digit written ``_``: ``LITM_SERVE__SERVER__PORT=9000``,
``LITM_SERVE__UPSTREAMS__OPENAI__BASE_URL=...``, ``LITM_SERVE__MODELS__GPT_4O_MINI__MAX_INPUT_TOKENS=64000``.
A variable whose table is not in the file creates it, named by the segment in lower case. Values are parsed
by the option's type; anything unknown or malformed is refused with :class:`~litm.errors.GatewayConfigError`
(a typo is never ignored). Relative file paths are relative to the configuration file.

>>> cfg = config_from_mapping({"upstreams": {"oai": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}},
...                            "models": {"gpt-4o-mini": {"upstream": "oai", "max_input_tokens": 1000}}}, env={})
>>> cfg.models["gpt-4o-mini"].upstream, cfg.upstreams["oai"].provider, cfg.server.port
('oai', 'openai', 8080)
>>> config_from_mapping({"server": {"prot": 1}}, env={})
Traceback (most recent call last):
...
litm.errors.GatewayConfigError: unknown option server.prot (expected one of: ...)
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar, get_args

from litm.errors import GatewayConfigError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

D = TypeVar("D", bound="DataclassInstance")

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "GatewayConfig",
    "KeyOptions",
    "LedgerOptions",
    "ModelRoute",
    "ServerOptions",
    "Upstream",
    "UpstreamKind",
    "config_from_mapping",
    "load_config",
]

ENV_PREFIX = "LITM_SERVE__"
#: The variable naming the file each worker process reads (``litm serve`` sets it).
CONFIG_ENV = "LITM_SERVE_CONFIG"
UpstreamKind = Literal["openai", "anthropic", "openai-compatible"]
KINDS: tuple[str, ...] = get_args(UpstreamKind)
#: The price table's provider for each kind of upstream (an OpenAI-compatible server has none: price it).
_PRICE_PROVIDER = {"openai": "openai", "anthropic": "anthropic", "openai-compatible": None}


@dataclass(frozen=True)
class ServerOptions:
    """``[server]``: where the gateway listens and how it treats requests. ``admin_key_env`` names the
    variable holding the admin key (``/metrics``); without it those routes are off."""

    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    max_body_bytes: int = 4 * 1024 * 1024
    log_level: str = "info"
    access_log: bool = True
    graceful_timeout_s: float = 30.0
    #: How long an idle client connection stays open. Longer than the pools of common clients keep one (httpx,
    #: and so the OpenAI and Anthropic SDKs: 5 s; aiohttp: 15 s): at uvicorn's 5 s a client reusing a connection
    #: just as the server closes it gets a dropped request, not an answer. 75 s is nginx's and gunicorn's default.
    keep_alive_s: float = 75.0
    admin_key_env: str = ""
    #: uvicorn's HTTP parser and event loop: ``auto`` takes httptools and uvloop (the ``serve`` extra installs
    #: both; they cut the added latency, docs/results/gateway-latency), ``h11`` / ``asyncio`` the pure-Python ones.
    http: str = "auto"
    loop: str = "auto"

    def admin_key(self) -> str:
        """The admin key (``/metrics``), from the variable ``admin_key_env``; '' when none is configured."""
        if not self.admin_key_env:
            return ""
        value = os.environ.get(self.admin_key_env, "")
        if len(value) < 16:
            raise GatewayConfigError(f"server.admin_key_env: {self.admin_key_env} must hold a key of 16+ characters")
        return value


_HTTP = ("auto", "httptools", "h11")
_LOOPS = ("auto", "uvloop", "asyncio")


@dataclass(frozen=True)
class LedgerOptions:
    """``[ledger]``: the spend ledger (an SQLite file, or a ``redis://`` URL shared by several gateways).

    ``synchronous`` (SQLite only): ``FULL`` makes a committed reserve survive power loss (an fsync per
    operation); ``NORMAL`` survives a crash of the process, not of the host, and costs no fsync.
    ``socket_timeout_s`` (Redis only): the longest wait for one reply; a server that does not answer refuses
    the request after up to twice this.
    """

    url: str = "spend.db"
    namespace: str = "default"
    lease_s: float = 900.0
    synchronous: str = "FULL"
    socket_timeout_s: float = 2.0


@dataclass(frozen=True)
class KeyOptions:
    """``[keys]``: the virtual key store, holding only hashes: an SQLite file, or a ``redis://`` URL that
    gateways on several machines share (``namespace`` names its keys there)."""

    store: str = "keys.db"
    namespace: str = "default"
    socket_timeout_s: float = 2.0  # Redis only: the longest wait for a key's lookup (then 503)


@dataclass(frozen=True)
class Upstream:
    """``[upstreams.NAME]``: one provider endpoint; the only hosts the gateway ever calls.

    ``base_url`` as the provider's SDK takes it: ``https://api.openai.com/v1`` (OpenAI and compatible
    servers: paths ``/chat/completions``, ``/responses`` are appended), ``https://api.anthropic.com``
    (``/v1/messages`` appended). The secret comes from the variable ``api_key_env`` or the file
    ``api_key_file``, never from the client and never from this file.
    """

    name: str
    kind: UpstreamKind = "openai"
    base_url: str = ""
    api_key_env: str = ""
    api_key_file: str = ""
    provider: str = ""
    timeout_s: float = 600.0
    connect_timeout_s: float = 10.0
    max_connections: int = 100

    def api_key(self) -> str:
        """The provider secret ('' when the upstream needs none, e.g. a local llama.cpp server)."""
        if self.api_key_file:
            try:
                return Path(self.api_key_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise GatewayConfigError(f"upstream {self.name!r}: cannot read api_key_file ({exc.strerror})") from None
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "")
            if not value:
                raise GatewayConfigError(f"upstream {self.name!r}: environment variable {self.api_key_env} is not set")
            return value
        return ""


@dataclass(frozen=True)
class ModelRoute:
    """``[models.NAME]``: a model clients may name, the upstream that serves it and its limits.

    ``upstream_model``: the name sent upstream (default: NAME). ``max_input_tokens``: the most prompt tokens
    (the count's upper bound) a request may carry. ``profile``: a position profile exported by ``litm probe``
    whose measured ``recommended_max_input_tokens`` becomes the limit (capped by ``max_input_tokens`` when
    both are set), so a re-measured effective length applies to every client at the next start.
    ``tokenizer``: a litm tokenizer spec (``openai:gpt-4o``); default: the model's own for OpenAI, the
    Anthropic estimate for Anthropic, the script-aware estimate otherwise. ``price``: USD per million tokens
    (``{input = "0.15", output = "0.60"}``), required where the shipped price table does not know the model.
    """

    name: str
    upstream: str = ""
    upstream_model: str = ""
    max_input_tokens: int = 0
    profile: str = ""
    tokenizer: str = ""
    price: Mapping[str, object] = field(default_factory=dict)

    @property
    def sent_name(self) -> str:
        return self.upstream_model or self.name


@dataclass(frozen=True)
class GatewayConfig:
    """The whole configuration; ``path`` is the file it came from (None when built from a mapping).

    Its sections are attributes: ``server`` (``ServerOptions``: host, port, workers, limits, logging),
    ``ledger`` (``LedgerOptions``: the spend ledger's URL), ``keys`` (``KeyOptions``: the key store),
    ``upstreams`` (``Upstream`` by name: base URL, kind, secret) and ``models`` (``ModelRoute`` by the name
    clients send: upstream, context limit, tokenizer, price). See ``docs/serve.md`` for every option.
    """

    server: ServerOptions
    ledger: LedgerOptions
    keys: KeyOptions
    upstreams: Mapping[str, Upstream]
    models: Mapping[str, ModelRoute]
    path: Path | None = None

    def route(self, model: str) -> ModelRoute | None:
        """The route of a model name clients send, or None."""
        return self.models.get(model)

    def prices(self) -> dict[str, Mapping[str, object]]:
        """User prices of the configured models, keyed by the name sent upstream (the name a reservation
        is priced by)."""
        return {m.sent_name: m.price for m in self.models.values() if m.price}


_SECTIONS: dict[str, type] = {"server": ServerOptions, "ledger": LedgerOptions, "keys": KeyOptions}
_TABLES: dict[str, type] = {"upstreams": Upstream, "models": ModelRoute}


class _FromEnv(str):
    """A value read from the environment: text to parse by the option's type (a TOML value must already
    have that type: ``port = "80"`` in the file is refused, never coerced)."""

    __slots__ = ()


def _env_name(segment: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", segment).upper()


def _overlay_env(raw: dict[str, object], env: Mapping[str, str]) -> None:
    """Write every ``LITM_SERVE__*`` variable into ``raw`` at its path (strings; typed later)."""
    for var in sorted(env):
        if not var.startswith(ENV_PREFIX):
            continue
        parts = var[len(ENV_PREFIX) :].split("__")
        if any(not p for p in parts) or len(parts) < 2:
            raise GatewayConfigError(f"environment variable {var}: expected {ENV_PREFIX}SECTION__OPTION")
        node = raw
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            match = next((k for k in node if _env_name(k) == part.upper()), None)
            key = match if match is not None else part.lower()
            if last:
                node[key] = _FromEnv(env[var])
            else:
                child = node.setdefault(key, {})
                if not isinstance(child, dict):
                    raise GatewayConfigError(f"environment variable {var}: {key!r} is not a table")
                node = child


def _typed(where: str, value: object, kind: object) -> object:
    """``value`` as ``kind`` (a str from the environment is parsed; a TOML value must already match)."""
    if kind in ("int", int):
        if isinstance(value, _FromEnv):
            try:
                value = int(value)
            except ValueError:
                raise GatewayConfigError(f"{where}: expected an integer, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise GatewayConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if kind in ("float", float):
        if isinstance(value, _FromEnv):
            try:
                value = float(value)
            except ValueError:
                raise GatewayConfigError(f"{where}: expected a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GatewayConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if kind in ("bool", bool):
        if isinstance(value, _FromEnv) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.lower() in ("true", "1", "yes")
        if not isinstance(value, bool):
            raise GatewayConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if "Mapping" in str(kind):
        if not isinstance(value, dict):
            raise GatewayConfigError(f"{where}: expected a table, got {value!r}")
        return {k: str(v) if isinstance(v, _FromEnv) else v for k, v in value.items()}
    if not isinstance(value, str):
        raise GatewayConfigError(f"{where}: expected a string, got {value!r}")
    return str(value)


def _build(cls: type[D], where: str, raw: object, **fixed: object) -> D:
    if not isinstance(raw, dict):
        raise GatewayConfigError(f"{where}: expected a table, got {raw!r}")
    known = {f.name: f.type for f in fields(cls) if f.name not in fixed}
    values: dict[str, object] = dict(fixed)
    for name, value in raw.items():
        if name not in known:
            raise GatewayConfigError(f"unknown option {where}.{name} (expected one of: {', '.join(sorted(known))})")
        values[name] = _typed(f"{where}.{name}", value, known[name])
    return cls(**values)


def _resolve(base: Path | None, path: str) -> str:
    if base is None or not path or "://" in path or Path(path).is_absolute():
        return path
    return str(base / path)


def config_from_mapping(raw: Mapping[str, object], *, env: Mapping[str, str] | None = None,
                        path: Path | None = None) -> GatewayConfig:  # fmt: skip
    """A checked :class:`GatewayConfig` from a parsed TOML document, overlaid with ``env`` (default
    ``os.environ``)."""
    doc: dict[str, object] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in raw.items()}
    for table in _TABLES:
        rows = doc.get(table)
        if isinstance(rows, dict):
            doc[table] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in rows.items()}
    _overlay_env(doc, os.environ if env is None else env)
    unknown = set(doc) - set(_SECTIONS) - set(_TABLES)
    if unknown:
        expected = "server, ledger, keys, upstreams, models"
        raise GatewayConfigError(f"unknown section(s) {sorted(unknown)} (expected: {expected})")
    base = path.parent if path is not None else None
    server: ServerOptions = _build(ServerOptions, "server", doc.get("server", {}))
    ledger: LedgerOptions = _build(LedgerOptions, "ledger", doc.get("ledger", {}))
    keys: KeyOptions = _build(KeyOptions, "keys", doc.get("keys", {}))
    ledger = dataclasses.replace(ledger, url=_resolve(base, ledger.url))
    keys = dataclasses.replace(keys, store=_resolve(base, keys.store))
    for where, timeout in (("ledger", ledger.socket_timeout_s), ("keys", keys.socket_timeout_s)):
        if not 0 < timeout <= 3600:
            raise GatewayConfigError(f"{where}.socket_timeout_s must be more than 0 and at most 3600, got {timeout}")
    if not 1 <= server.port <= 65535 or server.workers < 1 or server.max_body_bytes < 1:
        raise GatewayConfigError("server: port must be 1-65535, workers >= 1, max_body_bytes >= 1")
    for what, value, allowed in (("http", server.http, _HTTP), ("loop", server.loop, _LOOPS)):
        if value not in allowed:
            raise GatewayConfigError(f"server.{what}: expected one of {', '.join(allowed)}, got {value!r}")
    if not 1 <= server.keep_alive_s <= 3600:
        raise GatewayConfigError(f"server.keep_alive_s must be 1 to 3600 seconds, got {server.keep_alive_s}")
    if not 0 <= server.graceful_timeout_s <= 86400:
        grace = server.graceful_timeout_s
        raise GatewayConfigError(f"server.graceful_timeout_s must be 0 to 86400 seconds, got {grace}")
    upstreams: dict[str, Upstream] = {}
    for name, body in _table(doc, "upstreams").items():
        up: Upstream = _build(Upstream, f"upstreams.{name}", body, name=name)
        if up.kind not in KINDS:
            raise GatewayConfigError(f"upstreams.{name}.kind: expected one of {', '.join(KINDS)}, got {up.kind!r}")
        if not re.match(r"^https?://[^/\s]+", up.base_url):
            raise GatewayConfigError(f"upstreams.{name}.base_url: expected an http(s) URL, got {up.base_url!r}")
        provider = up.provider or _PRICE_PROVIDER[up.kind] or ""
        upstreams[name] = Upstream(**{**up.__dict__, "base_url": up.base_url.rstrip("/"), "provider": provider,
                                      "api_key_file": _resolve(base, up.api_key_file)})  # fmt: skip
    models: dict[str, ModelRoute] = {}
    for name, body in _table(doc, "models").items():
        route: ModelRoute = _build(ModelRoute, f"models.{name}", body, name=name)
        if route.upstream not in upstreams:
            raise GatewayConfigError(f"models.{name}.upstream: {route.upstream!r} is not a configured upstream "
                                     f"(configured: {', '.join(sorted(upstreams)) or 'none'})")  # fmt: skip
        if route.max_input_tokens < 0:
            raise GatewayConfigError(f"models.{name}.max_input_tokens must be >= 0 (0: no limit of its own)")
        models[name] = ModelRoute(**{**route.__dict__, "profile": _resolve(base, route.profile)})
    return GatewayConfig(server, ledger, keys, upstreams, models, path)


def _table(doc: Mapping[str, object], name: str) -> dict[str, object]:
    value = doc.get(name, {})
    if not isinstance(value, dict):
        raise GatewayConfigError(f"{name}: expected a table of tables, got {value!r}")
    return value


def load_config(path: str | Path | None, *, env: Mapping[str, str] | None = None) -> GatewayConfig:
    """Read the TOML file at ``path`` (None: environment variables only) and check it."""
    if path is None:
        return config_from_mapping({}, env=env)
    file = Path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GatewayConfigError(f"cannot read gateway config {str(file)!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GatewayConfigError(f"gateway config {str(file)!r} is not valid TOML: {exc}") from None
    return config_from_mapping(raw, env=env, path=file.resolve())
