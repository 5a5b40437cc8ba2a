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

from decimal import Decimal, InvalidOperation

from litm.errors import SpendRequestError

MICROS_PER_USD = 1_000_000
PICOS_PER_MICRO = 1_000_000
#: The largest amount any ledger holds exactly: Redis' Lua numbers are doubles, exact up to 2**53 - 1
#: (about $9 billion in micro-dollars).
MAX_MICROS = 2**53 - 1

__all__ = [
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


def _decimal(value: object, what: str) -> Decimal:
    if isinstance(value, (bool, float)):
        # A float has already lost the amount the user meant (0.1 is 0.1000000000000000055...).
        raise SpendRequestError(f"{what} {value!r} is a float; pass a string such as '{value}' or a Decimal")
    if isinstance(value, int | Decimal):
        dec = Decimal(value)
    elif isinstance(value, str):
        text = value.strip().removeprefix("$").replace("_", "").replace(",", "")
        try:
            dec = Decimal(text)
        except InvalidOperation:
            raise SpendRequestError(f"{what} {value!r} is not a number of dollars") from None
    else:
        raise SpendRequestError(f"{what} {value!r} is a {type(value).__name__}, not a string, int or Decimal")
    if not dec.is_finite():
        raise SpendRequestError(f"{what} {value!r} is not a finite number")
    if dec < 0:
        raise SpendRequestError(f"{what} {value!r} is negative")
    return dec


def parse_usd(value: str | int | Decimal, *, what: str = "amount") -> int:
    """Dollars (``"12.50"``, ``"$0.000150"``, ``12``, ``Decimal("1.5")``) as integer micro-dollars.

    An ``int`` means whole dollars. Floats, negative amounts and amounts finer than one micro-dollar
    raise :class:`~litm.errors.SpendRequestError` instead of being rounded silently.

    >>> parse_usd("$0.000150"), parse_usd(3)
    (150, 3000000)
    """
    return _scaled(value, MICROS_PER_USD, what, "is finer than one micro-dollar ($0.000001)")


def _scaled(value: str | int | Decimal, factor: int, what: str, too_fine: str) -> int:
    """``value`` x ``factor`` as an exact int; :class:`SpendRequestError` when it would need rounding."""
    dec = _decimal(value, what) * factor
    if dec != dec.to_integral_value():
        raise SpendRequestError(f"{what} {value!r} {too_fine}")
    return check_micros(int(dec), what)


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
