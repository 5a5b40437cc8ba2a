"""Hypothesis state machine: random reserve / settle / refund / expire / clock / window steps against a
reference model, on SQLiteLedger and on a real Redis server.

After every step: for every counter, settled + held <= its scope's limit; the ledger's counters equal the
model's exactly; and the ledger's event log sums to its counters.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

from litm.errors import SpendBudgetExceeded
from litm.spend._ledger import HoldRequest, SQLiteLedger
from litm.spend._scopes import WINDOWS, counter_name, window_id
from spend_support import T0, Clock

SCOPES = ("project:p", "user:a", "user:b")
CHAINS = [("project:p", "user:a"), ("project:p", "user:b"), ("project:p",), ("user:a",)]
LIMITS = {("project:p", "total"): 2000, ("project:p", "daily"): 900, ("user:a", "daily"): 500,
          ("user:a", "monthly"): 1200, ("user:b", "monthly"): 700}  # fmt: skip
RUNS = settings(max_examples=40, stateful_step_count=30, deadline=None)


class Model:
    """The reference: plain dicts, no store, the rules written out directly."""

    def __init__(self) -> None:
        self.limits = dict(LIMITS)
        self.counters: dict[str, list[int]] = {}
        self.res: dict[str, dict[str, Any]] = {}

    def move(self, names: list[str], d_held: int, d_settled: int) -> None:
        for name in names:
            c = self.counters.setdefault(name, [0, 0])
            c[0] += d_held
            c[1] += d_settled

    def expire_all(self, now: float) -> None:
        for r in self.res.values():
            if r["state"] == "held" and r["deadline"] <= now:
                r["state"] = "expired"
                self.move(r["counters"], -r["amount"], r["amount"])

    def reserve(self, key: str, chain: tuple[str, ...], amount: int, lease: int, now: float) -> str | None:
        """None when booked, else the refusing scope."""
        self.expire_all(now)
        names = []
        for scope in chain:
            for window in WINDOWS:
                if (scope, window) in self.limits:
                    name = counter_name(scope, window, window_id(window, now))
                    held, settled = self.counters.get(name, [0, 0])
                    if settled + held + amount > self.limits[(scope, window)]:
                        return scope
                    names.append(name)
        self.move(names, amount, 0)
        self.res[key] = {"state": "held", "amount": amount, "counters": names, "deadline": now + lease}
        return None

    def settle(self, key: str, cost: int, refund: bool) -> tuple[bool, bool]:
        """(replayed, late)"""
        r = self.res[key]
        if r["state"] == "held":
            self.move(r["counters"], -r["amount"], cost)
            late = False
        elif r["state"] == "expired":
            self.move(r["counters"], 0, cost - r["amount"])
            late = True
        else:
            return True, r["late"]  # a replay reports the first settle
        r["state"] = "refunded" if refund else "settled"
        r["late"] = late
        return False, late


class LedgerMachine(RuleBasedStateMachine):
    """Drives one ledger and the model with the same steps."""

    make: Any = None  # set per store below

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock(T0 - 3 * 3600)  # a few hours before a day and month boundary
        self.model = Model()
        # A sweep large enough that every reserve expires every due lease, as the model does; the
        # bounded sweep itself is tested in test_spend_ledger.py.
        self.ledger = type(self).make(self.clock)
        self.n = 0

    keys = Bundle("keys")

    @initialize()
    def limits(self) -> None:
        for (scope, window), micros in LIMITS.items():
            self.ledger.set_limit(scope, window, micros)

    @rule(target=keys, chain=st.sampled_from(CHAINS), amount=st.integers(0, 400), lease=st.integers(1, 600))
    def reserve(self, chain: tuple[str, ...], amount: int, lease: int) -> str:
        self.n += 1
        key = f"k{self.n}"
        expected = self.model.reserve(key, chain, amount, lease, self.clock())
        try:
            rec = self.ledger.reserve(HoldRequest(key, chain, amount, float(lease), "v", "m", "p"))
        except SpendBudgetExceeded as exc:
            assert expected == exc.scope, (expected, exc)
            return key
        assert expected is None and not rec.replayed
        assert list(rec.counters) == self.model.res[key]["counters"]
        return key

    @rule(key=keys)
    def replay(self, key: str) -> None:
        if key in self.model.res:
            r = self.model.res[key]
            self.model.expire_all(self.clock())
            chain = tuple(dict.fromkeys(c.split("|")[0] for c in r["counters"]))
            got = self.ledger.reserve(HoldRequest(key, chain, r["amount"], 1.0, "v", "m", "p"))
            assert got.replayed

    @rule(key=keys, fraction=st.integers(0, 100), refund=st.booleans())
    def settle(self, key: str, fraction: int, refund: bool) -> None:
        if key not in self.model.res:
            return
        cost = 0 if refund else self.model.res[key]["amount"] * fraction // 100
        replayed, late = self.model.settle(key, cost, refund)
        out = self.ledger.settle(key, cost, refund=refund)
        assert (out.replayed, out.late) == (replayed, late)

    @rule(seconds=st.sampled_from([1, 30, 599, 3600, 4 * 3600, 86400, 31 * 86400]))
    def advance(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @precondition(lambda self: self.n > 0)
    @rule()
    def sweep(self) -> None:
        self.model.expire_all(self.clock())
        self.ledger.sweep(10_000)

    @invariant()
    def within_limits_and_consistent(self) -> None:
        # A counter at (0, 0) and an absent one are the same state (Redis skips zero increments).
        got = {name: list(v) for name, v in self.ledger.counters().items() if v != (0, 0)}
        assert got == {name: v for name, v in self.model.counters.items() if v != [0, 0]}
        for name, (held, settled) in got.items():
            scope, window, _ = name.split("|")
            assert held >= 0 and settled + held <= self.model.limits[(scope, window)], name
        assert self.ledger.verify() == []

    def teardown(self) -> None:
        if hasattr(self.ledger, "drop"):
            self.ledger.drop()
        self.ledger.close()


def test_sqlite_ledger_matches_the_model(tmp_path: Any) -> None:
    class SQLiteMachine(LedgerMachine):
        @staticmethod
        def make(clock: Clock) -> Any:
            return SQLiteLedger(tmp_path / f"{uuid.uuid4().hex}.db", clock=clock, sweep_batch=10_000)

    SQLiteMachine.TestCase.settings = RUNS
    SQLiteMachine.TestCase().runTest()


@pytest.mark.redis
def test_redis_ledger_matches_the_model(redis_server: Any) -> None:
    from litm.spend import RedisLedger

    class RedisMachine(LedgerMachine):
        @staticmethod
        def make(clock: Clock) -> Any:
            return RedisLedger(redis_server.url, namespace=uuid.uuid4().hex[:16], clock=clock, sweep_batch=10_000)

    RedisMachine.TestCase.settings = RUNS
    RedisMachine.TestCase().runTest()
