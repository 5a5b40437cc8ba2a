"""The event loop's call path to Redis: a command per round trip on a raw ``redis.asyncio`` connection.

The client's own ``execute_command`` checks a connection out of its pool, wraps the call in its retry
policy and runs reply callbacks: about twice the CPU of the round trip itself, paid on every reserve,
settle and key lookup of the gateway. :class:`AsyncConnections` keeps idle connections in a list instead
(one event loop never runs two callbacks at once, so the list needs no lock) and knows exactly when a
command was written, which a reservation needs to tell "never sent" from "sent, reply lost".
"""

from __future__ import annotations

from typing import Any

__all__ = ["AsyncConnections"]


class AsyncConnections:
    """Connections of ``client`` (a ``redis.asyncio.Redis``) for one event loop; at most ``max_idle`` kept."""

    def __init__(self, client: Any, *, max_idle: int = 64) -> None:
        import redis.exceptions

        self._pool = client.connection_pool
        self._idle: list[Any] = []
        self._max_idle = max_idle
        self._lost = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
        self._answered = redis.exceptions.ResponseError

    async def call(self, *args: object, sent: list[bool] | None = None) -> tuple[Any, bool]:
        """Send one command and read its reply; returns the reply and whether the command was sent again.

        A reply lost with its connection is waited for once more, on a new connection, after sending the
        command again: callers send only commands that are safe to run twice. ``sent[0]`` becomes True once
        the command was written whole: from then on a failure leaves its outcome unknown. An error reply
        (``ResponseError``) is raised as it is; the connection stays usable."""
        resent = False
        while True:
            conn = await self._take()
            try:
                # Connected here rather than inside send_command (the same call it makes), so the transport
                # the write goes to is known.
                await conn.connect_check_health(check_health=False)
                transport = conn._writer.transport
                try:
                    await conn.send_command(*args, check_health=False)
                except RuntimeError as exc:
                    # uvloop refuses to write on a transport it has closed (the server reset the
                    # connection while this call waited for its turn): nothing was sent, as for an OSError.
                    if not transport.is_closing():
                        raise
                    raise _never_written(exc) from exc
                if sent is not None:
                    sent[0] = True
                reply = await conn.read_response()
            except self._answered:
                await self._release(conn)
                raise
            except self._lost:
                await conn.disconnect(nowait=True)
                if resent:
                    raise
                resent = True
            except BaseException:  # cancelled mid-call: its reply may still arrive, so the connection goes
                await conn.disconnect(nowait=True)
                raise
            else:
                await self._release(conn)
                return reply, resent

    async def _take(self) -> Any:
        """An idle connection the server has not hung up on, else a new one: a write on a connection the
        server closed while it sat idle would count as sent although Redis never read it."""
        while self._idle:
            conn = self._idle.pop()
            if not _closed(conn):
                return conn
            await conn.disconnect(nowait=True)
        return self._pool.make_connection()

    async def _release(self, conn: Any) -> None:
        if len(self._idle) < self._max_idle:
            self._idle.append(conn)
        else:  # a burst made more connections than are worth keeping open
            await conn.disconnect()

    async def aclose(self) -> None:
        """Close every idle connection (one in use closes when its call ends)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.disconnect()


def _closed(conn: Any) -> bool:
    """Whether the server hung up on ``conn`` (end of stream read) or its transport is closed."""
    reader, writer = getattr(conn, "_reader", None), getattr(conn, "_writer", None)
    if reader is not None and reader.at_eof():
        return True
    return writer is not None and writer.transport.is_closing()


def _never_written(exc: BaseException) -> Exception:
    """``exc`` as the client's ConnectionError, so the caller's "never sent" path handles it."""
    import redis.exceptions

    return redis.exceptions.ConnectionError(f"connection closed before the command was written ({exc})")
