"""fit(..., compress=...): question-aware compression before dropping, with the whole prompt verified by a count."""

from __future__ import annotations

import pytest

from litm.budget import fit
from litm.errors import ContextBudgetExceeded
from litm.prompt import AnchorOptions, PromptBuilder
from litm.tokens import get_tokenizer

QUESTION = "When did the Eiffel Tower open to the public?"
DOCS = [
    {"id": "tower", "text": "The Eiffel Tower is a wrought-iron tower in Paris. It was designed by Gustave Eiffel's "
     "company. The tower opened to the public on 31 March 1889. It is 330 metres tall."},
    {"id": "berlin", "text": "Berlin is the capital of Germany. The city has many museums. Its zoo is the oldest in "
     "the country."},
    {"id": "louvre", "text": "The Louvre is the most-visited museum. It opened in 1793. It holds the Mona Lisa."},
]  # fmt: skip


@pytest.mark.parametrize("budget", [95, 110, 150, 180, 200])
def test_the_compressed_prompt_fits_and_keeps_only_sentences_of_the_originals(budget: int) -> None:
    squeezed = fit(DOCS, QUESTION, PromptBuilder(), "openai:gpt-4o", max_input_tokens=budget, compress="retriever")
    assert squeezed.upper <= budget
    # The count is the prompt's own: recount what will be sent.
    assert get_tokenizer("openai:gpt-4o").count(squeezed.prompt.text) == squeezed.tokens
    if squeezed.compression is not None:
        # Ids survive compression, and every kept text is sentences of the original, in order.
        by_id = {d["id"]: d["text"] for d in DOCS}
        for doc in squeezed.kept:
            assert doc.id in by_id
            for piece in doc.text.split(". "):
                assert piece.rstrip(".") in by_id[doc.id]
        assert {d.id for d in squeezed.dropped} | {d.id for d in squeezed.kept} == set(by_id)


def test_with_room_to_spare_nothing_is_compressed() -> None:
    r = fit(DOCS, QUESTION, PromptBuilder(), "openai:gpt-4o", max_input_tokens=4000, compress="embed")
    assert r.compression is None and [d.id for d in r.kept] == ["tower", "berlin", "louvre"]


def test_compression_keeps_part_of_a_document_where_dropping_keeps_none() -> None:
    builder = PromptBuilder(anchors=AnchorOptions())  # litm's tags: the budget below fits no whole document
    plain = fit(DOCS, QUESTION, builder, "openai:gpt-4o", max_input_tokens=100)
    squeezed = fit(DOCS, QUESTION, builder, "openai:gpt-4o", max_input_tokens=100, compress="embed")
    assert plain.kept == [] and squeezed.kept and squeezed.compression is not None
    assert squeezed.upper <= 100 and squeezed.kept[0].id == "tower"


def test_a_budget_below_the_empty_prompt_is_still_refused() -> None:
    with pytest.raises(ContextBudgetExceeded):
        fit(DOCS, QUESTION, PromptBuilder(), "openai:gpt-4o", max_input_tokens=20, compress="embed")


def test_an_approximate_counter_keeps_its_margin() -> None:
    words = lambda t: len(t.split())  # noqa: E731 - a user's own counter, marked approximate by fit
    r = fit(DOCS, QUESTION, PromptBuilder(), words, max_input_tokens=90, compress="retriever")
    assert not r.exact and r.upper <= 90


def test_bisection_counts_each_sentence_once_not_once_per_step() -> None:
    counted: list[str] = []
    gpt4o = get_tokenizer("openai:gpt-4o")

    def counting(text: str) -> int:
        counted.append(text)
        return gpt4o.count(text)

    r = fit(DOCS, QUESTION, PromptBuilder(), counting, max_input_tokens=150, compress="retriever")
    assert r.compression is not None
    # Rendered prompts are counted once per try; document and sentence texts only once in all.
    pieces = [t for t in counted if any(t and t in d["text"] for d in DOCS)]
    assert pieces and len(pieces) == len(set(pieces))
