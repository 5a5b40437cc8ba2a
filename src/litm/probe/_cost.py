"""What a probe costs in money: cached and uncached prompt tokens priced apart, from the spend price table.

Rates come from :class:`litm.spend.PriceTable` (the shipped, hash-checked snapshot; nothing is
fetched), looked up by the model's provider and name: plain input, cache reads, cache writes and output
each at their own rate, per call, at the long-context tier the call's input falls in
(:func:`litm.spend._cost.price_usage`). ``price_in`` / ``price_out`` (USD per million tokens, the CLI's
``--price-in`` / ``--price-out``) override the input and output rates; the table's cache rates are kept
for a model it knows, else cache tokens are charged as input (what a provider without a cache discount
bills). A model the table does not know and no override: the bill has token counts and no dollars.

Example:
    >>> from litm.spend import Usage
    >>> pricer = Pricer("claude-sonnet-4-5", "anthropic")
    >>> bill = pricer.bill([Usage(10_000, 20, cache_read_tokens=9_000), Usage(10_000, 20, cache_write_tokens=9_000)])
    >>> bill.cache_read_tokens, bill.cache_write_tokens, bill.usd
    (9000, 9000, '$0.04305')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from litm.errors import PriceUnknownError
from litm.models._base import Model
from litm.probe._rows import ProbeRow
from litm.spend import PriceTable, Usage
from litm.spend._cost import price_usage
from litm.spend._money import format_usd, rate_to_usd_per_mtok
from litm.spend._prices import ModelRates, default_table

__all__ = ["Bill", "Pricer", "provider_of", "row_usage"]


def provider_of(model: Model) -> str | None:
    """The price table's provider for a model spec (``openai``, ``anthropic``), else None."""
    scheme = str(getattr(model, "spec", "")).partition(":")[0]
    return scheme if scheme in ("openai", "anthropic") else None


def row_usage(row: ProbeRow) -> Usage:
    """The billed usage of one results row (``input_tokens`` counts every prompt token, cached or not)."""
    return Usage(
        int(row.get("input_tokens") or 0),
        int(row.get("output_tokens") or 0),
        cache_read_tokens=int(row.get("cached_tokens") or 0),
        cache_write_tokens=int(row.get("cache_write_tokens") or 0),
    )


@dataclass(frozen=True)
class Bill:
    """Token counts of a set of calls and, when the model is priced, what they cost (micro-dollars)."""

    calls: int
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    micros: int | None
    rates: str = ""

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens

    @property
    def usd(self) -> str | None:
        return None if self.micros is None else format_usd(self.micros)

    def to_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "uncached_input_tokens": self.uncached_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "micros": self.micros,
            "usd": self.usd,
            "rates": self.rates,
        }

    def describe(self) -> str:
        """One line: tokens by kind, and dollars when priced.

        >>> print(Bill(2, 3000, 2000, 500, 40, 1234, "input $3/MTok").describe())  # doctest: +NORMALIZE_WHITESPACE
        2 calls: 500 uncached + 2,000 cache-read + 500 cache-write input tokens,
        40 output tokens: $0.001234 (input $3/MTok)
        """
        tokens = (
            f"{self.calls} calls: {self.uncached_tokens:,} uncached + {self.cache_read_tokens:,} cache-read + "
            f"{self.cache_write_tokens:,} cache-write input tokens, {self.output_tokens:,} output tokens"
        )
        return f"{tokens}: {self.usd} ({self.rates})" if self.usd is not None else f"{tokens} ({self.rates})"


class Pricer:
    """Prices usages of one model; ``rates`` is None (and ``why`` says why) when the model has no price."""

    def __init__(
        self,
        model: str,
        provider: str | None = None,
        *,
        prices: PriceTable | None = None,
        price_in: float | None = None,
        price_out: float | None = None,
    ) -> None:
        table = prices or default_table()
        self.why = ""
        known: ModelRates | None = None
        try:
            known = table.rates(model, provider)
        except PriceUnknownError as exc:
            self.why = str(exc)
        if price_in is not None or price_out is not None:
            base = known.base if known is not None else None
            entry: dict[str, str] = {}
            for key, given, fallback in (
                ("input", price_in, base.input if base else None),
                ("output", price_out, base.output if base else None),
                ("cache_read", None, base.cache_read if base else None),
                ("cache_write", None, base.cache_write if base else None),
            ):
                if given is not None:
                    entry[key] = f"{given:.6f}"
                elif fallback is not None:
                    entry[key] = rate_to_usd_per_mtok(fallback)
            entry.setdefault("input", "0")
            known = table.with_prices({model: entry}).rates(model)
            self.why = ""
        self.rates = known

    def describe_rates(self) -> str:
        """The base rates in USD per million tokens (or why there are none)."""
        if self.rates is None:
            return f"no price: {self.why}; pass --price-in / --price-out"
        r = self.rates.base
        parts = [f"input ${rate_to_usd_per_mtok(r.input)}"]
        for name, value in (("cache read", r.cache_read), ("cache write", r.cache_write), ("output", r.output)):
            if value is not None:
                parts.append(f"{name} ${rate_to_usd_per_mtok(value)}")
        return "/MTok, ".join(parts) + f"/MTok; prices {self.rates.version}"

    def bill(self, usages: Iterable[Usage]) -> Bill:
        """Sum the usages and, when priced, their cost (each call at its own tier, rounded up per call)."""
        calls = inp = read = write = out = 0
        micros: int | None = 0 if self.rates is not None else None
        for u in usages:
            calls += 1
            inp += u.input_tokens
            read += u.cache_read_tokens
            write += u.cache_write_tokens
            out += u.output_tokens
            if self.rates is not None and micros is not None:
                micros += price_usage(self.rates, u)
        return Bill(calls, inp, read, write, out, micros, self.describe_rates())
