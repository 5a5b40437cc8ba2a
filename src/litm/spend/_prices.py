"""The price table: per-model token rates from a shipped, versioned, hashed snapshot, plus user overrides.

The snapshot ``litm/spend/data/prices.json`` is generated from the ``genai-prices`` package (MIT, by
Pydantic) with ``scripts/refresh_prices.py``; ``data/README.md`` records its version, date and sha256.
litm never fetches prices at run time. Loading re-hashes the content and refuses a file whose sha256
does not match (:class:`~litm.errors.PriceTableError`), so a hand-edited or truncated table cannot price
calls silently.

Rates are integer pico-dollars per token (see :mod:`litm.spend._money`). Long-context tiers follow the
providers' cliff rule: once a request's input passes a tier's start, every token of that request (input,
output and cache) pays the tier's rates.

An unknown model, an unknown provider or a missing rate raises :class:`~litm.errors.PriceUnknownError`:
pricing something at $0 because it is missing from a table is how caps get bypassed.

>>> table = PriceTable.load()
>>> rates = table.rates("gpt-4o-mini", provider="openai")
>>> rates.base.input, rates.base.output            # p$ per token = $0.15 and $0.60 per MTok
(150000, 600000)
>>> custom = table.with_prices({"my-llama": {"input": "0.10", "output": "0.40"}})
>>> custom.rates("my-llama").base.output
400000
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from litm.errors import PriceTableError, PriceUnknownError, SpendRequestError
from litm.spend._money import rate_from_usd_per_mtok

__all__ = ["ModelRates", "PriceTable", "TokenRates", "default_table"]

RATE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
_SNAPSHOT = "prices.json"


@dataclass(frozen=True)
class TokenRates:
    """Pico-dollars per token for each kind of token; ``None`` where the provider publishes no such rate."""

    input: int
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cache_write_1h: int | None = None


@dataclass(frozen=True)
class ModelRates:
    """The rates of one model at one date, from one price table version.

    ``tiers`` are ``(start, rates)`` pairs in ascending order; a request with more than ``start`` input
    tokens pays ``rates`` for all its tokens.
    """

    provider: str
    model: str
    version: str
    base: TokenRates
    tiers: tuple[tuple[int, TokenRates], ...] = ()
    unpriced: tuple[str, ...] = ()

    def at(self, input_tokens: int) -> TokenRates:
        """The rates a request with ``input_tokens`` input tokens (cached ones included) pays.

        >>> r = PriceTable.load().rates("claude-sonnet-4-5", provider="anthropic")
        >>> r.at(200_000).input, r.at(200_001).input
        (3000000, 6000000)
        """
        for start, rates in reversed(self.tiers):
            if input_tokens > start:
                return rates
        return self.base


def _match(logic: Mapping[str, Any], text: str) -> bool:
    """genai-prices' match clauses, evaluated on a lower-cased model or provider name."""
    if "or" in logic:
        return any(_match(c, text) for c in logic["or"])
    if "and" in logic:
        return all(_match(c, text) for c in logic["and"])
    if "equals" in logic:
        return text == str(logic["equals"]).lower()
    if "starts_with" in logic:
        return text.startswith(str(logic["starts_with"]).lower())
    if "ends_with" in logic:
        return text.endswith(str(logic["ends_with"]).lower())
    if "contains" in logic:
        return str(logic["contains"]).lower() in text
    if "regex" in logic:
        return re.search(str(logic["regex"]), text) is not None
    raise PriceTableError(f"unknown match clause {sorted(logic)}")


def _tiered(raw: Mapping[str, Any], where: str) -> tuple[TokenRates, tuple[tuple[int, TokenRates], ...]]:
    """Per-key rates (each a decimal string or ``{"base", "tiers"}``) as base rates plus merged tiers."""
    bases: dict[str, int] = {}
    per_key_tiers: dict[str, list[tuple[int, int]]] = {}
    for key, value in raw.items():
        if key not in RATE_KEYS:
            raise PriceTableError(f"{where}: unknown rate key {key!r}")
        if isinstance(value, Mapping):
            bases[key] = rate_from_usd_per_mtok(value["base"], what=f"{where} {key}")
            per_key_tiers[key] = [
                (int(start), rate_from_usd_per_mtok(price, what=f"{where} {key}"))
                for start, price in value["tiers"]
            ]
        else:
            bases[key] = rate_from_usd_per_mtok(value, what=f"{where} {key}")
    if "input" not in bases:
        raise PriceUnknownError(f"{where} has no input rate")

    def rates_above(count: int) -> TokenRates:
        picked = dict(bases)
        for key, tiers in per_key_tiers.items():
            for start, price in tiers:
                if count > start:
                    picked[key] = price
        return TokenRates(**picked)

    starts = sorted({start for tiers in per_key_tiers.values() for start, _ in tiers})
    return TokenRates(**bases), tuple((start, rates_above(start + 1)) for start in starts)


def _canonical(doc: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class PriceTable:
    """Model prices by provider, loaded from a snapshot document and optionally overridden by the user.

    Use :meth:`load` for the shipped snapshot (or another file in the same format) and
    :meth:`with_prices` to add or replace models. ``version`` names exactly the prices in force: a
    reservation records it, and a settle refuses to price with a different version.
    """

    def __init__(self, doc: Mapping[str, Any], *, overrides: Mapping[str, Mapping[str, object]] | None = None) -> None:
        if doc.get("format") != 1 or not isinstance(doc.get("providers"), list):
            raise PriceTableError("price table: expected format 1 with a 'providers' list")
        self.meta: dict[str, Any] = {k: v for k, v in doc.items() if k != "providers"}
        self._providers: list[dict[str, Any]] = doc["providers"]
        self._overrides: dict[str, dict[str, Any]] = {}
        version = str(doc.get("version", "unversioned"))
        if overrides:
            for name, raw in overrides.items():
                if not isinstance(name, str) or not name or not isinstance(raw, Mapping):
                    raise SpendRequestError(f"price override {name!r} must map a model name to rates")
                _tiered(raw, f"price override {name!r}")  # validate now, not at the first call
                self._overrides[name.lower()] = dict(raw)
            digest = hashlib.sha256(json.dumps(self._overrides, sort_keys=True).encode()).hexdigest()[:12]
            version = f"{version}+user-{digest}"
        self.version = version
        self._cache: dict[tuple[str, str | None, date | None, tuple[tuple[str, str], ...]], ModelRates] = {}

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """The shipped snapshot (``path=None``) or a snapshot file, after checking its sha256."""
        try:
            if path is None:
                text = resources.files("litm.spend").joinpath("data").joinpath(_SNAPSHOT).read_text(encoding="utf-8")
            else:
                text = Path(path).read_text(encoding="utf-8")
            doc = json.loads(text)
        except (OSError, ValueError) as exc:
            raise PriceTableError(f"price table {path or _SNAPSHOT}: cannot read it ({exc})") from None
        if not isinstance(doc, dict):
            raise PriceTableError(f"price table {path or _SNAPSHOT}: not a JSON object")
        expected = doc.get("sha256")
        actual = hashlib.sha256(_canonical(doc)).hexdigest()
        if expected != actual:
            raise PriceTableError(f"price table {path or _SNAPSHOT}: sha256 {actual} does not match {expected}")
        return cls(doc)

    def with_prices(self, prices: Mapping[str, Mapping[str, object]]) -> PriceTable:
        """A copy whose ``prices`` (model name -> rates in USD per MTok) take precedence over the table.

        Rates are decimal strings (``{"input": "0.5", "output": "1.5", "cache_read": "0.05"}``), tiers
        as ``{"base": "3", "tiers": [[200000, "6"]]}``. The copy has its own ``version``.
        """
        merged = {**self._overrides, **{k.lower(): dict(v) for k, v in prices.items()}}
        doc = {**self.meta, "providers": self._providers}
        return PriceTable(doc, overrides=merged)

    def rates(
        self,
        model: str,
        provider: str | None = None,
        *,
        on: date | None = None,
        context: Mapping[str, str] | None = None,
    ) -> ModelRates:
        """The rates of ``model`` (at provider ``provider``, on UTC date ``on``, for a request ``context``
        such as ``{"service_tier": "priority"}``); :class:`~litm.errors.PriceUnknownError` when unknown.

        ``on=None`` uses the latest prices of the table (the last dated entry).
        """
        if not isinstance(model, str) or not model:
            raise SpendRequestError(f"model must be a non-empty string, got {model!r}")
        ctx = tuple(sorted((context or {}).items()))
        key = (model.lower(), provider.lower() if provider else None, on, ctx)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._resolve(model, provider, on, dict(ctx))
        return found

    def _resolve(self, model: str, provider: str | None, on: date | None, context: dict[str, str]) -> ModelRates:
        ref = model.lower()
        for name in (f"{provider.lower()}/{ref}" if provider else None, ref):
            if name is not None and name in self._overrides:
                base, tiers = _tiered(self._overrides[name], f"price override {name!r}")
                return ModelRates(provider or "user", model, self.version, base, tiers)
        prov = self._provider(ref, provider)
        entry, owner = self._model(prov, ref)
        if entry is None:
            raise PriceUnknownError(
                f"no price for model {model!r} at provider {prov['id']!r} in price table {self.version}; "
                "pass prices={...} or an explicit amount"
            )
        raw = self._dated(entry["prices"], on)
        # As in genai-prices: variants are tried first to last, independently for each rate key.
        chosen: dict[str, Any] = {}
        for variant in entry.get("variants", ()):
            active = variant["start_date"] is None or on is None or date.fromisoformat(variant["start_date"]) <= on
            if active and all(context.get(k) == v for k, v in variant["when"].items()):
                for k, v in variant["rates"].items():
                    chosen.setdefault(k, v)
        raw.update(chosen)
        base, tiers = _tiered(raw, f"{owner}/{entry['id']}")
        return ModelRates(owner, str(entry["id"]), self.version, base, tiers, tuple(entry.get("unpriced", ())))

    def _provider(self, ref: str, provider: str | None) -> dict[str, Any]:
        if provider is not None:
            wanted = provider.lower().strip()
            for prov in self._providers:
                if prov["id"] == wanted:
                    return prov
            for prov in self._providers:
                if "provider_match" in prov and _match(prov["provider_match"], wanted):
                    return prov
            raise PriceUnknownError(f"unknown provider {provider!r} in price table {self.version}")
        for prov in self._providers:
            if "model_match" in prov and _match(prov["model_match"], ref):
                return prov
        raise PriceUnknownError(f"no provider in price table {self.version} serves model {ref!r}; pass provider=")

    def _model(self, prov: Mapping[str, Any], ref: str) -> tuple[dict[str, Any] | None, str]:
        for entry in prov["models"]:
            if _match(entry["match"], ref):
                return entry, str(prov["id"])
        # One step of fallback, as in genai-prices: a cloud that resells another provider's models.
        for other_id in prov.get("fallback", ()):
            other = next((p for p in self._providers if p["id"] == other_id), None)
            for entry in other["models"] if other else ():
                if _match(entry["match"], ref):
                    return entry, str(prov["id"])
        return None, str(prov["id"])

    @staticmethod
    def _dated(schedule: list[dict[str, Any]], on: date | None) -> dict[str, Any]:
        picked = schedule[0]["rates"]
        for item in schedule:
            start = item["start_date"]
            if start is None or on is None or date.fromisoformat(start) <= on:
                picked = item["rates"]
        return dict(picked)

    def describe(self) -> dict[str, Any]:
        """The table's metadata (version, source, licence, date, sha256, counts), as stored."""
        return {**self.meta, "version": self.version}


@functools.cache
def default_table() -> PriceTable:
    """The shipped snapshot, loaded and hash-checked once per process."""
    return PriceTable.load()

