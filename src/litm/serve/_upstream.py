"""The gateway's one client for its upstreams: a pooled ``aiohttp`` session per worker, and the three ways a
call to an upstream can fail, told apart because the spend rule needs them apart.

Why aiohttp rather than httpx: on the gateway's hot path, measured side by side (``benchmarks/
bench_gateway.py``), httpx 0.29 writes a request's headers and body in two system calls and its pool
(httpcore) checks every pooled connection each time it hands one out (1.4 million ``is_idle`` calls for
4,000 requests at 100 concurrent), where aiohttp writes once and takes a free connection in constant time.

Failures (:class:`UpstreamError`), by what they mean for the hold:

* ``reached=False``: no connection was made (refused, a name that does not resolve, a connect or pool
  timeout, a TLS handshake that failed): nothing can have been billed, so the hold is refunded;
* ``timed_out=True``: the answer did not come within the upstream's ``timeout_s`` after the request left;
* anything else after the request left (the connection dropped, an answer that is not HTTP): the provider
  may have run it, so the hold is charged in full.

Example:
    >>> import asyncio
    >>> from litm.serve._config import Upstream
    >>> async def unreachable() -> tuple[bool, bool]:
    ...     client = UpstreamClient([Upstream("local", "openai-compatible", "http://127.0.0.1:9/v1")])
    ...     try:
    ...         await client.post(client.upstreams["local"], "/chat/completions", b"{}", {})
    ...     except UpstreamError as exc:
    ...         return exc.reached, exc.timed_out
    ...     finally:
    ...         await client.aclose()
    ...     return True, True
    >>> asyncio.run(unreachable())
    (False, False)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import TYPE_CHECKING

import aiohttp

if TYPE_CHECKING:
    from litm.serve._config import Upstream

__all__ = ["UpstreamClient", "UpstreamError", "UpstreamResponse"]


class UpstreamError(Exception):
    """A call to an upstream that got no HTTP answer; ``reached`` and ``timed_out`` say how it failed."""

    def __init__(self, message: str, *, reached: bool, timed_out: bool) -> None:
        super().__init__(message)
        self.reached = reached
        self.timed_out = timed_out


def _failure(upstream: str, exc: BaseException) -> UpstreamError:
    what = type(exc).__name__
    # ConnectionTimeoutError is raised both waiting for a pooled connection and connecting: before either
    # ends, not a byte of the request was written. It is a ServerTimeoutError too, so it is tested first.
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return UpstreamError(f"upstream {upstream!r} could not be reached ({what})", reached=False, timed_out=False)
    if isinstance(exc, aiohttp.ServerTimeoutError | TimeoutError):
        return UpstreamError(f"upstream {upstream!r} timed out ({what})", reached=True, timed_out=True)
    return UpstreamError(f"upstream {upstream!r} failed after the request was sent ({what})", reached=True,
                         timed_out=False)  # fmt: skip


class UpstreamResponse:
    """An upstream's answer whose body is still to be read: once, with :meth:`read` or :meth:`lines`."""

    def __init__(self, upstream: str, response: aiohttp.ClientResponse) -> None:
        self._upstream = upstream
        self._response = response
        self.status = response.status
        self.headers: Mapping[str, str] = response.headers

    async def read(self) -> bytes:
        """The whole body (decompressed); then the connection goes back to the pool."""
        try:
            return await self._response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _failure(self._upstream, exc) from exc
        finally:
            self._response.release()

    async def lines(self) -> AsyncIterator[str]:
        """The body line by line, without line endings (``\\n`` or ``\\r\\n``), as the bytes arrive; no limit on
        a line's length (a Responses API stream ends with one event that carries the whole answer)."""
        pending = b""
        try:
            async for chunk in self._response.content.iter_any():
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    yield line.rstrip(b"\r").decode("utf-8", "replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _failure(self._upstream, exc) from exc
        if pending:
            yield pending.rstrip(b"\r").decode("utf-8", "replace")

    async def aclose(self) -> None:
        """Give the connection back (or drop it when the body was not read to the end)."""
        self._response.close()


class UpstreamClient:
    """One pooled session for every configured upstream of a worker.

    Each upstream keeps its own timeouts (``connect_timeout_s`` to connect, ``timeout_s`` for the wait for a
    pooled connection and between two reads of the answer) and at most ``max_connections`` connections to its
    host. No cookie an upstream sets is kept (a cookie of one client's answer must never ride on another's
    request), redirects are not followed, and no proxy or setting is read from the environment.
    """

    def __init__(self, upstreams: Iterable[Upstream]) -> None:
        self.upstreams = {u.name: u for u in upstreams}
        most = [u.max_connections for u in self.upstreams.values()] or [100]
        self._timeouts = {
            name: aiohttp.ClientTimeout(connect=u.timeout_s, sock_connect=u.connect_timeout_s, sock_read=u.timeout_s)
            for name, u in self.upstreams.items()
        }
        self._session: aiohttp.ClientSession | None = None
        self._limits = (sum(most), max(most))

    def _open(self) -> aiohttp.ClientSession:
        # Made on first use, inside the running event loop (aiohttp binds a session to its loop).
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._limits[0], limit_per_host=self._limits[1])
            self._session = aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(),
                                                  trust_env=False, auto_decompress=True)  # fmt: skip
        return self._session

    async def post(self, upstream: Upstream, path: str, body: bytes, headers: Mapping[str, str]) -> UpstreamResponse:
        """POST ``body`` to ``upstream.base_url + path``; the answer's headers are read, its body is not."""
        try:
            response = await self._open().post(
                upstream.base_url + path, data=body, headers=headers, allow_redirects=False,
                timeout=self._timeouts[upstream.name],
            )  # fmt: skip
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _failure(upstream.name, exc) from exc
        return UpstreamResponse(upstream.name, response)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
