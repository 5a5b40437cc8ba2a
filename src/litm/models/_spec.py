"""Model spec strings, the same in Python, on the command line and in config files.

==========================================================  ===============================================
spec                                                        model
==========================================================  ===============================================
``local``                                                   the embedded default (Gemma 3 270M, offline)
``local:smollm2``, ``local:gemma3-270m``                    another embedded model, by alias
``local:/path/model.gguf``                                  any GGUF file (``~`` and relative paths work)
``openai:gpt-4o-mini``                                      OpenAI (key from ``OPENAI_API_KEY``)
``openai-compatible:http://127.0.0.1:8080/v1@model-name``   vLLM, llama.cpp server, Ollama, LM Studio, ...
``anthropic:claude-haiku-4-5``                              Anthropic (key from ``ANTHROPIC_API_KEY``)
==========================================================  ===============================================

More schemes can be added with :func:`register_backend`, or published by another package under the
entry-point group ``litm.backends`` (``scheme = "package.module:factory"``), loaded on first use::

    >>> parse_spec("openai-compatible:http://127.0.0.1:8080/v1@qwen2.5")
    ModelSpec(scheme='openai-compatible', target='qwen2.5', base_url='http://127.0.0.1:8080/v1')
    >>> parse_spec("local")
    ModelSpec(scheme='local', target='', base_url=None)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack
from urllib.parse import urlsplit

from litm.errors import UnknownModelSpecError, UnsupportedTypeError
from litm.models._anthropic_backend import AnthropicModel
from litm.models._base import Model
from litm.models._embedded import DEFAULT_ALIAS, EMBEDDED, resolve_alias
from litm.models._local import LocalModel
from litm.models._openai_backend import OpenAIModel
from litm.util._registry import Registry

if TYPE_CHECKING:
    import httpx

    from litm.models._local.kv_reuse import ReuseMode
    from litm.models.tokenizers._base import Tokenizer

SPEC_FORMS = (
    "local, local:ALIAS, local:/path/model.gguf, openai:MODEL, "
    "openai-compatible:http://HOST:PORT/v1@MODEL, anthropic:MODEL"
)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: ``scheme``, ``target`` (alias, path or model id) and, for servers, ``base_url``."""

    scheme: str
    target: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.scheme == "local" and not self.target:
            return "local"
        if self.base_url is not None:
            return f"{self.scheme}:{self.base_url}@{self.target}"
        return f"{self.scheme}:{self.target}"

    @property
    def is_path(self) -> bool:
        """True for ``local:`` specs that name a file rather than an embedded alias."""
        return self.scheme == "local" and bool(self.target) and self.target not in EMBEDDED


BackendFactory = Callable[..., Model]
"""``factory(spec: ModelSpec, **options) -> Model``."""

_SCHEME = re.compile(r"^[a-z][a-z0-9.+-]*$")
#: The entry-point group third-party backends are published under.
ENTRY_POINT_GROUP = "litm.backends"
_BACKENDS: Registry[BackendFactory] = Registry("backend", ENTRY_POINT_GROUP)


def register_backend(scheme: str, factory: BackendFactory, *, replace: bool = False) -> None:
    """Make ``scheme:...`` specs load through ``factory(spec, **options)``.

    Raises :class:`~litm.errors.AlreadyRegisteredError` when ``scheme`` is taken and ``replace`` is False.

    >>> register_backend("echo", lambda spec, **opts: EchoModel(spec.target))   # doctest: +SKIP
    >>> load_model("echo:hello")                                                 # doctest: +SKIP
    """
    if not isinstance(scheme, str) or not _SCHEME.match(scheme):
        raise UnknownModelSpecError(f"a backend scheme is lower-case letters, digits, '.', '+', '-': {scheme!r}")
    _BACKENDS.register(scheme, factory, replace=replace)


def unregister_backend(scheme: str) -> None:
    """Remove a registered scheme (missing ones are ignored)."""
    _BACKENDS.unregister(scheme)


def backends() -> list[str]:
    """Registered spec schemes, built-ins first, then plugins (what ``litm models`` lists).

    >>> {"local", "openai", "anthropic"} <= set(backends())
    True
    """
    return _BACKENDS.names()


def _looks_like_path(target: str) -> bool:
    return "/" in target or "\\" in target or target.startswith(("~", ".")) or target.lower().endswith(".gguf")


def _check_url(text: str, url: str) -> None:
    """Refuse a server URL whose port or host cannot be read (``:99999``, ``:abc``, ``[::1``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it is the check: urllib raises for a port it cannot parse
    except ValueError as exc:
        raise UnknownModelSpecError(f"{text!r}: the server URL {url!r} is malformed ({exc})") from None
    if not parts.hostname:
        raise UnknownModelSpecError(f"{text!r}: the server URL {url!r} names no host")


def parse_spec(spec: str) -> ModelSpec:
    """Parse a spec string; raises :class:`~litm.errors.UnknownModelSpecError` naming the accepted forms.

    Control characters (a newline, a NUL) and text that is not valid Unicode are refused, not carried into
    a request or a file name; so is a server URL whose port or host cannot be read.

    >>> parse_spec("openai-compatible:http://127.0.0.1:99999/v1@m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    litm.errors.UnknownModelSpecError: ...: the server URL ... is malformed (Port out of range 0-65535)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownModelSpecError(f"empty model spec; expected one of: {SPEC_FORMS}")
    text = spec.strip()
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise UnknownModelSpecError(f"model spec {text!a} holds the control or unpaired character {bad!a}")
    scheme, sep, target = text.partition(":")
    scheme = scheme.lower()
    if not sep and scheme != "local":
        raise UnknownModelSpecError(f"unknown model spec {text!r}; expected one of: {SPEC_FORMS}")
    if scheme not in backends():
        raise UnknownModelSpecError(
            f"unknown model backend {scheme!r} in {text!r}; registered: {', '.join(backends())}"
        )
    target = target.strip()
    if scheme == "local":
        if sep and not target:
            raise UnknownModelSpecError(f"{text!r} names no model; use 'local' or local:PATH/ALIAS")
        if target and target not in EMBEDDED and not _looks_like_path(target):
            raise UnknownModelSpecError(
                f"unknown local model {target!r}: give a path to a .gguf file or one of the embedded "
                f"aliases {', '.join(EMBEDDED)}"
            )
        return ModelSpec("local", "" if target == DEFAULT_ALIAS else target)
    if scheme == "openai-compatible":
        url, at, model = target.rpartition("@")
        if not at or not model.strip() or not re.match(r"^https?://[^/\s]+", url):
            raise UnknownModelSpecError(
                f"{text!r}: expected openai-compatible:http://HOST:PORT/v1@MODEL (URL, '@', model name)"
            )
        _check_url(text, url)
        return ModelSpec(scheme, model.strip(), url.rstrip("/"))
    if not target:
        raise UnknownModelSpecError(f"{text!r} names no model; expected {scheme}:MODEL")
    return ModelSpec(scheme, target)


def load_model(spec: str | ModelSpec | Model = "local", **options: object) -> Model:
    """A :class:`Model` for ``spec``; ``options`` go to the backend (see each backend's class).

    Local models: ``n_ctx``, ``n_threads``, ``reuse_prefix``, ``flash_attn``. Remote models: ``timeout``,
    ``max_retries``, ``concurrency``, ``context_window``, ``api_key``; OpenAI-compatible also
    ``tokenizer`` (e.g. ``"local:/same/model.gguf"`` for exact counts). A :class:`Model` passes through.
    Nothing is sent over the network until the first request.

    >>> load_model("openai:gpt-4o-mini", timeout=30).name
    'gpt-4o-mini'
    """
    if isinstance(spec, Model):
        if options:
            raise UnsupportedTypeError(
                f"options {', '.join(sorted(options))} apply only when loading a model from a spec string"
            )
        return spec
    parsed = spec if isinstance(spec, ModelSpec) else parse_spec(spec)
    factory = _BACKENDS.get(parsed.scheme)
    if factory is None:
        raise UnknownModelSpecError(f"unknown model backend {parsed.scheme!r}; registered: {', '.join(backends())}")
    return factory(parsed, **options)


# -- built-in backends (the SDKs and llama.cpp are imported on first use) --------------------------------------
class _LocalOptions(TypedDict, total=False):
    """The options :class:`~litm.models._local.LocalModel` takes from a spec's caller."""

    n_ctx: int | None
    n_threads: int | None
    n_batch: int
    flash_attn: bool
    reuse_prefix: bool | ReuseMode


class _RemoteOptions(TypedDict, total=False):
    """The options both SDK backends take."""

    api_key: str | None
    timeout: float
    max_retries: int
    concurrency: int
    context_window: int | None
    http_client: httpx.Client | None


class _OpenAIOptions(_RemoteOptions, total=False):
    string_prompts: Literal["completions", "chat"] | None


class _AnthropicOptions(_RemoteOptions, total=False):
    base_url: str | None
    count_with_api: bool | None
    api_version: str | None


def _local(spec: ModelSpec, **options: Unpack[_LocalOptions]) -> Model:
    if spec.is_path:
        return LocalModel(spec.target, spec=str(spec), **options)
    path = resolve_alias(spec.target)
    return LocalModel(path, spec=str(spec), name=EMBEDDED[spec.target or DEFAULT_ALIAS].alias, **options)


def _openai(spec: ModelSpec, *, tokenizer: Tokenizer | None = None, **options: Unpack[_OpenAIOptions]) -> Model:
    return OpenAIModel(spec.target, spec=str(spec), tokenizer=tokenizer, **options)


def _openai_compatible(
    spec: ModelSpec, *, tokenizer: Tokenizer | str | None = None, **options: Unpack[_OpenAIOptions]
) -> Model:
    if isinstance(tokenizer, str):
        # A spec names the model whose tokenizer counts for the server (e.g. the same GGUF, run locally).
        tokenizer = load_model(tokenizer).tokenizer
    return OpenAIModel(
        spec.target, base_url=spec.base_url, compatible=True, spec=str(spec), tokenizer=tokenizer, **options
    )


def _anthropic(spec: ModelSpec, **options: Unpack[_AnthropicOptions]) -> Model:
    return AnthropicModel(spec.target, spec=str(spec), **options)


for _scheme, _factory in (
    ("local", _local),
    ("openai", _openai),
    ("openai-compatible", _openai_compatible),
    ("anthropic", _anthropic),
):
    register_backend(_scheme, _factory)
