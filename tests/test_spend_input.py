"""Bad input to the spend cap is a typed one-line error naming the value, never a guess or a traceback
(issue 40, defects 1 and 2), in Python and on the command line."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from litm.errors import LedgerNotFoundError, LitmError, SpendRequestError
from litm.spend import SpendCap
from litm.spend._ledger import SQLiteLedger, open_ledger

# Each was read as some amount before (5,00 as $500.00, $5 as $5.00, " 5" as $5.00, 5. as $5.00, -0 as $0).
BAD_MONEY = ["5,00", "1,000", "1e3", "1E-3", "$5", " 5", "5 ", "5.", ".5", "05", "+5", "-0", "-1", "NaN", "nan",
             "Infinity", "-Infinity", "sNaN", "0.0000001", "1.0000000", "1_000", "\uff15", "0x10", "", " ", "5\n",
             Decimal("-0"), Decimal("NaN"), Decimal("Infinity"), Decimal("1.0000000000000000000000000001"),
             0.5, True, -1, [5]]  # fmt: skip
BAD_URLS = ["redis://127.0.0.1:6379/abc", "redis://127.0.0.1:99999/0", "redis://127.0.0.1:abc/0", "redis://[::1",
            "redis://127.0.0.1:0/0", "redis://:6379/0", "redis://h:6379/0/1", "redis://h:6379/-1",
            "redis://h:6379/1?db=2", "redis://h:6379/?db=x", "redis://h:6379/0#frag", "unix://",
            "redis://h :1/0"]  # fmt: skip
MINI = {"model": "gpt-4o-mini", "provider": "openai", "input_tokens": 100, "max_tokens": 10}


@pytest.fixture(name="cap")
def cap_fixture(tmp_path: Path) -> SpendCap:
    cap = SpendCap(tmp_path / "s.db", scopes=["project:a"])
    cap.set_limit("project:a", "100")
    return cap


def one_line(exc: BaseException, *names: object) -> str:
    text = str(exc)
    assert isinstance(exc, LitmError) and "\n" not in text and text
    for name in names:
        assert repr(name)[:40] in text, (name, text)
    return text


@pytest.mark.parametrize("bad", BAD_MONEY, ids=repr)
def test_money_outside_the_canonical_form_is_refused_everywhere(cap: SpendCap, bad: Any) -> None:
    for call in (lambda: cap.set_limit("project:a", bad), lambda: cap.reserve(amount=bad)):
        with pytest.raises(SpendRequestError) as info:
            call()
        one_line(info.value, bad)
    r = cap.reserve(amount="1")
    with pytest.raises(SpendRequestError):
        r.settle(cost=bad)
    assert [c.limit for c in cap.status()] == [100_000_000]  # nothing above changed the limit


def test_canonical_money_is_read_exactly(cap: SpendCap) -> None:
    for text, micros in [("0", 0), ("5", 5_000_000), ("5.00", 5_000_000), ("12.50", 12_500_000),
                         ("0.000001", 1), ("1000000", 10**12)]:  # fmt: skip
        cap.set_limit("project:a", text)
        assert cap.status()[0].limit == micros


def test_coercions_of_the_reserve_call_are_refused(cap: SpendCap) -> None:
    bad_calls: list[tuple[str, Any]] = [
        ("key ''", lambda: cap.reserve(amount="1", key="")),  # was: a random key, so a retry was not idempotent
        ("lease_s=0", lambda: cap.reserve(amount="1", lease_s=0)),  # was: the default 900 s
        ("lease_s=-1", lambda: cap.reserve(amount="1", lease_s=-1)),
        ("lease_s=nan", lambda: cap.reserve(amount="1", lease_s=float("nan"))),
        ("lease_s=True", lambda: cap.reserve(amount="1", lease_s=True)),
        ("input_exact='no'", lambda: cap.reserve(**MINI, input_exact="no")),  # was: exact, no margin
        ("input_exact=1", lambda: cap.reserve(**MINI, input_exact=1)),
        ("cache_writes='no'", lambda: cap.reserve(**MINI, cache_writes="no")),
        ("history -1", lambda: cap.history(limit=-1)),
        ("history 0", lambda: cap.history(limit=0)),
        ("history 10**20", lambda: cap.history(limit=10**20)),  # was: OverflowError
        ("sweep -1", lambda: cap.ledger.sweep(-1)),  # was: every expired lease at once
        ("SpendCap lease_s=0", lambda: SpendCap(cap.ledger, lease_s=0)),
        ("SpendCap fail_open='no'", lambda: SpendCap(cap.ledger, fail_open="no")),
        ("SpendCap margin='0.1'", lambda: SpendCap(cap.ledger, margin="0.1")),
        ("release ''", lambda: cap.release("")),
        ("price as a float", lambda: cap.with_prices({"my-model": {"input": 0.1, "output": "0.2"}})),
    ]
    for name, call in bad_calls:
        with pytest.raises(SpendRequestError) as info:
            call()
        assert "\n" not in str(info.value), name
    assert cap.history(limit=10**9) and [c.held for c in cap.status()] == [0]


def test_sqlite_options_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    for options in ({"busy_timeout_s": -1}, {"busy_timeout_s": float("nan")}, {"synchronous": "BOGUS"},
                    {"synchronous": "OFF"}, {"sweep_batch": -1}, {"sweep_batch": 0}, {"create": "no"}):  # fmt: skip
        with pytest.raises(SpendRequestError) as info:
            SQLiteLedger(path, **options)  # type: ignore[arg-type]
        assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    assert not path.exists()
    ledger = SQLiteLedger(path, busy_timeout_s=0, synchronous="NORMAL")
    with pytest.raises(SpendRequestError):
        ledger.history(limit=10**20)


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_redis_url_is_a_typed_error_before_any_connection(url: str) -> None:
    pytest.importorskip("redis")
    from litm.spend import RedisLedger

    for make in (lambda: RedisLedger(url), lambda: open_ledger(url), lambda: SpendCap(url)):
        with pytest.raises(SpendRequestError) as info:
            make()
        assert "Redis URL" in str(info.value) and "\n" not in str(info.value)


def test_a_redis_option_out_of_range_is_refused() -> None:
    pytest.importorskip("redis")
    from litm.spend import RedisLedger

    for options in ({"socket_timeout_s": 0}, {"socket_timeout_s": -1}, {"sweep_batch": -5},
                    {"namespace": ""}, {"namespace": "a b"}, {"namespace": "a\x00"}, {"namespace": "{x}"}):  # fmt: skip
        with pytest.raises(SpendRequestError):
            RedisLedger("redis://127.0.0.1:6379/0", **options)


def test_reading_a_missing_ledger_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(LedgerNotFoundError) as info:
        open_ledger(path, create=False)
    assert isinstance(info.value, FileNotFoundError) and str(path) in str(info.value)
    assert not path.exists()
    with pytest.raises(SpendRequestError):
        open_ledger("Redis://127.0.0.1/0")  # a mistyped URL is not a file name
    assert not Path("Redis:").exists()


# -- the command line: exit 2 and one line on stderr, through the real entry point ---------------------


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from litm.cli import main

    monkeypatch.setattr(sys, "argv", ["litm", "spend", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def refused(result: tuple[int, str, str], *words: str) -> None:
    code, out, err = result
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("litm: error: "), result
    for word in words:
        assert word in err, (word, err)


def test_cli_refuses_bad_money_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "s.db")
    for bad in ["5,00", "1e3", "$5", " 5", "5.", "NaN", "Infinity", "-0", "0.0000001"]:
        # After "--" a leading "-" is the amount, not an option: the cap's own check must refuse it.
        refused(run(monkeypatch, capsys, "set-limit", path, "project:a", "--", bad), repr(bad))
    assert not Path(path).exists()
    code, out, _ = run(monkeypatch, capsys, "set-limit", path, "project:a", "5.00")
    assert code == 0 and "$5.00" in out


def test_cli_read_commands_never_create_a_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "typo.db")
    for args in (["status", path], ["history", path], ["reset", path, "user:1"], ["reset", path, "user:1", "--yes"],
                 ["set-limit", path, "user:1", "0", "--remove"], ["release", path, "K"]):  # fmt: skip
        refused(run(monkeypatch, capsys, *args), "does not exist")
        assert not Path(path).exists(), args


def test_cli_read_commands_leave_a_file_that_is_not_a_ledger_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    notes, empty, folder = tmp_path / "docs.jsonl", tmp_path / "empty.db", tmp_path / "folder"
    notes.write_bytes(b'{"text": "a"}\n')
    empty.write_bytes(b"")
    folder.mkdir()
    for path, says in ((notes, "not a spend ledger"), (empty, "not a litm spend ledger"), (folder, "directory")):
        for args in (["status", str(path)], ["history", str(path)], ["check", str(path)]):
            refused(run(monkeypatch, capsys, *args), says)
    assert notes.read_bytes() == b'{"text": "a"}\n' and empty.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "empty.db", "folder"]  # no -wal, -shm


def test_cli_huge_counts_and_bad_urls_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "s.db")
    assert run(monkeypatch, capsys, "set-limit", path, "project:a", "1")[0] == 0
    refused(run(monkeypatch, capsys, "history", path, "-n", "99999999999999999999"), "history limit")
    for url in ["redis://127.0.0.1:6379/abc", "redis://127.0.0.1:99999", "redis://127.0.0.1:abc", "redis://[::1"]:
        refused(run(monkeypatch, capsys, "status", url), "Redis URL")


def test_cli_release_reconciles_a_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.db"
    cap = SpendCap(path, scopes=["project:a"])
    cap.set_limit("project:a", "1")
    cap.reserve(amount="0.25", key="K")
    assert run(monkeypatch, capsys, "release", str(path), "K")[1:] == ("released $0.25 held by K\n", "")
    assert "already refunded" in run(monkeypatch, capsys, "release", str(path), "K")[1]
    assert "never booked" in run(monkeypatch, capsys, "release", str(path), "other")[1]
    assert [(c.held, c.settled) for c in cap.status()] == [(0, 0)]
