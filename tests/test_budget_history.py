"""History compaction on ordinary agent transcripts, counted with real tokenizers.

cl100k (tiktoken, offline) counts the OpenAI and Anthropic shapes; the llama.cpp tokenizer of SmolLM2
counts through the GGUF's own chat template (``test_budget_history_llama.py``). Every compacted request is
recounted with ``count_request`` and checked against the rules its provider enforces.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from http_capture import check_anthropic, check_openai_chat, check_responses
from litm.budget import compact_history
from litm.budget._history import SUMMARY_PREFIX, compact_request, extractive_summary
from litm.errors import ContextBudgetExceeded, InvalidOptionError, LitmError, PromptError, UnsupportedTypeError
from litm.models.tokenizers import count_request
from litm.models.tokenizers._base import TOOLS_OVERHEAD_TOKENS
from litm.tokens import get_tokenizer
from transcripts import (
    SYSTEM_BLOCKS,
    TASK,
    TOOLS_ANTHROPIC,
    TOOLS_OPENAI,
    anthropic,
    anthropic_conversation,
    openai_agent_step,
    openai_chat,
    responses,
)

CL100K = get_tokenizer("openai:gpt-4")  # exact: tiktoken cl100k_base, offline
APPROX = get_tokenizer("openai:gpt-future-x")  # an id litm does not know: the script-aware estimate


def recount(request: dict[str, Any], api: str, tokenizer: Any = CL100K) -> int:
    return count_request(tokenizer, request, api).tokens


def test_under_budget_is_unchanged() -> None:
    msgs = openai_chat(1)
    out = compact_history(msgs, 10_000, counter=CL100K)
    assert out.messages == msgs and out.summarized == 0 and out.summary is None
    assert out.kept == list(range(len(msgs))) and out.tokens == recount({"messages": msgs}, "openai-chat")
    # Tool calls are counted as their JSON plus a stated allowance (providers do not publish how they render
    # them): approximate, and the bound is the request count's own.
    counted = count_request(CL100K, {"messages": msgs}, "openai-chat")
    assert not out.exact and out.margin == counted.margin > 0 and out.upper == counted.upper


@pytest.mark.parametrize("budget", [260, 400, 600])
def test_openai_tool_history_fits_and_keeps_every_call_with_its_results(budget: int) -> None:
    # Before: check_messages refused the `content: None` tool call ("message 2 content is NoneType").
    msgs = openai_chat(6)
    before = copy.deepcopy(msgs)
    out = compact_history(msgs, budget, counter=CL100K)
    assert msgs == before  # the caller's list is untouched
    assert out.tokens == recount(out.request, "openai-chat") and out.upper <= budget
    assert out.messages[0] == msgs[0] and out.messages[-1] == msgs[-1]
    summary = out.messages[1]
    assert summary["role"] == "system" and summary["content"].startswith(SUMMARY_PREFIX)
    assert "Lisbon to Oslo" in summary["content"]  # the task survives in the extractive summary
    check_openai_chat(out.messages)
    kept = out.messages[2:]
    assert kept == msgs[len(msgs) - len(kept):]  # a contiguous suffix, in order
    assert out.kept == [0, *range(len(msgs) - len(kept), len(msgs))] and out.summarized == len(msgs) - 1 - len(kept)


def test_an_agent_step_ending_in_parallel_tool_results_keeps_the_whole_step() -> None:
    msgs = openai_agent_step(6)
    out = compact_history(msgs, 300, counter=CL100K)
    assert out.upper <= 300 and out.summarized > 0
    assert out.messages[-3:] == msgs[-3:]  # the call and both of its results
    check_openai_chat(out.messages)


def test_tool_schemas_are_counted() -> None:
    msgs = openai_chat(6)
    bare = compact_history(msgs, 500, counter=CL100K)
    with_tools = compact_history(msgs, 500, counter=CL100K, tools=TOOLS_OPENAI)
    assert with_tools.tokens == recount({"messages": with_tools.messages, "tools": TOOLS_OPENAI}, "openai-chat") <= 500
    assert len(with_tools.kept) < len(bare.kept)  # the schemas take room the history had


def plain_chat(turns: int = 10) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "Be brief."}] + [
        {"role": r, "content": f"Turn {i}. " + "The harbour of Lisbon is old and busy. " * 4}
        for i, r in enumerate(["user", "assistant"] * (turns // 2))
    ]


def test_exact_counts_need_no_margin_and_approximate_ones_carry_it() -> None:
    msgs = plain_chat()
    exact = compact_history(msgs, 300, counter=CL100K)
    assert exact.exact and exact.margin == 0.0 and exact.tokens == exact.upper == recount(exact.request, "openai-chat")
    assert exact.upper <= 300
    approx = compact_history(msgs, 300, counter=APPROX)  # an estimate: not the model's own tokenizer
    assert not approx.exact and approx.margin >= APPROX.margin > 0
    assert approx.upper == count_request(APPROX, approx.request, "openai-chat").upper <= 300
    assert approx.tokens < exact.tokens  # the margin costs room: fewer turns are kept


# The tool schemas carry the Anthropic tool-use system prompt allowance on top of what the turns take.
@pytest.mark.parametrize("budget", [b + TOOLS_OVERHEAD_TOKENS["anthropic"] for b in (300, 420, 700)])
def test_anthropic_summary_goes_into_system_and_the_request_stays_valid(budget: int) -> None:
    # Before: the summary was a role "system" message inside messages, which the Messages API refuses, and
    # the kept turns could begin with an assistant turn.
    msgs = anthropic_conversation(6)
    out = compact_history(msgs, budget, counter=CL100K, api="anthropic", system=SYSTEM_BLOCKS, tools=TOOLS_ANTHROPIC)
    assert out.tokens == recount(out.request, "anthropic") and out.upper <= budget and out.summarized > 0
    check_anthropic(out.request)
    assert out.system[0] == SYSTEM_BLOCKS[0]  # the cached prefix is untouched, so the cache still hits
    assert out.system[-1]["type"] == "text" and out.system[-1]["text"].startswith(SUMMARY_PREFIX)
    assert "user: Question 0" in out.system[-1]["text"]
    assert out.messages == msgs[len(msgs) - len(out.messages):]  # kept verbatim, from one of the user's turns
    assert isinstance(out.messages[0]["content"], str) and out.request["tools"] == TOOLS_ANTHROPIC
    # A roomier budget keeps more than the last question.
    assert len(out.messages) > 1 or budget < 600 + TOOLS_OVERHEAD_TOKENS["anthropic"]


def test_anthropic_summary_in_the_first_user_turn() -> None:
    msgs = anthropic_conversation(6)
    out = compact_history(msgs, 420, counter=CL100K, api="anthropic", system="Be brief.", summary_role="user")
    check_anthropic(out.request)
    assert out.system == "Be brief." and out.upper <= 420
    first, original = out.messages[0]["content"], msgs[len(msgs) - len(out.messages)]["content"]
    assert first.startswith(SUMMARY_PREFIX) and first.endswith(original) and original.startswith("Question")


def test_anthropic_agent_loop_kept_turns_open_with_the_summary_as_a_user_turn() -> None:
    # Mid-loop the history is user task + tool rounds: the kept suffix begins with an assistant tool call,
    # so the summary must be the first user turn (the API needs one there), not a system addition.
    msgs = anthropic(6, ends_with="tool_result")
    out = compact_history(msgs, 330, counter=CL100K, api="anthropic", system=SYSTEM_BLOCKS)
    assert out.upper <= 330 and out.summarized > 0
    check_anthropic(out.request)
    assert out.messages[0]["role"] == "user" and out.messages[0]["content"].startswith(SUMMARY_PREFIX)
    assert out.system == SYSTEM_BLOCKS
    assert out.messages[-2:] == msgs[-2:]  # the last tool call and its result


def test_responses_items_keep_reasoning_calls_and_outputs_together() -> None:
    items = responses(6)
    out = compact_history(items, 260, counter=CL100K, api="openai-responses", system="Answer briefly.")
    assert out.tokens == recount(out.request, "openai-responses") and out.upper <= 260
    assert out.request["instructions"] == "Answer briefly."
    check_responses(out.messages)
    assert out.messages[0]["content"].startswith(SUMMARY_PREFIX) and out.messages[-1] == items[-1]
    kinds = [i.get("type") for i in out.messages[1:-1]]
    assert kinds[: 3] == ["reasoning", "function_call", "function_call_output"]


@pytest.mark.parametrize("api", ["openai-chat", "anthropic", "openai-responses"])
def test_repeat_instruction_is_the_last_thing_read(api: str) -> None:
    msgs = {"openai-chat": openai_chat, "anthropic": anthropic, "openai-responses": responses}[api](5)
    out = compact_history(msgs, 420, counter=CL100K, api=api, repeat_instruction="Stay under 300 euros.")
    assert out.upper <= 420
    last = out.messages[-1]
    if api == "anthropic":
        check_anthropic(out.request)
        assert last["role"] == "user" and last["content"].endswith("Stay under 300 euros.")
    else:
        assert last == {"role": "system", "content": "Stay under 300 euros."}


def test_model_summary_is_used_and_a_runaway_one_replaced() -> None:
    seen: dict[str, Any] = {}

    def summarizer(old: list[dict[str, Any]], max_tokens: int) -> str:
        seen["old"], seen["max"] = old, max_tokens
        return "User wants LIS-OSL on 12 March under 300 EUR, mornings; TP100-TP102 seen."

    msgs = openai_chat(6)
    out = compact_history(msgs, 400, counter=CL100K, summarizer=summarizer)
    assert out.upper <= 400 and "LIS-OSL" in out.messages[1]["content"]
    assert seen["old"][0] == msgs[1] and seen["max"] == 100
    runaway = compact_history(msgs, 300, counter=CL100K, summarizer=lambda old, n: "blah " * 2000)
    assert runaway.upper <= 300 and runaway.messages[-1] == msgs[-1] and "blah" not in json.dumps(runaway.messages)


def test_the_latest_turn_is_kept_or_the_error_says_why() -> None:
    with pytest.raises(ContextBudgetExceeded) as info:
        compact_history(plain_chat(), 40, counter=CL100K)
    err = info.value
    assert err.budget == 40 and err.floor is not None and err.floor > 40 and err.prompt_tokens > err.floor
    assert err.margin == 0.0 and err.upper == err.prompt_tokens
    with pytest.raises(ContextBudgetExceeded, match=r"counted approximately, \+\d+% margin") as approx:
        compact_history(openai_agent_step(2), 60, counter=CL100K)
    assert approx.value.margin > 0 and approx.value.upper > approx.value.prompt_tokens


def test_whole_request_compaction_keeps_other_fields() -> None:
    request = {"model": "gpt-4o-mini", "temperature": 0, "messages": openai_chat(6), "tools": TOOLS_OPENAI}
    out = compact_request(request, "openai-chat", 600, counter=CL100K)
    assert {k: v for k, v in out.request.items() if k != "messages"} == {k: v for k, v in request.items()
                                                                          if k != "messages"}
    assert out.tokens == recount(out.request, "openai-chat") and out.upper <= 600


def test_extractive_summary_keeps_the_task_and_the_newest_lines() -> None:
    msgs = openai_chat(6)[1:]
    full = extractive_summary(msgs, 10_000)
    short = extractive_summary(msgs, 60, CL100K)
    assert short.splitlines()[0] == full.splitlines()[0] == f"user: {TASK.split('. ')[0]}."
    assert short.splitlines()[-1] == full.splitlines()[-1] and CL100K.count(short) <= 60 < CL100K.count(full)
    assert "assistant called search_flights" in full and "tool result: Page 0: TP100" in full


def test_bad_arguments_get_typed_errors() -> None:
    one = [{"role": "user", "content": "x"}]
    with pytest.raises(InvalidOptionError):
        compact_history(one, 0, counter=CL100K)
    with pytest.raises(InvalidOptionError, match="summary_role"):
        compact_history(one, 10, counter=CL100K, summary_role="assistant")
    with pytest.raises(InvalidOptionError, match="system prompt is a message"):
        compact_history(one, 10, counter=CL100K, system="x")
    with pytest.raises(InvalidOptionError, match="request shape"):
        compact_history(one, 10, counter=CL100K, api="grpc")
    with pytest.raises(PromptError):
        compact_history(["not a dict"], 10, counter=CL100K)  # type: ignore[list-item]
    with pytest.raises(PromptError, match="cannot count"):
        compact_history([{"role": "user", "content": [{"type": "hologram"}]}], 10, counter=CL100K, api="anthropic")
    with pytest.raises(UnsupportedTypeError, match="cannot count tokens"):
        compact_history(one, 10, counter=object())
    assert issubclass(UnsupportedTypeError, TypeError) and issubclass(InvalidOptionError, ValueError)
    assert issubclass(PromptError, LitmError)
