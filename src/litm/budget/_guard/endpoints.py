"""Which requests of an SDK the gate counts, which it lets pass, and which it refuses (fail closed).

A guarded client sees every HTTP request the SDK makes. Requests that cannot carry a prompt (``GET``,
``DELETE``, ``HEAD``) pass. A ``POST`` to an endpoint the gate can count (Chat Completions, Responses,
Messages) is gated, whichever namespace sent it (``beta``, ``with_raw_response``, ``with_options(...)``,
``.stream(...)`` helpers and ``stream=True`` alike). A short list of prompt-free endpoints (token counting,
cancelling a response) passes. Every other ``POST`` is refused with
:class:`~litm.errors.UngatedRequestError` before it is sent, because it might carry a prompt the gate
cannot see (the legacy Completions API, batches, assistants runs, ...); ``allow=`` names endpoints the
caller lets through on purpose (``allow=["/embeddings"]``).

Example:
    >>> from litm.budget._guard.openai_sdk import ENDPOINTS
    >>> ENDPOINTS.route("post", "/chat/completions"), ENDPOINTS.route("get", "/models")
    ('openai-chat', None)
    >>> ENDPOINTS.route("post", "/batches")
    Traceback (most recent call last):
    ...
    litm.errors.UngatedRequestError: a guarded client refuses POST /batches: ... allow=['/batches'] ...
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from litm.errors import InvalidOptionError, UngatedRequestError

__all__ = ["Endpoints", "relative_path"]

#: Methods that carry no request body, hence no prompt.
_BODILESS = frozenset({"get", "delete", "head", "options"})


def _pattern(path: str, *, below: bool) -> re.Pattern[str]:
    # "{id}" stands for one path segment; with ``below`` the path also matches everything under it.
    parts = [re.escape(p) if p != "{id}" else "[^/]+" for p in re.split(r"(\{id\})", path)]
    return re.compile("".join(parts) + ("(/.*)?" if below else ""))


@dataclass(frozen=True)
class Endpoints:
    """One SDK's endpoints: ``gated`` maps a POST path to its request shape; ``prompt_free`` always pass."""

    gated: Mapping[str, str]
    prompt_free: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    _free: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        free = [_pattern(p, below=False) for p in self.prompt_free]
        object.__setattr__(self, "_free", (*free, *(_pattern(p, below=True) for p in self.allow)))

    def allowing(self, paths: Iterable[str]) -> Endpoints:
        """These endpoints plus ``paths``, which pass ungated (each path and anything below it)."""
        extra = tuple(str(p) for p in paths)
        for p in extra:
            if not p.startswith("/"):
                raise InvalidOptionError(f"allow= takes endpoint paths such as '/embeddings', got {p!r}")
        return Endpoints(self.gated, self.prompt_free, (*self.allow, *extra))

    def route(self, method: str, path: str) -> str | None:
        """The request shape to gate ``method path`` as, None to let it pass, or an UngatedRequestError."""
        if method.lower() in _BODILESS:
            return None
        if path in self.gated:
            return self.gated[path]
        if any(p.fullmatch(path) for p in self._free):
            return None
        raise UngatedRequestError(
            f"a guarded client refuses {method.upper()} {path}: the token gate cannot count what it sends, so "
            f"nothing was sent (pass allow=[{path!r}] to guard() to let it through ungated)",
            path=path,
        )


def relative_path(url: str, base_url: object) -> str:
    """The endpoint path of a request URL: the query dropped, and the client's base path for an absolute URL."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.scheme:
        base = urlsplit(str(base_url)).path.rstrip("/")
        if base and path.startswith(base + "/"):
            path = path[len(base) :]
    return "/" + path.lstrip("/")
