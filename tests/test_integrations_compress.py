"""The compression components inside real LangChain, LlamaIndex and Haystack pipelines.

Retrieval is real and offline: LangChain's ``BM25Retriever`` under a ``ContextualCompressionRetriever``, a
LlamaIndex query engine over a ``VectorStoreIndex`` embedded with litm's MiniLM, Haystack's in-memory BM25
retriever in a pipeline saved to YAML and loaded back, all over litm's bundled NQ sample (eight passages, one
holds the answer). The pipelines compress with the real MiniLM scorer (``scorer="embed"``) for GPT-4o's
tokenizer (o200k, exact and offline), and every count below is made again with a tokenizer of its own.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import doctest
import inspect
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from haystack import Document as HaystackDocument
from haystack import Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document as LangChainDocument
from llama_index.core import VectorStoreIndex
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from integrations_support import SAMPLE_QUESTION, LitmLLM, MiniLMEmbedding, sample_docs
from litm.compress import Compressor, original_offset
from litm.errors import (
    CompressionError,
    InvalidDocumentError,
    InvalidOptionError,
    InvalidOptionTypeError,
    UnknownStrategyError,
)
from litm.integrations import haystack as litm_haystack
from litm.integrations import langchain as litm_langchain
from litm.integrations import llamaindex as litm_llamaindex
from litm.integrations._compression import METADATA_KEY, Compressing
from litm.rag._attribution import ground
from litm.retrieve._embedder import MiniLM
from litm.tokens import get_tokenizer

QUESTION = SAMPLE_QUESTION["question"]
ANSWER = "The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen"
GPT4O = "openai:gpt-4o"
ORIGINAL = {d["id"]: d for d in sample_docs()}
#: A tenth of the sample's 1,191 document tokens (GPT-4o): the answer's passage must itself be shortened.
TARGET = 120


def _count(texts: list[str]) -> int:
    tokenizer = get_tokenizer(GPT4O)
    return sum(tokenizer.count(t) for t in texts)


def _maps_back(doc_id: str, text: str, entry: dict[str, Any]) -> None:
    """The kept spans index the original text, in source order, and join into the compressed text."""
    original = ORIGINAL[doc_id]["text"]
    spans = entry["spans"]
    assert spans == sorted(spans) and all(0 <= a < b <= len(original) for a, b in spans)
    assert " ".join(original[a:b] for a, b in spans) == text
    assert entry["kept_sentences"] == len(spans) and entry["tokens"] == _count([text])


# -- LangChain ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bm25() -> BM25Retriever:
    docs = [
        LangChainDocument(page_content=d["text"], id=d["id"],
                          metadata={"title": d["title"], "source": d["source"], "gold": d["gold"]})
        for d in sample_docs()
    ]  # fmt: skip
    return BM25Retriever.from_documents(docs, k=8)


def test_langchain_compressor_in_a_contextual_compression_retriever(bm25: BM25Retriever) -> None:
    compressor = litm_langchain.LitmCompressor(tokenizer=GPT4O, target=TARGET, scorer="embed")
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=bm25)
    docs = retriever.invoke(QUESTION)
    assert 1 <= len(docs) < 8 and _count([d.page_content for d in docs]) <= TARGET
    assert any(ANSWER in d.page_content for d in docs)
    for doc in docs:
        source = ORIGINAL[doc.id]
        entry = doc.metadata[METADATA_KEY]
        assert {k: v for k, v in doc.metadata.items() if k != METADATA_KEY} == {
            "title": source["title"], "source": source["source"], "gold": source["gold"]
        }  # fmt: skip
        _maps_back(doc.id, doc.page_content, entry)
    gold = next(d for d in docs if d.id == "nq-0")
    assert gold.metadata[METADATA_KEY]["kept_sentences"] < gold.metadata[METADATA_KEY]["sentences"]
    # The retriever's own documents are untouched: the compressor hands back copies.
    assert [d.page_content for d in bm25.invoke(QUESTION)] == [ORIGINAL[d.id]["text"] for d in bm25.invoke(QUESTION)]


def test_langchain_compressor_is_a_stage_of_a_compressor_pipeline(bm25: BM25Retriever) -> None:
    # The retriever scorer (BM25's order) makes this a fast check of the composition, not of the scorer.
    compressor = litm_langchain.LitmCompressor(tokenizer=GPT4O, target=200, scorer="retriever")
    pipeline = DocumentCompressorPipeline(transformers=[compressor, litm_langchain.LitmReorder(strategy="edges")])
    docs = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=bm25).invoke(QUESTION)
    alone = compressor.compress_documents(bm25.invoke(QUESTION), QUESTION)
    assert len(alone) >= 2 and sorted(d.id for d in docs) == sorted(d.id for d in alone)
    assert all(d.metadata[METADATA_KEY]["spans"] for d in docs) and _count([d.page_content for d in docs]) <= 200
    # The async path (LangChain runs the compressor in an executor) gives the same documents.
    again = asyncio.run(ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=bm25).ainvoke(QUESTION))
    assert [(d.id, d.page_content) for d in again] == [(d.id, d.page_content) for d in docs]


def test_litms_attribution_points_into_the_original_of_a_compressed_document() -> None:
    # The answer's sentence comes after two that the compressor cuts, so its offsets move.
    text = ("Stockholm hosts a ceremony every December.  The weather there is cold in winter. The first Nobel "
            "Prize in Physics went to Wilhelm Röntgen in 1901. He discovered X-rays in 1895.")  # fmt: skip
    cheese = "Cheese is made from milk. Manchego is from Spain."
    docs = [LangChainDocument(page_content=text, id="nobel"), LangChainDocument(page_content=cheese, id="cheese")]
    kept = litm_langchain.LitmCompressor(tokenizer=GPT4O, target=20).compress_documents(docs, QUESTION)
    assert [(d.id, d.page_content) for d in kept] == [
        ("nobel", "The first Nobel Prize in Physics went to Wilhelm Röntgen in 1901.")
    ]
    prompt = litm_langchain.LitmPrompt(strategy="none").assemble(kept, QUESTION).prompt
    (found,) = ground("Wilhelm Röntgen", prompt.plan)
    assert found.id == "nobel" and text[found.start : found.end] == "Wilhelm Röntgen"
    assert original_offset(kept[0].metadata[METADATA_KEY]["spans"], 0) == text.index("The first")


def test_langchain_settings_round_trip_through_model_dump() -> None:
    compressor = litm_langchain.LitmCompressor(tokenizer=GPT4O, ratio=4, scorer="retriever", reorder="edges")
    dumped = compressor.model_dump()
    assert dumped["ratio"] == 4.0 and litm_langchain.LitmCompressor(**dumped).model_dump() == dumped


# -- LlamaIndex -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    nodes = [
        TextNode(text=d["text"], id_=d["id"], metadata={"title": d["title"], "source": d["source"]})
        for d in sample_docs()
    ]
    return VectorStoreIndex(nodes, embed_model=MiniLMEmbedding(MiniLM()))


def test_llamaindex_compressor_in_a_query_engine(index: VectorStoreIndex) -> None:
    compressor = litm_llamaindex.LitmCompressor(tokenizer=GPT4O, target=TARGET)
    llm = LitmLLM()  # NoText asks no LLM: the engine runs retrieval and the postprocessor only
    engine = index.as_query_engine(
        llm=llm, similarity_top_k=8, node_postprocessors=[compressor], response_synthesizer=NoText(llm=llm)
    )
    hits = {h.node.node_id: h for h in index.as_retriever(similarity_top_k=8).retrieve(QUESTION)}
    nodes = engine.query(QUESTION).source_nodes
    assert 1 <= len(nodes) < 8 and _count([n.node.get_content() for n in nodes]) <= TARGET
    assert any(ANSWER in n.node.get_content() for n in nodes)
    for node in nodes:
        hit = hits[node.node_id]
        assert node.score == hit.score  # the retriever's score, not the compressor's
        assert node.node.relationships == hit.node.relationships
        assert {k: v for k, v in node.node.metadata.items() if k != METADATA_KEY} == hit.node.metadata
        _maps_back(node.node_id, node.node.get_content(), node.node.metadata[METADATA_KEY])
        # The provenance is for the program, not the model: the LLM and the embedder never see it.
        for mode in (MetadataMode.LLM, MetadataMode.EMBED):
            shown = node.node.get_content(metadata_mode=mode)
            assert "spans" not in shown and f"title: {hit.node.metadata['title']}" in shown
    assert hits["nq-0"].node.get_content() == ORIGINAL["nq-0"]["text"]  # the index's nodes are untouched


def test_llamaindex_compressor_in_an_async_query(index: VectorStoreIndex) -> None:
    compressor = litm_llamaindex.LitmCompressor(tokenizer=GPT4O, target=TARGET, scorer="retriever")
    llm = LitmLLM()
    engine = index.as_query_engine(
        llm=llm, similarity_top_k=8, node_postprocessors=[compressor], response_synthesizer=NoText(llm=llm)
    )
    nodes = engine.query(QUESTION).source_nodes
    again = asyncio.run(engine.aquery(QUESTION)).source_nodes
    assert nodes and [(n.node_id, n.node.get_content(), n.score) for n in again] == [
        (n.node_id, n.node.get_content(), n.score) for n in nodes
    ]


def test_llamaindex_settings_round_trip_through_to_dict() -> None:
    compressor = litm_llamaindex.LitmCompressor(tokenizer=GPT4O, target=300, scorer="lm", model="local:smollm2")
    data = compressor.to_dict()
    assert data["class_name"] == "LitmCompressor" and data["model"] == "local:smollm2"
    again = litm_llamaindex.LitmCompressor.from_dict(data)
    assert again.to_dict() == data and again.compressing == compressor.compressing
    assert litm_llamaindex.LitmCompressor.from_json(compressor.to_json()).to_dict() == data


def test_llamaindex_compressor_needs_the_query() -> None:
    node = NodeWithScore(node=TextNode(text="One. Two.", id_="a"), score=0.5)
    compressor = litm_llamaindex.LitmCompressor(tokenizer=GPT4O, target=3, scorer="retriever")
    with pytest.raises(CompressionError, match="compresses for the question: call postprocess_nodes"):
        compressor.postprocess_nodes([node])


# -- Haystack -------------------------------------------------------------------------------------------------


def _store() -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    store.write_documents([
        HaystackDocument(content=d["text"], id=d["id"], meta={"title": d["title"], "source": d["source"]})
        for d in sample_docs()
    ])  # fmt: skip
    return store


def test_haystack_compressor_in_a_pipeline_saved_to_yaml() -> None:
    from haystack_integrations.components.builders.litm import LitmPromptBuilder
    from haystack_integrations.components.compressors.litm import LitmCompressor

    assert LitmCompressor is litm_haystack.LitmCompressor
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(), top_k=8))
    pipe.add_component("compress", LitmCompressor(tokenizer=GPT4O, ratio=10, scorer="embed"))
    pipe.add_component("prompt", LitmPromptBuilder(strategy="none"))
    pipe.connect("retriever.documents", "compress.documents")
    pipe.connect("compress.documents", "prompt.documents")
    yaml = pipe.dumps()
    assert "type: haystack_integrations.components.compressors.litm.LitmCompressor" in yaml
    loaded = Pipeline.loads(yaml)
    assert loaded.to_dict()["components"] == pipe.to_dict()["components"]

    inputs = {"retriever": {"query": QUESTION}, "compress": {"query": QUESTION}, "prompt": {"query": QUESTION}}
    out = loaded.run(inputs, include_outputs_from={"retriever", "compress"})
    hits = {d.id: d for d in out["retriever"]["documents"]}
    kept, dropped, record = (out["compress"][k] for k in ("documents", "dropped", "compression"))
    # 1/10 of what the retrieved documents count, in GPT-4o's tokens (exact: no margin).
    budget = -(-_count([d.content for d in hits.values()]) // 10)
    assert record["budget"] == budget and _count([d.content for d in kept]) == record["tokens"] <= budget
    assert any(ANSWER in d.content for d in kept)
    assert sorted(d.id for d in kept + dropped) == sorted(hits) and not {d.id for d in kept} & {d.id for d in dropped}
    assert all(d == hits[d.id] for d in dropped)  # what was cut comes out as it came in
    for doc in kept:
        hit = hits[doc.id]
        assert (doc.score, doc.embedding, doc.blob) == (hit.score, hit.embedding, hit.blob)
        assert {k: v for k, v in doc.meta.items() if k != METADATA_KEY} == hit.meta
        _maps_back(doc.id, doc.content, doc.meta[METADATA_KEY])
    # The prompt shows the compressed documents, not the originals.
    prompt = out["prompt"]["text"]
    assert ANSWER in prompt and ORIGINAL["nq-0"]["text"] not in prompt and "original_tokens" not in prompt
    assert [d.id for d in out["prompt"]["documents"]] == [d.id for d in kept]


def test_haystack_per_run_budget_and_async_run() -> None:
    docs = [HaystackDocument(content=d["text"], id=d["id"], score=d["score"]) for d in sample_docs()]
    compressor = litm_haystack.LitmCompressor(tokenizer=GPT4O, ratio=2, scorer="retriever")
    wide = compressor.run(documents=docs, query=QUESTION)
    narrow = compressor.run(documents=docs, query=QUESTION, target=80)
    assert narrow["compression"]["budget"] == 80 and _count([d.content for d in narrow["documents"]]) <= 80
    assert wide["compression"]["budget"] > 500 and len(wide["documents"]) > len(narrow["documents"])
    done = asyncio.run(compressor.run_async(documents=docs, query=QUESTION, target=80))
    assert [(d.id, d.content) for d in done["documents"]] == [(d.id, d.content) for d in narrow["documents"]]
    assert inspect.signature(compressor.run) == inspect.signature(compressor.run_async)
    with pytest.raises(CompressionError, match="give exactly one of target"):
        compressor.run(documents=docs, query=QUESTION, target=80, ratio=2)


def test_haystack_class_docstring_example_runs() -> None:
    # Its __module__ is the haystack_integrations path, so tests/test_doctests.py skips it; it runs here.
    cls = litm_haystack.LitmCompressor
    home = inspect.getmodule(cls.run)
    tests = doctest.DocTestFinder().find(cls, "LitmCompressor", globs=dict(vars(home)))
    assert sum(len(t.examples) for t in tests) >= 1
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_haystack_load_refuses_unknown_parameters() -> None:
    data = litm_haystack.LitmCompressor(tokenizer=GPT4O, ratio=4).to_dict()
    data["init_parameters"]["ration"] = 4
    with pytest.raises(InvalidOptionError, match=r"LitmCompressor: unknown parameter\(s\) ration"):
        litm_haystack.LitmCompressor.from_dict(data)


# -- All three --------------------------------------------------------------------------------------------------

Make = Callable[..., Any]
FRAMEWORKS: dict[str, Make] = {
    "langchain": litm_langchain.LitmCompressor,
    "llamaindex": litm_llamaindex.LitmCompressor,
    "haystack": litm_haystack.LitmCompressor,
}


def _compress(framework: str, component: Any, docs: list[dict[str, Any]], query: str) -> list[tuple[str, str]]:
    """(id, text) of what ``component`` keeps of ``docs``, fed as its framework's documents."""
    if framework == "langchain":
        given = [LangChainDocument(page_content=d["text"], id=d["id"], metadata={"score": d["score"]}) for d in docs]
        return [(d.id, d.page_content) for d in component.compress_documents(given, query)]
    if framework == "llamaindex":
        nodes = [NodeWithScore(node=TextNode(text=d["text"], id_=d["id"]), score=d["score"]) for d in docs]
        return [(n.node_id, n.node.get_content()) for n in component.postprocess_nodes(nodes, query_str=query)]
    given_h = [HaystackDocument(content=d["text"], id=d["id"], score=d["score"]) for d in docs]
    return [(d.id, d.content) for d in component.run(documents=given_h, query=query)["documents"]]


def test_the_three_components_compress_alike_and_as_the_core_does() -> None:
    settings = {"tokenizer": GPT4O, "target": 450, "scorer": "retriever", "reorder": "edges"}
    expected = [(c.doc.id, c.doc.text) for c in Compressor(**settings).run(sample_docs(), QUESTION).kept]
    # Placed by edges, so the output order is not the input order: each document keeps its own id and text.
    assert [i for i, _ in expected] == ["nq-0", "nq-494", "nq-1932", "nq-70"]
    for framework, make in FRAMEWORKS.items():
        assert _compress(framework, make(**settings), sample_docs(), QUESTION) == expected, framework


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_the_components_take_compressors_settings_and_defaults(framework: str) -> None:
    make = FRAMEWORKS[framework]
    ours = {f.name for f in dataclasses.fields(Compressing)}
    theirs = {f.name: f.default for f in dataclasses.fields(Compressor)}
    assert ours == set(theirs)  # every setting of Compressor, no other
    component = make(tokenizer=GPT4O, ratio=4)
    assert component.compressing == Compressing(tokenizer=GPT4O, ratio=4)
    assert {name: getattr(component.compressing, name) for name in ours - {"tokenizer", "ratio"}} == {
        name: default for name, default in theirs.items() if name not in {"tokenizer", "ratio"}
    }


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_warmed_component_copies_and_pickles_with_its_settings(framework: str) -> None:
    component = FRAMEWORKS[framework](tokenizer=GPT4O, ratio=2, scorer="embed")
    component.compressing.warm_up()  # holds MiniLM's ONNX session now, which cannot be pickled
    copied = copy.deepcopy(component)
    pickled = pickle.loads(pickle.dumps(component))
    for other in (copied, pickled):
        assert other.compressing == component.compressing and other.compressing is not component.compressing
    # The copy loads its own model at its first run, and compresses as the original would.
    kept = _compress(framework, pickled, sample_docs()[:1], QUESTION)
    assert kept and ANSWER in kept[0][1] and _count([kept[0][1]]) <= _count([ORIGINAL["nq-0"]["text"]]) / 2


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"ratio": 4}, InvalidOptionTypeError, "tokenizer must be the target model's spec"),
        ({"tokenizer": len, "ratio": 4}, InvalidOptionTypeError, "tokenizer must be the target model's spec"),
        ({"tokenizer": GPT4O}, CompressionError, "give exactly one of target .tokens. and ratio"),
        ({"tokenizer": GPT4O, "target": 100, "ratio": 4}, CompressionError, "give exactly one of target"),
        ({"tokenizer": GPT4O, "ratio": 0.5}, InvalidOptionError, "ratio must be a finite number >= 1"),
        ({"tokenizer": GPT4O, "target": 0}, InvalidOptionError, "target must be >= 1"),
        ({"tokenizer": GPT4O, "target": "100"}, InvalidOptionTypeError, "target must be an integer, got str"),
        ({"tokenizer": GPT4O, "ratio": 4, "scorer": "bm25"}, InvalidOptionError, "unknown scorer 'bm25'"),
        ({"tokenizer": GPT4O, "ratio": 4, "model": "local"}, InvalidOptionError, "scorer 'embed' does not use one"),
        ({"tokenizer": GPT4O, "ratio": 4, "unit": "token"}, InvalidOptionError, "unit must be one of"),
        ({"tokenizer": GPT4O, "ratio": 4, "rank_weight": "high"}, InvalidOptionTypeError, "rank_weight must be a"),
        ({"tokenizer": GPT4O, "ratio": 4, "coarse": "yes"}, InvalidOptionTypeError, "coarse must be True or False"),
        ({"tokenizer": GPT4O, "ratio": 4, "reorder": "lost"}, UnknownStrategyError, "unknown placement strategy"),
        ({"tokenizer": GPT4O, "ratio": 4, "ration": 4}, (InvalidOptionError, TypeError), "ration"),
    ],
)  # fmt: skip
def test_bad_settings_raise_litms_typed_errors(
    framework: str, settings: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        FRAMEWORKS[framework](**settings)


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_bad_input_raises_typed_errors_and_no_documents_is_no_work(framework: str) -> None:
    component = FRAMEWORKS[framework](tokenizer=GPT4O, target=40, scorer="retriever")
    docs = sample_docs()[:3]
    assert _compress(framework, component, [], QUESTION) == []
    with pytest.raises(CompressionError, match="the question is blank"):
        _compress(framework, component, docs, "  ")
    with pytest.raises(CompressionError, match="document 'empty' is empty"):
        _compress(framework, component, [*docs, {"id": "empty", "text": " ", "score": 0.1}], QUESTION)
    tiny = FRAMEWORKS[framework](tokenizer=GPT4O, target=2, scorer="retriever")
    with pytest.raises(CompressionError, match="smaller than every sentence"):
        _compress(framework, tiny, docs, QUESTION)


def test_other_objects_than_the_frameworks_documents_are_refused() -> None:
    with pytest.raises(InvalidDocumentError, match="item 0: LitmCompressor takes LangChain Documents, got str"):
        litm_langchain.LitmCompressor(tokenizer=GPT4O, ratio=2).compress_documents(["text"], QUESTION)  # type: ignore[list-item]
    with pytest.raises(InvalidDocumentError, match="item 0: LitmCompressor takes NodeWithScore nodes, got TextNode"):
        litm_llamaindex.LitmCompressor(tokenizer=GPT4O, ratio=2).postprocess_nodes(
            [TextNode(text="a")],  # type: ignore[list-item]
            query_str=QUESTION,
        )
    with pytest.raises(InvalidDocumentError, match="item 1: LitmCompressor takes Haystack Documents, got dict"):
        litm_haystack.LitmCompressor(tokenizer=GPT4O, ratio=2).run(
            documents=[HaystackDocument(content="a"), {"content": "b"}],  # type: ignore[list-item]
            query=QUESTION,
        )


def test_the_components_compression_fields_are_compressings_own() -> None:
    """One definition: the pydantic components' fields are Compressing's, with its types and defaults."""
    from dataclasses import MISSING, fields

    from litm.integrations._fields import CompressionFields

    settings = fields(Compressing)
    for model in (CompressionFields, litm_langchain.LitmCompressor, litm_llamaindex.LitmCompressor):
        declared = {name: field for name, field in model.model_fields.items() if name != "callback_manager"}
        assert list(declared) == [f.name for f in settings]
        for f in settings:
            if f.default is MISSING:
                assert declared[f.name].is_required()
            else:
                assert declared[f.name].default == f.default


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_the_static_scorer_and_title_links_work_in_every_component(framework: str) -> None:
    component = FRAMEWORKS[framework](tokenizer=GPT4O, ratio=2, scorer="static", link="titles")
    assert component.compressing.link == "titles" and component.compressing._scorer().name == "static"
    kept = _compress(framework, component, sample_docs()[:1], QUESTION)
    # The static table picks by shared tokens, not always the answer sentence (docs/compress.md): the contract
    # here is the component's, the budget kept and the scorer used.
    assert kept and _count([kept[0][1]]) <= _count([ORIGINAL["nq-0"]["text"]]) / 2
