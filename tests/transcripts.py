"""Ordinary agent histories in the three request shapes, as an agent loop builds them.

OpenAI Chat Completions (``tool_calls`` with ``content: None``, ``role: "tool"`` results), Anthropic
Messages (``tool_use`` / ``tool_result`` blocks, a ``system`` list with ``cache_control``) and OpenAI
Responses (``function_call`` / ``function_call_output`` items with a reasoning item).
"""

from __future__ import annotations

import json
from typing import Any

TOOLS_OPENAI = [{
    "type": "function",
    "function": {
        "name": "search_flights",
        "description": "Search flights between two airports on a date; returns the cheapest options first.",
        "parameters": {
            "type": "object",
            "properties": {"origin": {"type": "string", "description": "IATA code of the departure airport"},
                           "destination": {"type": "string", "description": "IATA code of the arrival airport"},
                           "date": {"type": "string", "description": "Departure date, YYYY-MM-DD"},
                           "page": {"type": "integer", "description": "Result page, from 0"}},
            "required": ["origin", "destination", "date"],
        },
    },
}]  # fmt: skip
TOOLS_ANTHROPIC = [{"name": t["function"]["name"], "description": t["function"]["description"],
                    "input_schema": t["function"]["parameters"]} for t in TOOLS_OPENAI]  # fmt: skip

TASK = "Find me a flight from Lisbon to Oslo on 12 March under 300 euros. I prefer mornings."
SYSTEM = "You are a travel agent. Book within the user's budget and say which flight you chose."


def openai_chat(rounds: int = 6) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for i in range(rounds):
        call_id = f"call_{i}"
        args = {"origin": "LIS", "destination": "OSL", "date": "2025-03-12", "page": i}
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "search_flights", "arguments": json.dumps(args)}},
        ]})  # fmt: skip
        msgs.append({"role": "tool", "tool_call_id": call_id,
                     "content": f"Page {i}: TP{100 + i} departs 08:{10 + i} for {250 + 10 * i} EUR. " * 4})
        msgs.append({"role": "assistant", "content": f"Option {i} costs {250 + 10 * i} euros. Shall I go on?"})
        msgs.append({"role": "user", "content": f"Yes, keep looking, round {i}. Mornings only, please."})
    return msgs


def openai_agent_step(rounds: int = 6) -> list[dict[str, Any]]:
    """An agent loop mid-task: it ends with tool results, not with a user message."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for i in range(rounds):
        ids = [f"call_{i}a", f"call_{i}b"]  # parallel tool calls: one assistant turn, two results
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": ids[0], "type": "function", "function": {"name": "search_flights", "arguments": f'{{"page": {i}}}'}},
            {"id": ids[1], "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        ]})  # fmt: skip
        msgs.append({"role": "tool", "tool_call_id": ids[0], "content": f"TP{100 + i}: {250 + 10 * i} EUR. " * 6})
        msgs.append({"role": "tool", "tool_call_id": ids[1], "content": "Oslo: -2 C, snow showers. " * 3})
    return msgs


SYSTEM_BLOCKS = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]


def anthropic(rounds: int = 4, *, ends_with: str = "user") -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for i in range(rounds):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Checking page {i}."},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "search_flights",
             "input": {"origin": "LIS", "destination": "OSL", "date": "2025-03-12", "page": i}},
        ]})  # fmt: skip
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}",
             "content": f"TP{100 + i} departs 08:{10 + i} for {250 + 10 * i} EUR. " * 5},
        ]})  # fmt: skip
    if ends_with == "user":
        msgs.append({"role": "assistant", "content": "TP100 at 250 EUR is the cheapest morning flight."})
        msgs.append({"role": "user", "content": "Book it, and tell me the departure time."})
    return msgs


def anthropic_conversation(rounds: int = 5) -> list[dict[str, Any]]:
    """A chat with tools: each user question is answered after one tool round."""
    msgs: list[dict[str, Any]] = []
    for i in range(rounds):
        msgs.append({"role": "user", "content": f"Question {i}: what does page {i} of the Lisbon-Oslo search show?"})
        msgs.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "search_flights",
             "input": {"origin": "LIS", "destination": "OSL", "date": "2025-03-12", "page": i}},
        ]})  # fmt: skip
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}",
             "content": [{"type": "text", "text": f"TP{100 + i} departs 08:{10 + i} for {250 + 10 * i} EUR. " * 4}]},
        ]})  # fmt: skip
        msgs.append({"role": "assistant", "content": f"Page {i} shows TP{100 + i} at {250 + 10 * i} EUR."})
    msgs.append({"role": "user", "content": "Book the cheapest one."})
    return msgs


def responses(rounds: int = 5) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "input_text", "text": TASK}]}]
    for i in range(rounds):
        items.append({"type": "reasoning", "id": f"rs_{i}", "summary": [
            {"type": "summary_text", "text": f"Look at result page {i}."}]})
        items.append({"type": "function_call", "call_id": f"fc_{i}", "name": "search_flights",
                      "arguments": json.dumps({"page": i})})
        items.append({"type": "function_call_output", "call_id": f"fc_{i}",
                      "output": f"TP{100 + i} departs 08:{10 + i} for {250 + 10 * i} EUR. " * 5})
    items.append({"role": "user", "content": "Which one is cheapest in the morning?"})
    return items
