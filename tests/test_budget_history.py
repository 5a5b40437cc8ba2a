"""History compaction on realistic agent transcripts (OpenAI and Anthropic tool-call shapes)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from litm.budget import compact_history
from litm.budget.history import SUMMARY_PREFIX, _is_tool_call, _is_tool_result
from litm.errors import ContextBudgetExceeded, LitmError


def words(text: str) -> int:
    return len(text.split())


def count_messages(messages: list[dict[str, Any]]) -> int:
    # A chat-format counter: content words plus 4 tokens of per-message overhead, plus tool-call JSON.
    total = 0
    for m in messages:
        total += 4 + words(m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content")))
        total += words(json.dumps(m.get("tool_calls", [])))
    return total


class MsgCounter:
    def count(self, text: str) -> int:
        return words(text)

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        return count_messages(messages)


def openai_agent_transcript(rounds: int = 6) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel agent. Book within the user's budget."},
        {"role": "user", "content": "Find me a flight from Lisbon to Oslo on 12 March under 300 euros. " * 3},
    ]
    for i in range(rounds):
        call_id = f"call_{i}"
        msgs.append({
            "role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": "search_flights", "arguments": json.dumps({"page": i})}}],
        })
        msgs.append({"role": "tool", "tool_call_id": call_id,
                     "content": f"Page {i}: TP{100 + i} departs 08:{10 + i} for {250 + 10 * i} EUR. " * 4})
        msgs.append({"role": "assistant", "content": f"Option {i} costs {250 + 10 * i} euros. Shall I go on? " * 2})
        msgs.append({"role": "user", "content": f"Yes, keep looking, round {i}. " * 3})
    return msgs


def test_under_budget_is_unchanged() -> None:
    msgs = openai_agent_transcript(1)
    out = compact_history(msgs, 10_000, counter=MsgCounter())
    assert out.messages == msgs and out.summarized == 0 and out.summary is None


@pytest.mark.parametrize("budget", [160, 220, 300, 450])
def test_compaction_fits_keeps_system_and_latest_and_never_splits_tool_pairs(budget: int) -> None:
    msgs = openai_agent_transcript(6)
    before = json.dumps(msgs)
    out = compact_history(msgs, budget, counter=MsgCounter())
    assert json.dumps(msgs) == before  # the caller's list is untouched
    assert out.tokens == count_messages(out.messages) <= budget
    assert out.messages[0] == msgs[0]
    assert out.messages[-1] == msgs[-1]
    assert out.summarized > 0
    summary = out.messages[1]
    assert summary["role"] == "system" and summary["content"].startswith(SUMMARY_PREFIX)
    # The first user message (the task) survives in the extractive summary.
    assert "Lisbon to Oslo" in summary["content"]
    # Every tool result in the output is preceded by the assistant call that produced it.
    kept = out.messages[2:]
    for i, m in enumerate(kept):
        if m.get("role") == "tool":
            j = i - 1
            while kept[j].get("role") == "tool":
                j -= 1
            assert _is_tool_call(kept[j])
            assert m["tool_call_id"] in {c["id"] for c in kept[j]["tool_calls"]}
    # Kept messages are a contiguous suffix of the original, in order.
    assert kept == msgs[len(msgs) - len(kept):]


def anthropic_transcript() -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Paris and Rome? " * 2}]
    for i, city in enumerate(["Paris", "Rome", "Paris"]):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Checking {city}."},
            {"type": "tool_use", "id": f"tu_{i}", "name": "get_weather", "input": {"city": city}},
        ]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"tu_{i}", "content": f"{city}: 18 C, light rain. " * 5},
        ]})
    msgs.append({"role": "assistant", "content": "Paris 18 C, Rome 18 C. Anything else?"})
    msgs.append({"role": "user", "content": "Which is drier tomorrow?"})
    return msgs


def test_anthropic_tool_use_blocks_stay_with_results() -> None:
    msgs = anthropic_transcript()
    out = compact_history(msgs, 120, counter=MsgCounter(), summary_role="user")
    assert out.tokens <= 120
    body = out.messages[1:]
    assert out.messages[0]["content"].startswith(SUMMARY_PREFIX)
    for i, m in enumerate(body):
        if _is_tool_result(m):
            assert i > 0 and _is_tool_call(body[i - 1])
    assert body[-1] == msgs[-1]


def test_model_summarizer_and_repeat_instruction() -> None:
    seen: dict[str, Any] = {}

    def summarizer(old: list[dict[str, Any]], max_tokens: int) -> str:
        seen["old"], seen["max"] = old, max_tokens
        return "User wants LIS-OSL 12 March under 300 EUR; options TP100-TP102 seen."

    msgs = openai_agent_transcript(6)
    out = compact_history(msgs, 300, counter=MsgCounter(), summarizer=summarizer,
                          repeat_instruction="Remember: stay under 300 euros.")
    assert out.tokens <= 300
    assert "LIS-OSL" in out.messages[1]["content"]
    assert out.messages[-1] == {"role": "system", "content": "Remember: stay under 300 euros."}
    assert seen["old"][0] == msgs[1] and seen["max"] == 75


def test_runaway_summary_is_replaced_to_fit() -> None:
    msgs = openai_agent_transcript(6)
    out = compact_history(msgs, 250, counter=MsgCounter(), summarizer=lambda old, n: "blah " * 1000)
    assert out.tokens <= 250 and out.messages[-1] == msgs[-1]


def test_impossible_budget_raises_with_numbers() -> None:
    msgs = openai_agent_transcript(2)
    with pytest.raises(ContextBudgetExceeded) as info:
        compact_history(msgs, 20, counter=MsgCounter())
    err = info.value
    assert err.budget == 20 and err.floor is not None and err.floor > 20 and err.prompt_tokens > err.floor


def test_bad_arguments() -> None:
    with pytest.raises(LitmError):
        compact_history([{"role": "user", "content": "x"}], 0, counter=words)
    with pytest.raises(LitmError):
        compact_history(["not a dict"], 10, counter=words)  # type: ignore[list-item]
    with pytest.raises(LitmError, match="cannot count tokens"):
        compact_history([{"role": "user", "content": "x"}], 10, counter=object())


def test_budget_from_a_measured_profile(tmp_path: Any) -> None:
    from litm.budget import max_input_tokens_from
    from litm.errors import InvalidProfileError
    from litm.placement.profile import PositionProfile

    measured = PositionProfile.from_weights([1.0, 0.7, 0.95], metadata={"recommended_max_input_tokens": 2048})
    path = tmp_path / "profile.json"
    measured.save(path)
    assert max_input_tokens_from(path, reserve_output_tokens=48) == 2000
    assert max_input_tokens_from(measured, context_window=1024) == 1024
    assert max_input_tokens_from(measured, cap=1500, reserve_output_tokens=100) == 1400
    with pytest.raises(InvalidProfileError, match="litm probe"):
        max_input_tokens_from(PositionProfile.pyramid())
    with pytest.raises(LitmError):
        max_input_tokens_from(measured, reserve_output_tokens=4096)
