"""Short ids: a framework's 36- or 64-character document ids never reach the prompt.

Each id is shown three times (header, closing tag, recap); Haystack's SHA-256 ids and LangChain's or
LlamaIndex's UUIDs made the ids cost more tokens than the documents. With ``short_ids`` (the default) a
prompt whose ids are not all short shows ``1``..``k`` instead, and citations and parsing map them back.
Counted with a real tokenizer (GPT-4o's BPE, offline), on the frameworks' own document types.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from haystack import Document as HaystackDocument
from haystack.components.builders import AnswerBuilder
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document as LangChainDocument
from llama_index.core.schema import NodeWithScore, TextNode

from litm import fit
from litm.integrations.haystack import LitmPromptBuilder
from litm.placement import place
from litm.prompt import AnchorOptions, PromptBuilder, build_prompt
from litm.prompt._anchors import SHORT_ID_CHARS, shown_ids
from litm.prompt._parse import parse_citations
from litm.tokens import get_tokenizer

TEXTS = [
    "Parmigiano Reggiano wheels mature for at least twelve months in the cellars of Parma and Reggio Emilia.",
    "Manchego is a sheep's milk cheese from La Mancha; the wheels mature for nine months in natural caves.",
    "Gouda takes its name from the Dutch city where farmers sold their cheese at the weighing house.",
    "Roquefort gets its blue veins from Penicillium roqueforti and ripens in the Combalou caves.",
    "Feta is brined white cheese made in Greece from sheep's milk, sometimes mixed with goat's milk.",
    "Cheddar was first made in the English village of Cheddar in Somerset during the twelfth century.",
    "Emmental, the Swiss cheese with large holes, is made in wheels that can weigh up to 120 kilograms.",
]
QUESTION = "How long do Manchego wheels mature?"
# Every anchor element on: each id shown three times (header, closing tag, recap), as before the defaults
# changed to the id and title only; the cost of long ids is measured on this set.
FULL = AnchorOptions(positions=True, scores=True, closing_ids=True, recap=True)


def _haystack() -> list[Any]:
    return [HaystackDocument(content=t) for t in TEXTS]  # Haystack's own id: a 64-character SHA-256


def _langchain() -> list[Any]:
    return [LangChainDocument(page_content=t, id=str(uuid.uuid4())) for t in TEXTS]  # as vector stores set it


def _llamaindex() -> list[Any]:
    return [NodeWithScore(node=TextNode(text=t)) for t in TEXTS]  # LlamaIndex's own id_: a UUID


FRAMEWORKS = {"haystack": _haystack, "langchain": _langchain, "llamaindex": _llamaindex}


def _own_id(item: Any) -> str:
    if isinstance(item, NodeWithScore):
        return str(item.node.node_id)
    return str(item.id)


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_framework_ids_are_shown_as_numbers_and_mapped_back(framework: str) -> None:
    items = FRAMEWORKS[framework]()
    own = [_own_id(i) for i in items]
    assert all(len(i) > SHORT_ID_CHARS for i in own)
    assert '<document id="2">' in build_prompt(items, QUESTION, anchors=AnchorOptions()).text  # the id alone
    # Liu et al.'s format (no model given) numbers them anyway, and maps the numbers back the same way.
    assert build_prompt(items, QUESTION).citations("Nine months [2].").ids == [own[1]]
    p = build_prompt(items, QUESTION, anchors=FULL)
    assert p.ids == own and p.shown_ids == [str(k) for k in range(1, 8)]
    assert not any(i in p.text for i in own)
    assert '<document id="2" position="2/7">' in p.text and '</document id="2">' in p.text
    assert "for citations: [1] [2] [3] [4] [5] [6] [7]" in p.text
    # The model cites what it saw; the citation is the framework's document.
    cited = p.citations("Nine months [2].")
    assert cited.ids == [own[1]] and cited.docs[0].text == TEXTS[1]
    assert p.parse().ids == own and p.parse(p.to_chatml()).ids == own
    # A plan alone (no prompt) maps the numbers a default prompt shows as well.
    assert parse_citations("[7]", place(items, "none")).ids == [own[6]]


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_short_ids_cut_the_tokens_and_fit_keeps_more_documents(framework: str) -> None:
    tok = get_tokenizer("openai:gpt-4o")
    items = FRAMEWORKS[framework]()
    short, long = PromptBuilder(anchors=FULL), PromptBuilder(anchors=FULL.replace(short_ids=False))
    text_tokens = sum(tok.count(t) for t in TEXTS)
    new, old = tok.count(short.build(items, QUESTION).text), tok.count(long.build(items, QUESTION).text)
    # Measured: Haystack 1147 -> 370 tokens, LangChain 835 -> 370, LlamaIndex 799 -> 370 (text: 159).
    assert new < 0.5 * old and new - text_tokens < 250
    kept_new = fit(items, QUESTION, short, tok, 400, rank_by="input").kept
    kept_old = fit(items, QUESTION, long, tok, 400, rank_by="input").kept
    assert len(kept_new) == 7 and len(kept_old) <= 3


def test_the_haystack_prompt_builder_keeps_more_under_the_same_budget() -> None:
    docs = _haystack()
    out = LitmPromptBuilder(strategy="none", tokenizer="openai:gpt-4o", max_input_tokens=400).run(
        query=QUESTION, documents=docs
    )
    assert len(out["documents"]) == 7 and not any(d.id in out["text"] for d in docs)
    # Haystack's AnswerBuilder reads "[2]" as the second document of the list it is given: the one shown as 2.
    answer = AnswerBuilder(reference_pattern=r"\[(\d+)\]").run(
        query=QUESTION, replies=["Nine months [2]."], documents=out["documents"]
    )["answers"][0]
    assert [d.content for d in answer.documents] == [out["documents"][1].content]
    long = PromptBuilder(anchors=FULL.replace(short_ids=False))
    before = LitmPromptBuilder(strategy="none", tokenizer="openai:gpt-4o", max_input_tokens=400, builder=long)
    assert len(before.run(query=QUESTION, documents=docs)["documents"]) <= 3


def test_short_ids_are_kept_as_given() -> None:
    # The benchmark's ids ("doc-12") and chunk ids ("guide.md#3") are short: shown, and cited, as they are.
    docs = [{"id": "doc-12", "text": "a"}, {"id": "notes/context_managers.md#3", "text": "b"}]
    p = build_prompt(docs, "Q?", anchors=AnchorOptions())
    assert p.shown_ids == p.ids == ["doc-12", "notes/context_managers.md#3"]
    assert p.citations("[notes/context_managers.md#3]").ids == ["notes/context_managers.md#3"]
    assert p.citations("[2]").ids == []  # a number is not read as a slot when ids are shown as given


# Brackets and list separators are left out: an id holding them cannot be cited as "[id]" however it is shown.
_CHARS = st.characters(codec="utf-8", exclude_characters="\n\r[]\u3010\u3011\uff3b\uff3d,;\uff0c\uff1b\u3001")
ids = st.text(_CHARS, min_size=1, max_size=48).filter(lambda s: s.strip() == s and s != "")


@settings(max_examples=60, deadline=None)
@given(own=st.lists(ids, min_size=1, max_size=8, unique=True), style=st.sampled_from(["xml", "bracket"]),
       short=st.booleans())  # fmt: skip
def test_every_shown_id_cites_its_own_document(own: list[str], style: str, short: bool) -> None:
    docs = [{"id": i, "text": f"text {n}"} for n, i in enumerate(own)]
    p = build_prompt(docs, "Q?", anchors=AnchorOptions(style=style, short_ids=short))  # type: ignore[arg-type]
    numbered = short and any(len(i) > SHORT_ID_CHARS for i in own)
    assert p.shown_ids == ([str(k) for k in range(1, len(own) + 1)] if numbered else own)
    assert tuple(p.shown_ids) == shown_ids(own, short)
    if numbered:
        assert not any(i in p.user for i in own if len(i) > SHORT_ID_CHARS)
    assert p.parse().ids == own
    for shown, doc_id in zip(p.shown_ids, p.ids, strict=True):
        assert p.citations(f"see [{shown}]").ids == [doc_id]
