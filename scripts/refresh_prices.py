"""Regenerate litm's shipped price snapshot (src/litm/spend/data/prices.json) from the genai-prices package.

litm never fetches prices at run time: a maintainer runs this script, reviews the diff and commits it.
Run it with an interpreter that has the pinned source package (it is not a litm dependency)::

    python -m venv /tmp/genai-prices && /tmp/genai-prices/bin/pip install 'genai-prices==0.2.3'
    /tmp/genai-prices/bin/python scripts/refresh_prices.py

What is kept, and why:
- token rates only (input, output, cache read, cache write 5 min and 1 h), converted to decimal strings in
  USD per million tokens; other units a model bills (web searches, audio seconds, images) are listed under
  ``unpriced`` so that the docs can say the cap does not cover them;
- long-context tiers as genai-prices models them (a cliff: past ``start`` input tokens every token of that
  request pays the tier rate);
- price changes by date (``start_date``), so a snapshot stays right across a published change;
- time-of-day prices (off-peak discounts) are folded into the highest rate of the day: a cap that assumed
  the discount would under-reserve when the call lands in the peak window;
- request variants (``service_tier``, batch processing) so that a caller who names one pays its rates.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

from genai_prices import data as gp_data
from genai_prices import types as gp

SOURCE_PACKAGE = "genai-prices"
TOKEN_KEYS = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write",
    "cache_write_1h_mtok": "cache_write_1h",
}
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "litm" / "spend" / "data" / "prices.json"


def clause(logic: Any) -> dict[str, Any]:
    """genai-prices match logic as plain JSON (the same seven clause kinds)."""
    if isinstance(logic, gp.ClauseOr):
        return {"or": [clause(c) for c in logic.or_]}
    if isinstance(logic, gp.ClauseAnd):
        return {"and": [clause(c) for c in logic.and_]}
    for cls, key in (
        (gp.ClauseEquals, "equals"), (gp.ClauseStartsWith, "starts_with"), (gp.ClauseEndsWith, "ends_with"),
        (gp.ClauseContains, "contains"), (gp.ClauseRegex, "regex"),
    ):  # fmt: skip
        if isinstance(logic, cls):
            return {key: getattr(logic, key)}
    raise TypeError(f"unknown match clause {logic!r}")


ROUNDED: list[str] = []


def dec(value: Decimal) -> str:
    """A rate as a decimal string litm can hold exactly (six decimals of USD per million tokens).

    Some source rates carry float noise (``0.18000000000000002``): snap to 12 decimals first, then round
    anything still finer UP, so that a rounded rate never under-charges; rounded rates are counted.
    """
    snapped = value.quantize(Decimal("1e-12"), rounding=ROUND_HALF_EVEN)
    kept = snapped.quantize(Decimal("1e-6"), rounding=ROUND_CEILING)
    if kept != snapped:
        ROUNDED.append(str(value))
    return format(kept.normalize(), "f")


def rate(value: Any) -> Any:
    if isinstance(value, gp.TieredPrices):
        return {"base": dec(value.base), "tiers": [[t.start, dec(t.price)] for t in value.tiers]}
    return dec(value)


def bigger(a: Any, b: Any, where: str) -> Any:
    """The higher of two rates for the same key (time-of-day folding)."""
    if a is None or a == b:
        return b if a is None else a
    if isinstance(a, gp.TieredPrices) or isinstance(b, gp.TieredPrices):
        raise ValueError(f"{where}: time-of-day prices with tiers are not supported; extend refresh_prices.py")
    return max(a, b)


def token_rates(price: gp.ModelPrice) -> dict[str, Any]:
    return {TOKEN_KEYS[k]: rate(v) for k, v in price.__dict__.items() if k in TOKEN_KEYS and v is not None}


def other_units(price: gp.ModelPrice) -> set[str]:
    return {k for k, v in price.__dict__.items() if v is not None and k not in TOKEN_KEYS and not k.startswith("_")}


def schedule(model: gp.ModelInfo, where: str) -> list[dict[str, Any]]:
    """Prices by start date, each folded over every minute of the day (the peak rate wins)."""
    if isinstance(model.prices, gp.ModelPrice):
        return [{"start_date": None, "rates": token_rates(model.prices)}]
    starts = sorted({c.constraint.start_date for c in model.prices if isinstance(c.constraint, gp.StartDateConstraint)})
    out = []
    for start in [None, *starts]:
        day = start or date(2000, 1, 1)
        merged: dict[str, Any] = {}
        for minute in range(0, 24 * 60):
            at = datetime.combine(day, time(0, 0), UTC) + timedelta(minutes=minute)
            price = model.get_prices(at)
            for key, value in price.__dict__.items():
                if key in TOKEN_KEYS and value is not None:
                    merged[key] = bigger(merged.get(key), value, where)
        rates = {TOKEN_KEYS[k]: rate(v) for k, v in merged.items()}
        entry = {"start_date": start.isoformat() if start else None, "rates": rates}
        if not out or out[-1]["rates"] != entry["rates"]:
            out.append(entry)
    return out


def variants(model: gp.ModelInfo) -> list[dict[str, Any]]:
    out = []
    for variant in model.price_variants or ():
        constraint = variant.constraint
        if isinstance(constraint, gp.TimeOfDateConstraint):
            raise ValueError(f"{model.id}: time-of-day price variants are not supported")
        rates = token_rates(variant.prices)
        if rates:
            start = constraint.start_date.isoformat() if isinstance(constraint, gp.StartDateConstraint) else None
            out.append({"when": dict(sorted(variant.when.items())), "start_date": start, "rates": rates})
    return out


def build() -> dict[str, Any]:
    providers = []
    n_models = 0
    for provider in gp_data.providers:
        models = []
        for model in provider.models:
            where = f"{provider.id}/{model.id}"
            sched = schedule(model, where)
            if not any("input" in entry["rates"] for entry in sched):
                continue  # no token price at all (speech, search, storage): nothing the cap can price
            prices = [model.prices] if isinstance(model.prices, gp.ModelPrice) else [c.prices for c in model.prices]
            unpriced = sorted(set().union(*(other_units(p) for p in prices)))
            item: dict[str, Any] = {"id": model.id, "match": clause(model.match), "prices": sched}
            if model.context_window:
                item["context_window"] = model.context_window
            if var := variants(model):
                item["variants"] = var
            if unpriced:
                item["unpriced"] = unpriced
            models.append(item)
        if not models:
            continue
        n_models += len(models)
        entry: dict[str, Any] = {"id": provider.id, "name": provider.name, "models": models}
        if provider.model_match is not None:
            entry["model_match"] = clause(provider.model_match)
        if provider.provider_match is not None:
            entry["provider_match"] = clause(provider.provider_match)
        if provider.fallback_model_providers:
            entry["fallback"] = list(provider.fallback_model_providers)
        providers.append(entry)
    pkg_version = version(SOURCE_PACKAGE)
    return {
        "format": 1,
        "version": f"genai-prices-{pkg_version}",
        "generated": datetime.now(UTC).date().isoformat(),
        "unit": "USD per million tokens, decimal strings",
        "source": {
            "name": "genai-prices",
            "package": f"{SOURCE_PACKAGE}=={pkg_version}",
            "url": "https://github.com/pydantic/genai-prices",
            "licence": "MIT",
            "copyright": "Copyright (c) Pydantic Services Inc. 2025 to present",
            "script": "scripts/refresh_prices.py",
        },
        "counts": {"providers": len(providers), "models": n_models, "rates_rounded_up": len(ROUNDED)},
        "providers": providers,
    }


def canonical(doc: dict[str, Any]) -> bytes:
    """The bytes the sha256 covers: the document without its sha256, keys sorted, no whitespace."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    doc = build()
    doc["sha256"] = hashlib.sha256(canonical(doc)).hexdigest()
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out}: {doc['counts']['models']} models from {doc['counts']['providers']} providers, "
        f"{doc['version']}, sha256 {doc['sha256']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
