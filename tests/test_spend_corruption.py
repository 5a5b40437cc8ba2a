"""A damaged SQLite ledger file (issue 40, the harness): truncated or with bytes flipped at generated offsets.

Every operation on it either works or raises a typed :class:`LitmError` (never a traceback); the damage
SQLite or the ledger's own cross-checks can see is reported as :class:`CorruptLedgerError` with the repair;
and the documented repair (move the file aside, start a new ledger, set the limits again) works.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.errors import CorruptLedgerError, LedgerUnavailableError, LitmError
from litm.spend._ledger import SQLiteLedger
from litm.spend._ledger.base import HoldRequest
from spend_support import Clock


def build(path: Path) -> None:
    """A small ledger with every kind of row: limits, held, settled, refunded and expired reservations."""
    clock = Clock()
    ledger = SQLiteLedger(path, clock=clock)
    ledger.set_limit("project:a", "total", 50_000_000)
    ledger.set_limit("user:1", "daily", 5_000_000)
    for i in range(12):
        ledger.reserve(HoldRequest(f"call-{i}", ("project:a", "user:1"), 100_000 + i, lease_s=60, model="m"))
        if i % 3 == 0:
            ledger.settle(f"call-{i}", 50_000)
        elif i % 3 == 1:
            ledger.settle(f"call-{i}", 0, refund=True)
    clock.advance(120)
    ledger.sweep()
    ledger.reserve(HoldRequest("open", ("project:a",), 7_000, lease_s=600))
    ledger.close()  # checkpoints the WAL into the file: the file alone is the ledger


@pytest.fixture(scope="module", name="golden")
def golden_fixture(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("golden") / "spend.db"
    build(path)
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    SQLiteLedger(path, create=False).check()  # the undamaged file passes its own check
    return path.read_bytes()


def use(path: Path) -> None:
    """Open the file as every command does, and run every operation on it."""
    ledger = SQLiteLedger(path, create=False, busy_timeout_s=0.5)
    try:
        calls: list[Callable[[], Any]] = [
            ledger.limits, ledger.status, lambda: ledger.history(limit=100), lambda: ledger.history("user:1"),
            ledger.reservations, lambda: ledger.get("call-3"), ledger.counters, ledger.verify, ledger.check,
            lambda: ledger.sweep(), lambda: ledger.reserve(HoldRequest("new", ("project:a",), 1_000, lease_s=60)),
            lambda: ledger.settle("open", 5_000), lambda: ledger.settle("new", 0, refund=True),
            lambda: ledger.set_limit("project:a", "total", 60_000_000), lambda: ledger.reset("user:1", "daily"),
        ]  # fmt: skip
        for call in calls:
            try:
                call()
            except LitmError as exc:
                assert "\n" not in str(exc)
    finally:
        ledger.close()


def damaged(golden: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    data = bytearray(golden)
    for offset, mask in edits:
        data[offset % len(data)] ^= mask
    return bytes(data[: cut % (len(data) + 1)] if cut is not None else data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(st.tuples(st.integers(0, 2**20), st.integers(1, 255)), max_size=6),
    cut=st.none() | st.integers(0, 2**20),
)
def test_a_damaged_ledger_is_a_typed_error_never_a_traceback(golden: bytes, edits: list[tuple[int, int]],
                                                             cut: int | None) -> None:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spend.db"
        path.write_bytes(damaged(golden, edits, cut))
        try:
            use(path)
        except LitmError as exc:  # refused when opened: fine, if it says so in one line
            assert "\n" not in str(exc)


@pytest.mark.parametrize("cut", [0, 100, 1024, 5000])
def test_a_truncated_ledger_is_refused_on_open(golden: bytes, tmp_path: Path, cut: int) -> None:
    path = tmp_path / "spend.db"
    path.write_bytes(golden[:cut])
    with pytest.raises(CorruptLedgerError) as info:
        SQLiteLedger(path, create=False).check()
    assert "damaged" in str(info.value) or "not a litm spend ledger" in str(info.value)
    assert "aside" in str(info.value) and path.read_bytes() == golden[:cut]  # nothing was written


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("UPDATE counters SET settled = settled + 1 WHERE name LIKE 'project:a|%'", "events sum"),
        ("UPDATE counters SET held = held + 5 WHERE name LIKE 'project:a|%'", "held"),
        ("UPDATE reservations SET amount = amount + 1 WHERE key = 'open'", "held reservations"),
        ("UPDATE limits SET micros = 99000000 WHERE scope = 'project:a'", "log says"),
        ("UPDATE reservations SET chain = '[not json' WHERE key = 'call-0'", "cannot be read"),
        ("UPDATE limits SET window = 'weekly' WHERE scope = 'user:1'", "cannot be read"),
    ],
)
def test_a_changed_amount_is_caught_by_check(golden: bytes, tmp_path: Path, sql: str, says: str) -> None:
    """Bytes that still make a valid database but change money: the ledger's cross-checks catch them."""
    path = tmp_path / "spend.db"
    path.write_bytes(golden)
    conn = sqlite3.connect(path)
    conn.execute(sql)  # what a flipped byte inside a row's value does, without SQLite noticing
    conn.commit()
    conn.close()
    with pytest.raises(CorruptLedgerError) as info:
        SQLiteLedger(path, create=False).check()
    assert says in str(info.value) and "\n" not in str(info.value)


def test_the_documented_repair_works(golden: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """docs/spend.md, 'A damaged ledger file': check it, move it and its -wal/-shm files aside, set the limits
    on a new file; the cap then works, and the damaged file is kept for the audit."""
    from litm.cli import main

    def cli(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["litm", "spend", *args])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    path = tmp_path / "spend.db"
    path.write_bytes(golden[: len(golden) // 2])
    code, _, err = cli("check", str(path))
    assert code == 2 and err.count("\n") == 1 and "damaged" in err and "aside" in err
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.move(f"{path}{suffix}", f"{path}.damaged{suffix}")
    assert cli("set-limit", str(path), "project:a", "50")[0] == 0
    assert cli("check", str(path))[:2] == (0, f"ok: {path} is consistent\n")
    ledger = SQLiteLedger(path, create=False)
    ledger.reserve(HoldRequest("after-repair", ("project:a",), 1_000, lease_s=60))
    assert ledger.settle("after-repair", 500).cost == 500 and ledger.verify() == []
    assert Path(f"{path}.damaged").read_bytes() == golden[: len(golden) // 2]


RAW_RECORDS = [b"garbage", b"2\tnot\tenough", b"{not json", b'{"ch": 1}', b"\xff\xfe", b"2" + b"\tx" * 12]


@pytest.mark.redis
@pytest.mark.parametrize("raw", RAW_RECORDS)
def test_a_damaged_redis_record_is_a_typed_error(redis_server: Any, redis_namespace: str, raw: bytes) -> None:
    import redis

    from litm.spend import RedisLedger

    ledger = RedisLedger(redis_server.url, namespace=redis_namespace)
    try:
        redis.Redis.from_url(redis_server.url).hset(ledger.keys[2], "k", raw)
        for call in (lambda: ledger.get("k"), ledger.reservations):
            with pytest.raises(CorruptLedgerError) as info:
                call()
            assert "'k'" in str(info.value) and "\n" not in str(info.value)
        try:  # the settle script reads the record itself: refused as it can (a Lua error), or replayed
            ledger.settle("k", 5)
        except LedgerUnavailableError as exc:
            assert "\n" not in str(exc)
    finally:
        ledger.drop()
        ledger.close()
