"""Money as integers: micro-dollars in the ledger, pico-dollars per token in rates.

Floats never hold money here: ten debits of $0.10 stored as floats sum to 0.9999999999999999, and a cap
that compares such sums to a limit admits or refuses the wrong call. Every amount the ledger stores is an
``int`` of micro-dollars (1 USD = 1,000,000 µ$). Rates are ``int`` pico-dollars per token (1 µ$ =
1,000,000 p$), which represents every published "USD per million tokens" price with up to six decimals
exactly, because 1 USD per million tokens is exactly 1 µ$ per token.

>>> parse_usd("12.50")
12500000
>>> format_usd(12500000)
'$12.50'
>>> cost = 1234 * rate_from_usd_per_mtok("0.15")   # 1,234 tokens at $0.15 / MTok, in p$
>>> micros_ceil(cost)                               # rounded up: a cap never under-charges
186
"""

from __future__ import annotations

import re
from decimal import Decimal

from litm.errors import SpendRequestError

MICROS_PER_USD = 1_000_000
PICOS_PER_MICRO = 1_000_000
#: The largest amount any ledger holds exactly: Redis' Lua numbers are doubles, exact up to 2**53 - 1
#: (about $9 billion in micro-dollars).
MAX_MICROS = 2**53 - 1

__all__ = [
    "CANONICAL",
    "MAX_MICROS",
    "MICROS_PER_USD",
    "PICOS_PER_MICRO",
    "check_micros",
    "format_usd",
    "micros_ceil",
    "parse_usd",
    "rate_from_usd_per_mtok",
    "rate_to_usd_per_mtok",
]


#: The one spelling of an amount read from text: ASCII digits with no leading zero, then at most six
#: decimals after a point (``"12.50"``, ``"0.000150"``, ``"100"``). Nothing else is guessed at: ``"5,00"``
#: is five dollars in one locale and five hundred in another, ``"1e3"`` and ``"$5"`` are not what a ledger
#: should have to interpret, and a seventh decimal is finer than the micro-dollar the ledgers count in.
CANONICAL = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]{1,6})?")
_TOO_FINE = re.compile(r"(?:0|[1-9][0-9]*)\.[0-9]{7,}")
#: Digits before the point that any amount can have: well above the largest a ledger holds ($9,007,199,254).
_MAX_WHOLE_DIGITS = 20


def _shown(value: object) -> str:
    """``repr(value)``, cut short: an error names the value on one line, not a megabyte of it."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _decimal(value: object, what: str) -> Decimal:
    shown = _shown(value)
    if isinstance(value, (bool, float)):
        # A float has already lost the amount the user meant (0.1 is 0.1000000000000000055...).
        kind = type(value).__name__
        raise SpendRequestError(f"{what} {shown} is a {kind}; pass a string such as '12.50' or a Decimal")
    if isinstance(value, str):
        if _TOO_FINE.fullmatch(value):
            raise SpendRequestError(f"{what} {shown} has more than 6 decimals (finer than one micro-dollar)")
        if not CANONICAL.fullmatch(value) or len(value.partition(".")[0]) > _MAX_WHOLE_DIGITS:
            raise SpendRequestError(
                f"{what} {shown} is not a plain decimal number of dollars: write ASCII digits with at most "
                "6 decimals and nothing else, such as '12.50' (no sign, $, comma, space or exponent)"
            )
        return Decimal(value)
    if isinstance(value, int):
        if value < 0:
            raise SpendRequestError(f"{what} {shown} is negative")
        if value >= 10**_MAX_WHOLE_DIGITS:
            raise SpendRequestError(f"{what} {shown} is above the largest amount a ledger holds")
        return Decimal(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise SpendRequestError(f"{what} {shown} is not a finite number")
        if value.is_signed():  # negative, or a negative zero: a sign means a mistake, never an amount
            raise SpendRequestError(f"{what} {shown} is negative")
        if value and value.adjusted() >= _MAX_WHOLE_DIGITS:
            raise SpendRequestError(f"{what} {shown} is above the largest amount a ledger holds")
        return value
    raise SpendRequestError(f"{what} {shown} is a {type(value).__name__}, not a string, int or Decimal")


def parse_usd(value: str | int | Decimal, *, what: str = "amount") -> int:
    """Dollars (``"12.50"``, ``"0.000150"``, ``12``, ``Decimal("1.5")``) as integer micro-dollars.

    A string must be in the :data:`CANONICAL` form: ASCII digits, no leading zero, at most six decimals
    after a point, and nothing else (no sign, ``$``, comma, space, exponent, ``NaN`` or ``Infinity``). An
    ``int`` means whole dollars; a ``Decimal`` must be finite, unsigned and exact to the micro-dollar.
    Anything else raises :class:`~litm.errors.SpendRequestError` naming the value, never a guess.

    >>> parse_usd("0.000150"), parse_usd(3), parse_usd("12.50")
    (150, 3000000, 12500000)
    >>> parse_usd("5,00")
    Traceback (most recent call last):
    ...
    litm.errors.SpendRequestError: amount '5,00' is not a plain decimal number of dollars: ...
    """
    return _scaled(value, MICROS_PER_USD, what, "is finer than one micro-dollar ($0.000001)")


def _scaled(value: str | int | Decimal, factor: int, what: str, too_fine: str) -> int:
    """``value`` x ``factor`` as an exact int; :class:`SpendRequestError` when it would need rounding.

    Computed from the decimal digits, not with Decimal arithmetic, whose 28-digit context would round
    ``Decimal("1.0000000000000000000000000001")`` to one dollar without a word.
    """
    _, digits, exponent = _decimal(value, what).as_tuple()
    assert isinstance(exponent, int)  # _decimal refused NaN and infinities
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    number = int("".join(map(str, digits)) or "0")
    shift = exponent + len(str(factor)) - 1  # factor is a power of ten
    unit = int(10 ** abs(shift))
    if shift < 0 and number % unit:
        raise SpendRequestError(f"{what} {_shown(value)} {too_fine}")
    scaled = number * unit if shift >= 0 else number // unit
    if scaled > MAX_MICROS:
        raise SpendRequestError(f"{what} {_shown(value)} is above the largest amount a ledger holds exactly")
    return scaled


def format_usd(micros: int) -> str:
    """Integer micro-dollars as ``$D.CC`` (more decimals only when they are not zero).

    >>> format_usd(1500000), format_usd(150), format_usd(-2500000)
    ('$1.50', '$0.00015', '-$2.50')
    """
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MICROS_PER_USD)
    digits = f"{frac:06d}".rstrip("0")
    return f"{sign}${whole}.{digits.ljust(2, '0')}"


def check_micros(value: object, what: str) -> int:
    """``value`` as a non-negative int of micro-dollars (bools and floats refused).

    >>> check_micros(5, "cost")
    5
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpendRequestError(f"{what} must be an int of micro-dollars, got {value!r}")
    if value < 0:
        raise SpendRequestError(f"{what} must not be negative, got {value}")
    if value > MAX_MICROS:
        raise SpendRequestError(f"{what} {value} is above the largest amount a ledger holds exactly ({MAX_MICROS})")
    return value


def rate_from_usd_per_mtok(value: str | int | Decimal, *, what: str = "rate") -> int:
    """A price in USD per million tokens as integer pico-dollars per token.

    >>> rate_from_usd_per_mtok("0.15"), rate_from_usd_per_mtok("0.003625")
    (150000, 3625)
    """
    return _scaled(value, PICOS_PER_MICRO, what, "USD/MTok is finer than $0.000001 per million tokens")


def rate_to_usd_per_mtok(picos: int) -> str:
    """The inverse of :func:`rate_from_usd_per_mtok`, as a plain decimal string.

    >>> rate_to_usd_per_mtok(150000)
    '0.15'
    """
    text = str(Decimal(picos) / PICOS_PER_MICRO)
    return text.rstrip("0").rstrip(".") if "." in text else text


def micros_ceil(picos: int) -> int:
    """Pico-dollars rounded UP to whole micro-dollars (a cap that rounds down would leak money).

    >>> micros_ceil(1), micros_ceil(1_000_000), micros_ceil(0)
    (1, 1, 0)
    """
    return -(-picos // PICOS_PER_MICRO)
