"""Compaction and fitting counted with llama.cpp's own tokenizers (the GGUF's vocabulary and chat template)."""

from __future__ import annotations

import pytest

from http_capture import check_anthropic, check_openai_chat
from litm.budget import compact_history, fit
from litm.errors import PromptError
from litm.models.tokenizers import count_request
from litm.prompt import PromptBuilder
from litm.tokens import get_tokenizer
from transcripts import SYSTEM_BLOCKS, anthropic, openai_agent_step, openai_chat

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def smollm2() -> object:
    return get_tokenizer("local:smollm2")  # SmolLM2 135M Instruct: a chat template, so messages count exactly


@pytest.mark.parametrize("history", [openai_chat, openai_agent_step])
def test_openai_tool_histories_compact_with_the_llama_tokenizer(smollm2: object, history: object) -> None:
    msgs = history(6)  # type: ignore[operator]
    out = compact_history(msgs, 320, counter=smollm2)
    assert out.tokens == count_request(smollm2, out.request, "openai-chat").tokens  # type: ignore[arg-type]
    assert out.upper <= 320 and out.summarized > 0 and out.messages[0] == msgs[0]
    check_openai_chat(out.messages)


def test_anthropic_blocks_compact_with_the_llama_tokenizer(smollm2: object) -> None:
    msgs = anthropic(5)
    out = compact_history(msgs, 320, counter=smollm2, api="anthropic", system=SYSTEM_BLOCKS)
    assert out.upper <= 320 and out.messages[-1] == msgs[-1]
    check_anthropic(out.request)


def test_a_base_model_cannot_count_chat_and_says_so() -> None:
    # Gemma 3 270M is a base model without a chat template: a typed refusal, never a crash or a guess.
    gemma = get_tokenizer("local")
    with pytest.raises(PromptError, match="no chat template"):
        compact_history(openai_chat(2), 300, counter=gemma)
    # Plain-text prompts are what it counts, exactly.
    docs = [{"id": f"d{i}", "text": "The harbour of Lisbon is old. " * 8, "score": i / 10} for i in range(6)]
    result = fit(docs, "Which harbour?", PromptBuilder(), gemma, 200, rank_by="score")
    assert result.exact and result.margin == 0.0 and gemma.count(result.prompt.text) == result.tokens <= 200
    assert [d.id for d in result.kept] == [f"d{i}" for i in range(5, 5 - len(result.kept), -1)]
