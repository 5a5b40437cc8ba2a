"""A reserve sent to a Redis server that stops answering mid-call: it may still be booked, and the caller can
find out and undo it (issue 40, defect 3).

The server is a real ``redis-server`` paused with SIGSTOP while the reserve waits for its answer: the kernel
keeps the script in the socket buffer, the client times out, and the server runs the script when it resumes.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from fixtures_redis import RedisServer
from litm.errors import LedgerUnavailableError, ReserveUncertainError
from litm.spend import RedisLedger, SpendCap

pytestmark = pytest.mark.redis
TIMEOUT_S = 0.3


@contextmanager
def paused(server: RedisServer) -> Iterator[None]:
    """The server stopped (SIGSTOP) for the block: connections are accepted by the kernel, nothing answers."""
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


def settled_after_resume(ledger: RedisLedger, key: str) -> None:
    """Wait until the resumed server has run what it had buffered (the hold of ``key`` appears)."""
    deadline = time.monotonic() + 5
    while ledger.get(key) is None and time.monotonic() < deadline:
        time.sleep(0.02)


def make_cap(server: RedisServer) -> tuple[SpendCap, RedisLedger]:
    ledger = RedisLedger(server.url, namespace="uncertain", socket_timeout_s=TIMEOUT_S)
    cap = SpendCap(ledger, scopes=["project:p"])
    warm(cap)
    return cap, ledger


def warm(cap: SpendCap) -> None:
    """Open this thread's connection and load the reserve script, as any running service has: a paused
    server then gets the reserve itself (not a handshake, nor an EVALSHA it would answer with NOSCRIPT)."""
    cap.set_limit("project:p", "1")
    cap.reserve(amount="0.01", key="warm-up").refund()


def test_a_reserve_that_timed_out_is_booked_later_and_a_retry_with_its_key_returns_that_hold(
    private_redis: RedisServer,
) -> None:
    cap, ledger = make_cap(private_redis)
    with paused(private_redis):
        started = time.monotonic()
        with pytest.raises(ReserveUncertainError) as info:
            cap.reserve(amount="0.5", key="K")
        waited = time.monotonic() - started
    # The documented bound: one socket_timeout_s for the script, one for the resent script or new handshake.
    assert 2 * TIMEOUT_S - 0.05 <= waited < 2 * TIMEOUT_S + 1.0
    assert isinstance(info.value, LedgerUnavailableError) and info.value.key == "K"
    assert "'K'" in str(info.value) and "release" in str(info.value) and "\n" not in str(info.value)

    settled_after_resume(ledger, "K")
    record = ledger.get("K")
    assert record is not None and record.state == "held" and record.amount == 500_000  # it did take effect

    retry = cap.reserve(amount="0.5", key="K")  # the retry finds that hold: no second one
    assert retry.record.replayed and retry.amount == 500_000
    assert [(c.held, c.settled) for c in cap.status()] == [(500_000, 0)]
    retry.settle(cost="0.2")
    assert [(c.held, c.settled) for c in cap.status()] == [(0, 200_000)]
    assert ledger.verify() == []


def test_a_generated_key_is_named_by_the_error_and_release_undoes_the_hold(private_redis: RedisServer) -> None:
    cap, ledger = make_cap(private_redis)
    with paused(private_redis), pytest.raises(ReserveUncertainError) as info:
        cap.reserve(amount="0.5")  # no key given: the error still names the one that was sent
    key = info.value.key
    settled_after_resume(ledger, key)
    assert ledger.get(key) is not None

    released = cap.release(key)
    assert released is not None and released.state == "refunded" and released.refunded == 500_000
    assert [(c.held, c.settled) for c in cap.status()] == [(0, 0)]
    again = cap.release(key)
    assert again is not None and again.replayed  # releasing twice changes nothing
    assert cap.release("never-sent") is None
    assert ledger.verify() == []


def test_a_hold_released_after_its_lease_charged_it_goes_back_to_zero(private_redis: RedisServer) -> None:
    """The issue's case: nobody reconciles, the lease expires and charges a call that was never sent in full;
    release() after that moves the charge back to $0 (a late refund)."""
    ledger = RedisLedger(private_redis.url, namespace="late", socket_timeout_s=TIMEOUT_S)
    cap = SpendCap(ledger, scopes=["project:p"], lease_s=0.5)
    warm(cap)
    with paused(private_redis), pytest.raises(ReserveUncertainError) as info:
        cap.reserve(amount="0.5")
    settled_after_resume(ledger, info.value.key)
    time.sleep(0.6)
    assert ledger.sweep() == 1 and [(c.held, c.settled) for c in cap.status()] == [(0, 500_000)]
    released = cap.release(info.value.key)
    assert released is not None and released.late and [(c.held, c.settled) for c in cap.status()] == [(0, 0)]


def test_a_server_that_never_took_the_script_is_plainly_unavailable(private_redis: RedisServer) -> None:
    """A fresh connection to a paused server times out in its handshake: the script never left the client,
    so the error is the plain one (nothing can be booked), still after at most twice the timeout."""
    cap = SpendCap(RedisLedger(private_redis.url, namespace="fresh", socket_timeout_s=TIMEOUT_S), scopes=["p:1"])
    errors: list[BaseException] = []

    def reserve() -> None:  # a new thread: a connection of its own, opened while the server is paused
        try:
            cap.reserve(amount="0.5", key="F")
        except BaseException as exc:  # kept for the assertion below
            errors.append(exc)

    with paused(private_redis):
        worker = threading.Thread(target=reserve)
        started = time.monotonic()
        worker.start()
        worker.join(10)
        waited = time.monotonic() - started
    assert len(errors) == 1 and type(errors[0]) is LedgerUnavailableError, errors
    assert waited < 2 * TIMEOUT_S + 1.0
    assert cap.ledger.get("F") is None


def test_an_async_reserve_that_timed_out_names_its_key_too(private_redis: RedisServer) -> None:
    import asyncio

    cap, ledger = make_cap(private_redis)

    async def scenario() -> str:
        await cap.areserve(amount="0.01", key="async-warm-up")  # the loop's own connection, script loaded
        with paused(private_redis), pytest.raises(ReserveUncertainError) as info:
            await cap.areserve(amount="0.5", key="A")
        return info.value.key

    assert asyncio.run(scenario()) == "A"
    settled_after_resume(ledger, "A")
    released = cap.release("A")
    assert released is None or released.refunded == 500_000  # booked or not: afterwards nothing is held of A
    record = ledger.get("A")
    assert record is None or record.state == "refunded"
