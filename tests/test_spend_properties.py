"""Property tests for every parser of user input in the spend cap (issue 40, the harness): money, windows,
scopes and Redis URLs. A valid input round-trips; anything else is a typed error (:class:`SpendRequestError`),
never another exception and never a guess."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from litm.errors import SpendRequestError
from litm.spend._money import CANONICAL, MAX_MICROS, format_usd, parse_usd, rate_from_usd_per_mtok
from litm.spend._scopes import WINDOWS, check_chain, check_scope, check_window, counter_name, window_id

SETTINGS = settings(max_examples=200, deadline=None)
# Characters that make malformed money: digits and their look-alikes, signs, separators, spaces, letters of
# exponents and special values, currency signs.
MONEY_CHARS = "0123456789.,_-+eE $£€ \t\nNnaIifty\uff10\uff15\u0663"


# -- money ---------------------------------------------------------------------------------------------


@st.composite
def canonical_money(draw: st.DrawFn) -> tuple[str, int]:
    """A canonical amount and its exact micro-dollars."""
    whole = draw(st.integers(0, MAX_MICROS // 1_000_000))
    places = draw(st.integers(0, 6))
    frac = draw(st.integers(0, 10**places - 1)) if places else 0
    text = str(whole) + (f".{frac:0{places}d}" if places else "")
    micros = whole * 1_000_000 + (frac * 10 ** (6 - places) if places else 0)
    return text, micros


@SETTINGS
@given(canonical_money())
def test_canonical_money_round_trips(case: tuple[str, int]) -> None:
    text, micros = case
    if micros > MAX_MICROS:
        with pytest.raises(SpendRequestError):
            parse_usd(text)
        return
    assert parse_usd(text) == micros == parse_usd(Decimal(text))
    assert parse_usd(format_usd(micros).removeprefix("$")) == micros  # what litm prints, it reads back
    assert rate_from_usd_per_mtok(text) == micros  # USD/MTok and dollars share the six decimals


def _parsed_or_refused(value: Any) -> int | None:
    try:
        return parse_usd(value)
    except SpendRequestError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
        return None


@SETTINGS
@given(st.text(alphabet=MONEY_CHARS, max_size=24) | st.text(max_size=24))
@example("5,00")
@example("1e3")
@example("$5")
@example(" 5")
@example("5.")
@example("NaN")
@example("Infinity")
@example("-0")
@example("0.0000001")
def test_any_text_is_read_only_in_its_canonical_form(text: str) -> None:
    got = _parsed_or_refused(text)
    if CANONICAL.fullmatch(text) and len(text) <= 17:
        assert got is not None and Decimal(got) / 1_000_000 == Decimal(text)
    else:
        assert got is None, text


@SETTINGS
@given(canonical_money(), st.integers(0, 20), st.sampled_from(list(MONEY_CHARS)))
def test_one_stray_character_in_an_amount_is_refused_or_still_canonical(
    case: tuple[str, int], at: int, char: str
) -> None:
    text = case[0]
    mutated = text[: at % (len(text) + 1)] + char + text[at % (len(text) + 1) :]
    got = _parsed_or_refused(mutated)
    if got is not None:  # only a string still in the canonical form is read, and read exactly
        assert CANONICAL.fullmatch(mutated) and Decimal(got) / 1_000_000 == Decimal(mutated)
    elif CANONICAL.fullmatch(mutated):
        assert Decimal(mutated) * 1_000_000 > MAX_MICROS


@SETTINGS
@given(
    st.decimals(allow_nan=True, allow_infinity=True)
    | st.integers()
    | st.floats()
    | st.booleans()
    | st.none()
    | st.lists(st.integers(), max_size=2)
    | st.binary(max_size=8)
)
def test_any_value_is_exact_micro_dollars_or_a_typed_error(value: Any) -> None:
    got = _parsed_or_refused(value)
    if got is None:
        return
    assert isinstance(got, int) and 0 <= got <= MAX_MICROS
    assert isinstance(value, int | Decimal) and not isinstance(value, bool)
    assert Decimal(got) == Decimal(value) * 1_000_000  # exact: nothing was rounded


# -- windows -------------------------------------------------------------------------------------------


@SETTINGS
@given(st.text(max_size=12) | st.sampled_from([*WINDOWS, "Daily", " daily", "day", "month"]) | st.integers())
def test_a_window_is_one_of_three_names_exactly(window: Any) -> None:
    if window in WINDOWS:
        assert check_window(window) == window
    else:
        with pytest.raises(SpendRequestError):
            check_window(window)


@SETTINGS
@given(st.integers(0, 253_402_300_799), st.sampled_from(WINDOWS))
def test_window_ids_name_the_utc_day_and_month_containing_the_instant(now: int, window: str) -> None:
    wid = window_id(window, now)
    day = datetime.fromtimestamp(now, UTC).date()
    if window == "total":
        assert wid == "total"
    elif window == "daily":
        assert date.fromisoformat(wid.removeprefix("d")) == day
    else:
        assert wid == f"m{day:%Y-%m}"


# -- scopes --------------------------------------------------------------------------------------------

SCOPE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/+-]{0,127}")
valid_scopes = st.from_regex(SCOPE_RE, fullmatch=True)


@SETTINGS
@given(valid_scopes, st.sampled_from(WINDOWS), st.integers(0, 2**32))
def test_a_valid_scope_round_trips_through_its_counter_name(scope: str, window: str, now: int) -> None:
    assert check_scope(scope) == scope
    wid = window_id(window, now)
    assert counter_name(scope, window, wid).split("|") == [scope, window, wid]


@SETTINGS
@given(st.text(max_size=140) | st.integers() | st.none())
@example("user 42")
@example("{tag}")
@example("a|b")
@example("")
def test_any_other_scope_is_a_typed_error(scope: Any) -> None:
    if isinstance(scope, str) and SCOPE_RE.fullmatch(scope):
        assert check_scope(scope) == scope
        return
    with pytest.raises(SpendRequestError):
        check_scope(scope)


@SETTINGS
@given(st.lists(valid_scopes, max_size=10))
def test_a_chain_is_one_to_eight_distinct_scopes(chain: list[str]) -> None:
    if 1 <= len(chain) <= 8 and len(set(chain)) == len(chain):
        assert check_chain(chain) == tuple(chain)
    else:
        with pytest.raises(SpendRequestError):
            check_chain(chain)


# -- Redis URLs ----------------------------------------------------------------------------------------

redis_url = pytest.importorskip("litm.spend._ledger.redis_url")
hosts = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}(\.[a-z0-9-]{1,10}){0,3}", fullmatch=True) | st.sampled_from(
    ["127.0.0.1", "::1", "fe80::1", "10.0.0.7"]
)


@SETTINGS
@given(
    st.sampled_from(["redis", "rediss"]),
    hosts,
    st.integers(1, 65535),
    st.integers(0, redis_url.MAX_DB),
    st.text(max_size=8),
    st.text(max_size=8),
)
def test_a_valid_redis_url_round_trips(scheme: str, host: str, port: int, db: int, user: str, pw: str) -> None:
    parts = redis_url.RedisURL(scheme, host, port, db, "", user, pw)
    parsed = redis_url.parse_redis_url(parts.url)
    assert parsed == parts and parsed.password == pw
    assert redis_url.parse_redis_url(parsed.url) == parsed


@SETTINGS
@given(st.text(min_size=1, max_size=30).filter(lambda p: "\x00" not in p), st.integers(0, 99))
def test_a_unix_socket_url_round_trips(name: str, db: int) -> None:
    parts = redis_url.RedisURL("unix", "", 0, db, "/run/" + name)
    assert redis_url.parse_redis_url(parts.url) == parts


@SETTINGS
@given(
    st.sampled_from(["redis://", "rediss://", "unix://", "redis://127.0.0.1:6379", "redis://h", "unix:///s"]).flatmap(
        lambda prefix: st.text(max_size=30).map(lambda rest: prefix + rest)
    )
)
@example("redis://127.0.0.1:6379/abc")
@example("redis://127.0.0.1:99999/0")
@example("redis://127.0.0.1:abc/0")
@example("redis://[::1")
def test_any_redis_url_parses_canonically_or_is_a_typed_error(url: str) -> None:
    try:
        parsed = redis_url.parse_redis_url(url)
    except SpendRequestError as exc:
        assert "\n" not in str(exc)
        return
    assert redis_url.parse_redis_url(parsed.url) == parsed
    assert 0 <= parsed.db <= redis_url.MAX_DB and (parsed.scheme == "unix" or 1 <= parsed.port <= 65535)
    if parsed.scheme != "unix":  # a database in the path was all digits: nothing else falls back to 0
        db_text = url.split("://", 1)[1].split("?")[0].partition("/")[2]
        assert db_text == "" or (db_text.isdigit() and int(db_text) == parsed.db)


@SETTINGS
@given(st.text(max_size=30).map(lambda rest: "redis://127.0.0.1:6379/0?" + rest))
def test_any_query_string_is_read_or_a_typed_error_by_the_ledger(url: str) -> None:
    """What litm passes on to redis-py (query options) may be refused there too: still a typed error."""
    pytest.importorskip("redis")
    from litm.spend import RedisLedger

    try:
        RedisLedger(url).close()
    except SpendRequestError as exc:
        assert "\n" not in str(exc)
