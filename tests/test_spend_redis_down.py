"""A Redis ledger whose server stops mid-run refuses every later call with a typed error (fail closed)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from fixtures_redis import RedisServer
from litm.errors import LedgerUnavailableError, LitmError, ReserveUncertainError
from litm.spend import RedisLedger, SpendCap

pytestmark = pytest.mark.redis
MINI = {"model": "gpt-4o-mini", "provider": "openai", "input_tokens": 100, "max_tokens": 10}


def test_every_call_after_the_server_stops_is_refused(private_redis: RedisServer) -> None:
    cap = SpendCap(RedisLedger(private_redis.url, namespace="down"), scopes=["project:p"])
    cap.set_limit("project:p", "1")
    before = cap.reserve(**MINI)
    in_flight = cap.reserve(**MINI)
    before.settle({"prompt_tokens": 100, "completion_tokens": 10})
    private_redis.stop()

    calls = [
        lambda: cap.reserve(**MINI),
        lambda: in_flight.settle({"prompt_tokens": 100, "completion_tokens": 10}),
        lambda: in_flight.refund(),
        lambda: cap.status(),
        lambda: cap.history(),
        lambda: cap.set_limit("project:p", "2"),
        lambda: cap.ledger.sweep(),
        lambda: asyncio.run(cap.areserve(**MINI)),
    ]
    for call in calls:
        with pytest.raises(LedgerUnavailableError) as info:
            call()
        assert isinstance(info.value, LitmError) and isinstance(info.value, ConnectionError)
        assert private_redis.url in str(info.value)
        # The server was gone before any of these calls: nothing was sent, so no reserve is "uncertain" (the
        # thread's connection, closed by the server while idle, is not written to as if it were open).
        assert not isinstance(info.value, ReserveUncertainError)
    with pytest.raises(LedgerUnavailableError), cap.hold(**MINI):
        pytest.fail("the block must not run when nothing could be reserved")


def test_fail_open_lets_calls_through_unbacked_and_says_so(
    private_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    cap = SpendCap(RedisLedger(private_redis.url, namespace="open"), scopes=["project:p"], fail_open=True)
    cap.set_limit("project:p", "1")
    private_redis.stop()
    with caplog.at_level(logging.WARNING, logger="litm.spend"):
        r = cap.reserve(**MINI)
    assert r.unbacked and "UNBACKED" in caplog.text
