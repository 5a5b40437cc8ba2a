"""Shared pieces of the spend tests: a controllable clock and one fixture that yields each store in turn."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from litm.spend._ledger import SQLiteLedger

# 2026-03-31 23:59:00 UTC: one minute before a day and a month roll over.
T0 = 1_775_001_540.0


class Clock:
    """A clock the test moves by hand; both ledgers read it instead of the real time."""

    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


MakeLedger = Callable[..., Any]


@pytest.fixture(params=["sqlite", "redis"], name="make_ledger")
def make_ledger_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeLedger]:
    """``make_ledger(clock=None, **options)`` -> a fresh ledger of the parametrised store."""
    made: list[Any] = []

    def make(clock: Clock | None = None, **options: Any) -> Any:
        if request.param == "sqlite":
            ledger: Any = SQLiteLedger(tmp_path / f"spend-{len(made)}.db", clock=clock or Clock(), **options)
        else:
            from litm.spend import RedisLedger

            server = request.getfixturevalue("redis_server")
            ledger = RedisLedger(server.url, namespace=f"t{uuid.uuid4().hex[:12]}", clock=clock or Clock(), **options)
        made.append(ledger)
        return ledger

    yield make
    for ledger in made:
        if hasattr(ledger, "drop"):
            ledger.drop()
        ledger.close()
