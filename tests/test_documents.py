"""Coercion of the document shapes users hold, read by duck typing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.documents import Document as LCDocument

import litm
from litm.placement.documents import Doc, to_doc


@dataclass
class FakeNode:  # the parts of llama_index.core.schema.TextNode that litm reads
    text: str
    node_id: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def get_content(self) -> str:
        return self.text


@dataclass
class FakeNodeWithScore:  # llama_index.core.schema.NodeWithScore
    node: FakeNode
    score: float | None


@dataclass
class FakeHaystackDocument:  # haystack.dataclasses.Document
    content: str | None
    id: str
    score: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def test_str_and_dict() -> None:
    assert to_doc("hello", index=0) == Doc(text="hello", id="doc-1")
    d = to_doc({"id": 7, "content": "x", "score": 2, "title": "T", "source": "s", "lang": "en"})
    assert (d.id, d.text, d.score, d.title, d.source) == ("7", "x", 2.0, "T", "s")
    assert d.metadata == {"lang": "en"}  # unknown keys are kept, not lost


def test_langchain_document() -> None:
    lc = LCDocument(page_content="body", metadata={"source": "wiki", "score": 0.5, "title": "Page"}, id="lc1")
    d = to_doc(lc)
    assert (d.id, d.text, d.score, d.source, d.title) == ("lc1", "body", 0.5, "wiki", "Page")


def test_llamaindex_node_with_score() -> None:
    d = to_doc(FakeNodeWithScore(FakeNode("node text", "n-1", {"file_name": "a.md"}), 0.75))
    assert (d.id, d.text, d.score, d.source) == ("n-1", "node text", 0.75, "a.md")


def test_haystack_document() -> None:
    d = to_doc(FakeHaystackDocument("hay", "h1", 0.3, {"title": "H"}))
    assert (d.id, d.text, d.score, d.title) == ("h1", "hay", 0.3, "H")
    with pytest.raises(litm.InvalidDocumentError, match="text must be str, got NoneType"):
        to_doc(FakeHaystackDocument(None, "h2"), index=4)


def test_place_hands_back_the_callers_objects() -> None:
    objs = [FakeHaystackDocument(f"t{i}", f"h{i}", float(i)) for i in range(6)]
    snapshot = list(objs)
    plan = litm.place(objs, "pyramid", rank_by="score")
    assert objs == snapshot
    assert all(any(p is o for o in objs) for p in plan.items)
    assert [p.id for p in plan.items] == ["h4", "h2", "h0", "h1", "h3", "h5"]


def test_unreadable_object_names_its_type_and_index() -> None:
    with pytest.raises(litm.InvalidDocumentError, match=r"item 2: cannot read a int"):
        litm.place(["a", "b", 3], "edges")
