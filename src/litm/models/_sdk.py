"""What the OpenAI and Anthropic backends share: both official SDKs come from the same generator, with the same
exception classes (``APITimeoutError``, ``APIConnectionError``, ``AuthenticationError``, ``APIStatusError``) and
the same error bodies, so one function turns either SDK's failures into litm's typed errors, and one base class
(:class:`SdkModel`) holds the client, its options and its lifecycle.

Example:
    >>> is_context_error("prompt is too long: 210000 tokens > 200000 maximum")
    True
"""

from __future__ import annotations

import re
import threading
from abc import abstractmethod
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from litm.errors import ContextWindowExceededError, InvalidOptionError, ModelError
from litm.models._base import Model

if TYPE_CHECKING:  # httpx comes with either SDK, both optional extras
    import httpx

T = TypeVar("T")

__all__ = ["SdkModel", "call_sdk", "check_client_options", "error_code", "error_message", "is_context_error"]

_CONTEXT_ERROR = re.compile(r"context[ _](length|window)|maximum context|prompt is too long|too many tokens", re.I)

#: HTTP statuses with which providers and llama.cpp-style servers reject a prompt that does not fit.
_CONTEXT_STATUSES = (400, 413, 422)


def is_context_error(message: str, code: object = None) -> bool:
    """True when an API error says the prompt does not fit the context window."""
    return code == "context_length_exceeded" or bool(_CONTEXT_ERROR.search(message))


def error_message(exc: BaseException) -> str:
    """The provider's own message from an SDK error (``body.error.message``), else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", None) or exc)


def error_code(exc: BaseException) -> object:
    """The machine-readable error code of an SDK error (``exc.code`` or ``body.error.code``), if any."""
    code = getattr(exc, "code", None)
    if code:
        return code
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    return inner.get("code") if isinstance(inner, dict) else None


def call_sdk(
    sdk: ModuleType, fn: Callable[..., T], kwargs: Mapping[str, object], *, where: str, spec: str, timeout: float,
    key_env: str,
) -> T:  # fmt: skip
    """Run one SDK call ``fn(**kwargs)``; translate ``sdk``'s exceptions into :class:`ModelError` and
    :class:`ContextWindowExceededError`, naming the endpoint, the model spec and (on 401) the key variable."""
    try:
        return fn(**kwargs)
    except sdk.APITimeoutError as exc:
        raise ModelError(f"{where} did not answer within {timeout:g} s ({spec})") from exc
    except sdk.APIConnectionError as exc:
        raise ModelError(f"cannot reach {where} ({exc}); is the server running? ({spec})") from exc
    except sdk.AuthenticationError as exc:
        raise ModelError(f"{where} rejected the API key (401); check {key_env} ({spec})") from exc
    except sdk.APIStatusError as exc:
        message = error_message(exc)
        if exc.status_code in _CONTEXT_STATUSES and is_context_error(message, error_code(exc)):
            raise ContextWindowExceededError(f"{spec}: {message}") from exc
        raise ModelError(f"{where} answered HTTP {exc.status_code}: {message} ({spec})") from exc


def check_client_options(concurrency: int, max_retries: int, timeout: float) -> None:
    """The options both SDK backends share, each checked with a message naming the bad value."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InvalidOptionError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise InvalidOptionError(f"max_retries must be an integer >= 0, got {max_retries!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise InvalidOptionError(f"timeout must be a number of seconds > 0, got {timeout!r}")


class SdkModel(Model):
    """A model behind an official SDK: options checked once, one client built on first use, typed errors.

    Subclasses give :attr:`where` (the endpoint, for messages), :attr:`key_env`, :meth:`_sdk` (the SDK
    module, imported lazily) and :meth:`_make_client`.
    """

    remote = True
    #: The environment variable that holds the key, named when the endpoint rejects it.
    key_env = ""

    def __init__(
        self,
        name: str,
        *,
        spec: str,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        concurrency: int,
        context_window: int | None,
        http_client: httpx.Client | None,
    ) -> None:
        check_client_options(concurrency, max_retries, timeout)
        self.name = name
        self.spec = spec
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self._api_key = api_key
        self._context_window = context_window
        self._http_client = http_client
        self._client_obj: Any = None
        self._lock = threading.Lock()

    @property
    @abstractmethod
    def where(self) -> str:
        """The endpoint requests go to, for error messages."""

    @abstractmethod
    def _sdk(self) -> ModuleType:
        """The SDK module (imported on first use; :class:`~litm.errors.MissingDependencyError` if absent)."""

    @abstractmethod
    def _make_client(self, sdk: ModuleType) -> Any:
        """A new SDK client for this model (called once, under the lock)."""

    def _client(self) -> Any:
        with self._lock:
            if self._client_obj is None:
                self._client_obj = self._make_client(self._sdk())
            return self._client_obj

    def close(self) -> None:
        with self._lock:
            if self._client_obj is not None:
                self._client_obj.close()
                self._client_obj = None

    def _call(self, fn: Callable[..., T], **kwargs: object) -> T:
        """Run one SDK call and turn its exceptions into litm's typed errors."""
        return call_sdk(
            self._sdk(), fn, kwargs, where=self.where, spec=self.spec, timeout=self.timeout, key_env=self.key_env
        )
