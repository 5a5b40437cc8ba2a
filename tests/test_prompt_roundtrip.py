"""Properties: random documents and questions (unicode, forged tokens, backslashes) render into
prompts that parse back into the same ids, texts, titles and sources, in every format and in both
parseable anchor styles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from litm.prompt import AnchorOptions, ChatTemplate, PromptBuilder, build_prompt
from litm.prompt._escape import Neutralizer
from litm.prompt._parse import parse_citations, parse_prompt

DATA = Path(__file__).parent / "data"
LLAMA3 = ChatTemplate(
    (DATA / "prompt_chat_templates" / "llama3.jinja").read_text(encoding="utf-8"),
    bos_token="<|begin_of_text|>",
    eos_token="<|eot_id|>",
)

# Fragments that stress the escape: tokens, our anchors, their escaped forms, quotes and entities.
FRAGMENTS = [
    "<|im_start|>", "<|im_end|>", "<|", "|>", "<\\|", "<\\\\|", "\\", "\\\\", "<", "[INST]", "[/inst]",
    "<<SYS>>", "</s>", "<s>", "<start_of_turn>", "<document", "</document", '</document id="a">',
    "<文档", "</文档 编号=\"x\">", "<\\document", '"', "&quot;", "&amp;", "&#10;", "\n", "\r", "\n\n", " ",
    "<\uff5cUser\uff5c>", "<eos>", "{question}", "{}", "[a]", "【b】", "Question: ", "\u2028", "\x00",
    "[DOC_ID: a]", "[/DOC_ID", "[\\/doc_id", " | ", "|", "]", "&#124;", "&#93;", "REL_SCORE: ", "Document [1](Title: ",
]
unicode_text = st.text(st.characters(codec="utf-8"), max_size=30)
texts = st.lists(st.sampled_from(FRAGMENTS) | unicode_text, max_size=8).map("".join)


@st.composite
def documents(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(texts.filter(bool), max_size=7, unique=True))
    docs = []
    for doc_id in ids:
        doc: dict[str, Any] = {"id": doc_id, "text": draw(texts)}
        if draw(st.booleans()):
            doc["title"] = draw(texts)
        if draw(st.booleans()):
            doc["source"] = draw(texts)
        if draw(st.booleans()):
            doc["score"] = draw(st.floats(-1e6, 1e6, allow_nan=False))
        docs.append(doc)
    return docs


options = st.fixed_dictionaries(
    {
        "lang": st.sampled_from(["en", "zh"]),
        "positions": st.booleans(),
        "scores": st.booleans(),
        "sources": st.booleans(),
        "closing_ids": st.booleans(),
        "middle_marker": st.booleans(),
        "recap": st.booleans(),
        "question_position": st.sampled_from(["after", "before", "both"]),
        "repeat_instruction": st.booleans(),
        "system": st.none() | texts,
        "strategy": st.sampled_from([None, "edges", "pyramid", "reverse"]),
        "style": st.sampled_from(["xml", "bracket"]),
        "score_as": st.sampled_from(["relevance", "raw", "rank"]),
        "short_ids": st.booleans(),
    }
)


@settings(max_examples=150)
@given(docs=documents(), question=texts.filter(lambda q: q.strip() != ""), opts=options)
def test_every_format_parses_back_to_the_same_documents(
    docs: list[dict[str, Any]], question: str, opts: dict[str, Any]
) -> None:
    prompt = build_prompt(docs, question, chat_template=LLAMA3, **opts)
    by_id = {d["id"]: d for d in docs}
    assert sorted(prompt.ids) == sorted(by_id)
    for fmt in ("text", "openai", "anthropic", "chatml", "jinja"):
        parsed = parse_prompt(prompt.render(fmt), template=prompt.template, neutralizer=prompt.neutralizer,
                              style=opts["style"])
        # A bare rendering holds the ids shown (long ones as slot numbers); the prompt maps them back.
        assert parsed.ids == prompt.shown_ids, fmt
        assert prompt.parse(prompt.render(fmt)).ids == prompt.ids, fmt
        assert parsed.texts == [by_id[i]["text"] for i in prompt.ids], fmt
        for block, own in zip(parsed.blocks, prompt.ids, strict=True):
            src = by_id[own]
            assert block.title == (src.get("title") if opts["sources"] else None)
            assert block.source == (src.get("source") if opts["sources"] else None)
    # The question is in the prompt, escaped, exactly where the layout puts it.
    shown = prompt.neutralizer.neutralize(question)
    assert prompt.neutralizer.restore(shown) == question
    tail = prompt.template.question.replace("{question}", shown)
    assert prompt.user.endswith(tail) or opts["question_position"] == "before"
    # Structure: exactly one opening and one closing anchor per document, nothing else forged.
    found = prompt.neutralizer.find_forgeries(prompt.user)
    assert len(found) == 2 * len(docs)


@settings(max_examples=300)
@given(text=texts, extra=st.lists(st.sampled_from(["<x>", "ab", "<<<", "[i<", "<s>x", "Zz"]), max_size=3))
def test_neutralizer_restores_exactly_and_leaves_no_token(text: str, extra: list[str]) -> None:
    nz = Neutralizer(extra)
    escaped = nz.neutralize(text)
    assert nz.restore(escaped) == text
    assert nz.find_forgeries(escaped) == []
    assert escaped.replace("\\", "") == text.replace("\\", "")


@settings(max_examples=100)
@given(ids=st.lists(st.text("abcxyz-_019", min_size=1, max_size=6), min_size=1, max_size=6, unique=True))
def test_citations_map_back_to_documents(ids: list[str]) -> None:
    prompt = PromptBuilder(anchors=AnchorOptions()).build([{"id": i, "text": f"text of {i}"} for i in ids], "which?")
    answer = " ".join(f"claim [{i}]" for i in reversed(ids))
    cited = parse_citations(answer, prompt)
    assert cited.ids == list(reversed(ids))
    assert [d.text for d in cited.docs] == [f"text of {i}" for i in reversed(ids)]
    assert [c.slot for c in cited] == [prompt.ids.index(i) + 1 for i in reversed(ids)]
