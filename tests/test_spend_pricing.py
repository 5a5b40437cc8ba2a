"""Money, the shipped price snapshot, worst-case holds and the pricing of real provider usage objects."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import pytest
from anthropic.types import CacheCreation
from anthropic.types import Usage as AnthropicUsage
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails
from openai.types.responses import ResponseUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from litm.errors import PriceTableError, PriceUnknownError, SpendRequestError
from litm.models import Completion
from litm.spend import PriceTable, Usage, price_completion, usage_from
from litm.spend._cost import price_usage, worst_case
from litm.spend._money import format_usd, micros_ceil, parse_usd, rate_from_usd_per_mtok

DATA = Path(__file__).resolve().parent.parent / "src" / "litm" / "spend" / "data"
TABLE = PriceTable.load()


# -- money ---------------------------------------------------------------------------------------------


def test_dollars_parse_to_exact_micros_and_floats_are_refused() -> None:
    assert parse_usd("0.1") * 10 == parse_usd("1") == 1_000_000
    assert parse_usd("1250.50") == 1_250_500_000
    assert parse_usd(Decimal("0.000001")) == 1 and parse_usd(2) == 2_000_000
    for bad in (0.1, "-1", "abc", "0.0000001", "nan", None, True, "$1,250.50", "5,00", "1e3"):
        with pytest.raises(SpendRequestError):
            parse_usd(bad)  # type: ignore[arg-type]
    assert format_usd(1) == "$0.000001" and format_usd(10**12) == "$1000000.00"
    assert micros_ceil(999_999) == 1 and micros_ceil(1_000_001) == 2


# -- the snapshot --------------------------------------------------------------------------------------


def test_snapshot_is_versioned_hashed_attributed_and_documented() -> None:
    meta = TABLE.describe()
    assert meta["version"].startswith("genai-prices-") and meta["source"]["licence"] == "MIT"
    assert meta["source"]["package"].startswith("genai-prices==") and meta["generated"]
    readme = (DATA / "README.md").read_text()
    assert meta["sha256"] in readme and meta["source"]["package"] in readme and "MIT" in readme


def test_tampered_snapshot_is_refused(tmp_path: Path) -> None:
    doc = json.loads((DATA / "prices.json").read_text())
    doc["providers"][0]["models"][0]["prices"][0]["rates"]["input"] = "0"
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(PriceTableError, match="sha256"):
        PriceTable.load(path)
    body = json.dumps({k: v for k, v in doc.items() if k != "sha256"}, sort_keys=True, separators=(",", ":"))
    doc["sha256"] = hashlib.sha256(body.encode()).hexdigest()  # re-hashed by a maintainer: accepted
    path.write_text(json.dumps(doc))
    assert PriceTable.load(path).version == TABLE.version


def test_unknown_model_or_provider_blocks() -> None:
    with pytest.raises(PriceUnknownError, match="'gpt-nonexistent-9'"):
        TABLE.rates("gpt-nonexistent-9", provider="openai")
    with pytest.raises(PriceUnknownError, match="'no-such-cloud'"):
        TABLE.rates("gpt-4o-mini", provider="no-such-cloud")
    with pytest.raises(PriceUnknownError, match="pass provider="):
        TABLE.rates("totally-unknown-model")


def test_rates_resolve_by_provider_alias_date_and_request_variant() -> None:
    mini = TABLE.rates("gpt-4o-mini-2024-07-18")  # provider found from the model name
    assert (mini.provider, mini.model, mini.base.input, mini.base.output) == ("openai", "gpt-4o-mini", 150_000, 600_000)
    priority = TABLE.rates("gpt-4o-mini", provider="openai", context={"service_tier": "priority"})
    assert priority.base.input > mini.base.input
    # deepseek-chat has an off-peak discount: the snapshot keeps the peak rate, never the discount.
    assert TABLE.rates("deepseek-chat", provider="deepseek").base.input == rate_from_usd_per_mtok("0.27")


def test_user_prices_override_and_change_the_version() -> None:
    custom = TABLE.with_prices(
        {"my-llama": {"input": "0.10", "output": "0.40"}, "gpt-4o-mini": {"input": "1", "output": "2"}}
    )
    assert custom.version != TABLE.version and custom.version.startswith(TABLE.version + "+user-")
    assert custom.rates("my-llama").base.output == 400_000
    assert custom.rates("gpt-4o-mini", provider="openai").base.input == 1_000_000
    with pytest.raises(PriceUnknownError, match="no input rate"):
        TABLE.with_prices({"broken": {"output": "1"}})
    with pytest.raises(SpendRequestError):
        TABLE.with_prices({"broken": {"input": "-1", "output": "1"}})


# -- worst case ----------------------------------------------------------------------------------------


def test_worst_case_is_exact_rounds_up_and_needs_max_tokens() -> None:
    mini = TABLE.rates("gpt-4o-mini", provider="openai")
    assert worst_case(mini, input_tokens=1000, input_exact=True, max_tokens=500).micros == 450
    assert worst_case(mini, input_tokens=1, input_exact=True, max_tokens=1).micros == 1  # 0.75 µ$ rounds up
    approx = worst_case(mini, input_tokens=1000, input_exact=False, max_tokens=500)
    assert approx.input_tokens == 1250 and approx.margin == 0.25 and approx.micros == 488  # 187.5 + 300, up
    stated = worst_case(mini, input_tokens=1000, input_exact=False, max_tokens=500, margin=0.15)
    assert stated.input_tokens == 1150 and stated.micros == 473
    with pytest.raises(SpendRequestError, match="max_tokens is required"):
        worst_case(mini, input_tokens=10, input_exact=True, max_tokens=None)
    with pytest.raises(SpendRequestError):
        worst_case(mini, input_tokens=-1, input_exact=True, max_tokens=5)


def test_worst_case_takes_the_long_context_tier_and_the_cache_write_rate() -> None:
    sonnet = TABLE.rates("claude-sonnet-4-5", provider="anthropic")
    small = worst_case(sonnet, input_tokens=200_000, input_exact=True, max_tokens=1000, cache_writes=False)
    assert small.tier_start is None and small.micros == 200_000 * 3 + 1000 * 15
    big = worst_case(sonnet, input_tokens=200_001, input_exact=True, max_tokens=1000, cache_writes=False)
    assert big.tier_start == 200_000 and big.micros == 200_001 * 6 + micros_ceil(1000 * 22_500_000)
    # An approximate count of 180,000 could really be over 200,000: the margin pushes it into the tier.
    assert worst_case(sonnet, input_tokens=180_000, input_exact=False, max_tokens=10).tier_start == 200_000
    # Writing the prompt to a 1 h cache costs 2x input on Anthropic: the default hold covers it.
    writes = worst_case(sonnet, input_tokens=1000, input_exact=True, max_tokens=10)
    assert writes.micros == 1000 * 6 + 10 * 15


# -- real usage objects ----------------------------------------------------------------------------------


def test_openai_chat_and_responses_usage_include_cached_tokens() -> None:
    mini = TABLE.rates("gpt-4o-mini", provider="openai")
    chat = CompletionUsage(prompt_tokens=1000, completion_tokens=20, total_tokens=1020,
                           prompt_tokens_details=PromptTokensDetails(cached_tokens=800))  # fmt: skip
    assert usage_from(chat) == Usage(1000, 20, cache_read_tokens=800)
    assert price_usage(mini, usage_from(chat)) == 30 + 60 + 12
    responses = ResponseUsage(input_tokens=1000, output_tokens=20, total_tokens=1020,
                              input_tokens_details=InputTokensDetails(cached_tokens=800, cache_write_tokens=100),
                              output_tokens_details=OutputTokensDetails(reasoning_tokens=5))  # fmt: skip
    assert usage_from(responses) == Usage(1000, 20, cache_read_tokens=800, cache_write_tokens=100)
    assert usage_from({"usage": {"prompt_tokens": 5, "completion_tokens": 1}}) == Usage(5, 1)


def test_anthropic_input_tokens_exclude_cache_reads_and_writes() -> None:
    sonnet = TABLE.rates("claude-sonnet-4-5", provider="anthropic")
    usage = AnthropicUsage(input_tokens=100, output_tokens=50, cache_read_input_tokens=1000,
                           cache_creation_input_tokens=400,
                           cache_creation=CacheCreation(ephemeral_5m_input_tokens=300, ephemeral_1h_input_tokens=100))
    got = usage_from(usage)
    assert got == Usage(1500, 50, cache_read_tokens=1000, cache_write_tokens=300, cache_write_1h_tokens=100)
    # 100 x $3 + 1000 x $0.30 + 300 x $3.75 + 100 x $6 + 50 x $15 per MTok, in micro-dollars
    assert price_usage(sonnet, got) == micros_ceil(100 * 3_000_000 + 1000 * 300_000 + 300 * 3_750_000
                                                    + 100 * 6_000_000 + 50 * 15_000_000)  # fmt: skip


def test_usage_that_cannot_be_read_is_refused() -> None:
    with pytest.raises(SpendRequestError, match="no usage"):
        usage_from({"usage": None})
    with pytest.raises(SpendRequestError, match="not an int"):
        usage_from({"prompt_tokens": "12", "completion_tokens": 1})
    with pytest.raises(SpendRequestError, match="cache tokens"):
        Usage(10, 1, cache_read_tokens=11)


def test_a_litm_completion_is_priced_by_its_model() -> None:
    out = Completion("Paris", input_tokens=1000, output_tokens=10, latency_s=0.1, finish_reason="stop",
                     model="gpt-4o-mini", cached_tokens=800)  # fmt: skip
    assert price_completion(out, provider="openai") == 30 + 60 + 6
    # A Completion's input_tokens include cache reads and writes, whatever the backend (Anthropic's too);
    # its writes do not say their lifetime, so they are priced at the dearer one (1 h: 2x input).
    claude = Completion("x", 1200, 10, 0.1, "stop", model="claude-sonnet-4-5", cached_tokens=1000,
                        cache_write_tokens=100)  # fmt: skip
    assert usage_from(claude) == Usage(1200, 10, cache_read_tokens=1000, cache_write_1h_tokens=100)
    assert price_completion(claude, provider="anthropic") == micros_ceil(
        100 * 3_000_000 + 1000 * 300_000 + 100 * 6_000_000 + 10 * 15_000_000)
    with pytest.raises(PriceUnknownError):
        price_completion(Completion("x", 1, 1, 0.1, "stop", model="local-gemma"), provider="openai")
