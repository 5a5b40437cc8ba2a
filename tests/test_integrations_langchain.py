"""The LangChain components inside real LangChain pipelines: ContextualCompressionRetriever, a compressor
pipeline, LCEL chains (one answered by a real llama.cpp chat model) and a wrapped retriever.

Retrieval is real too: an ``InMemoryVectorStore`` over litm's bundled NQ sample, embedded with litm's
offline MiniLM (see integrations_support.py).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline, EmbeddingsFilter
from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import ChatPromptValue, StringPromptValue
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever

import litm
from integrations_support import SAMPLE_QUESTION, MiniLMEmbeddings, sample_docs
from litm.budget._counting import as_counter
from litm.errors import InvalidOptionError, PromptError, UnknownStrategyError, UnsupportedTypeError
from litm.integrations.langchain import LitmPrompt, LitmReorder, LitmRetriever, LitmTrimmer
from litm.placement import PlacementOptions
from litm.prompt import AnchorOptions, PromptBuilder, Wording
from litm.retrieve._embedder import MiniLM

# litm's id-and-title anchors, given (an unmeasured model's default is Liu et al.'s numbered format).
XML = PromptBuilder(anchors=AnchorOptions())

QUESTION = SAMPLE_QUESTION["question"]
GPT4O = "openai:gpt-4o"


@pytest.fixture(scope="module")
def embeddings() -> MiniLMEmbeddings:
    return MiniLMEmbeddings(MiniLM())


@pytest.fixture(scope="module")
def retriever(embeddings: MiniLMEmbeddings) -> VectorStoreRetriever:
    store = InMemoryVectorStore(embeddings)
    store.add_documents(
        [Document(page_content=d["text"], id=d["id"], metadata={"title": d["title"]}) for d in sample_docs()]
    )
    return store.as_retriever(search_kwargs={"k": 8})


def _ids(docs: object) -> list[str]:
    return [d.id for d in docs]  # type: ignore[attr-defined]


def _chat_tokens(value: ChatPromptValue) -> int:
    messages = [{"role": "system" if m.type == "system" else "user", "content": m.content} for m in value.messages]
    return as_counter(GPT4O).count_request({"messages": messages}, "openai-chat").tokens


def test_reorder_inside_a_contextual_compression_retriever(retriever: VectorStoreRetriever) -> None:
    hits = retriever.invoke(QUESTION)
    assert hits[0].id == "nq-0"  # MiniLM ranks the passage with the answer first
    wrapped = ContextualCompressionRetriever(base_compressor=LitmReorder(), base_retriever=retriever)
    placed = wrapped.invoke(QUESTION)
    # The default, auto, has no profile for this model: edges, the best first and the second best last.
    assert _ids(placed) == _ids(litm.place(hits, "edges").items)
    assert placed[0].id == "nq-0" and placed[-1].id == hits[1].id


def test_langchain_parity_inside_a_contextual_compression_retriever(retriever: VectorStoreRetriever) -> None:
    theirs = ContextualCompressionRetriever(
        base_compressor=DocumentCompressorPipeline(transformers=[LongContextReorder()]), base_retriever=retriever
    )
    ours = ContextualCompressionRetriever(base_compressor=LitmReorder(strategy="langchain"), base_retriever=retriever)
    assert _ids(ours.invoke(QUESTION)) == _ids(theirs.invoke(QUESTION))


def test_trimmer_inside_a_contextual_compression_retriever_keeps_the_best_that_fit(
    retriever: VectorStoreRetriever,
) -> None:
    hits = retriever.invoke(QUESTION)
    trimmer = LitmTrimmer(tokenizer=GPT4O, max_input_tokens=800)
    kept = ContextualCompressionRetriever(base_compressor=trimmer, base_retriever=retriever).invoke(QUESTION)
    assert 2 <= len(kept) < len(hits)
    assert sorted(_ids(kept)) == sorted(_ids(hits[: len(kept)]))  # the lowest-ranked were cut
    assert _ids(kept) == _ids(litm.place(hits[: len(kept)], "edges").items)  # and the survivors placed (auto)
    # The prompt LitmPrompt builds from them with the same settings is the one the trimmer counted: it fits.
    value = LitmPrompt(strategy="pyramid").invoke({"context": hits[: len(kept)], "question": QUESTION})
    assert _chat_tokens(value) <= 800
    more = LitmPrompt().invoke({"context": hits[: len(kept) + 1], "question": QUESTION})
    assert _chat_tokens(more) > 800


def test_reorder_in_a_compressor_pipeline_after_a_real_embeddings_filter(
    retriever: VectorStoreRetriever, embeddings: MiniLMEmbeddings
) -> None:
    pipeline = DocumentCompressorPipeline(
        transformers=[EmbeddingsFilter(embeddings=embeddings, similarity_threshold=0.1), LitmReorder(strategy="edges")]
    )
    docs = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=retriever).invoke(QUESTION)
    # The filter keeps nq-0, nq-1932, nq-494 and nq-70 (similarity 0.70, 0.38, 0.32, 0.17); edges: 1 3 4 2.
    # (It hands on copies without ids: the passages are told apart by their text.)
    by_text = {d["text"]: d["id"] for d in sample_docs()}
    assert [by_text[d.page_content] for d in docs] == ["nq-0", "nq-494", "nq-70", "nq-1932"]


def test_reorder_is_an_lcel_step(retriever: VectorStoreRetriever) -> None:
    chain = retriever | LitmReorder(strategy="edges")
    assert _ids(chain.invoke(QUESTION)) == _ids(litm.place(retriever.invoke(QUESTION), "edges").items)
    assert _ids(asyncio.run(chain.ainvoke(QUESTION))) == _ids(chain.invoke(QUESTION))
    assert [_ids(x) for x in chain.batch([QUESTION, QUESTION])] == [_ids(chain.invoke(QUESTION))] * 2


def test_an_lcel_rag_chain_builds_litms_prompt_within_the_budget(retriever: VectorStoreRetriever) -> None:
    builder = PromptBuilder(wording=Wording(system="Answer from the documents only."), anchors=AnchorOptions())
    prompt = LitmPrompt(tokenizer=GPT4O, max_input_tokens=1000, builder=builder)
    chain = {"context": retriever, "question": RunnablePassthrough()} | prompt
    value = chain.invoke(QUESTION)
    assert isinstance(value, ChatPromptValue)
    system, human = value.messages
    assert isinstance(system, SystemMessage) and system.content == "Answer from the documents only."
    assert isinstance(human, HumanMessage) and human.content.rstrip().endswith(f"Question: {QUESTION}")
    assert _chat_tokens(value) <= 1000
    made = prompt.assemble(retriever.invoke(QUESTION), QUESTION)
    assert (
        4 <= len(made.items) < 8
        and made.prompt.ids[0] == "nq-0"  # auto without a profile: edges, the best first
        and f'<document id="{made.prompt.ids[0]}" title="' in human.content
    )
    assert made.prompt.user == human.content


def test_lcel_text_output_for_a_completion_model(retriever: VectorStoreRetriever) -> None:
    prompt = LitmPrompt(output="text", documents_key="docs", question_key="q", strategy="none", builder=XML)
    value = ({"docs": retriever, "q": RunnablePassthrough()} | prompt).invoke(QUESTION)
    assert isinstance(value, StringPromptValue) and value.text.endswith("Answer:")
    assert value.text.index('id="nq-0"') < value.text.index('id="nq-1932"')


@pytest.mark.model
def test_an_lcel_chain_answers_with_a_real_llama_cpp_chat_model() -> None:
    from langchain_community.chat_models import ChatLlamaCpp

    from litm.errors import ModelNotFoundError
    from litm.models._embedded import smollm2_path

    try:
        path = smollm2_path()
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    # Room for a sentence before the name: on some CPUs (seen on an AVX-512 AMD EPYC) SmolLM2 writes "The first
    # Nobel Prize in Physics was awarded to:\n\n- Wilhelm Conrad R..." and reaches "Röntgen" after 16 tokens;
    # greedy decoding only extends the answer.
    llm = ChatLlamaCpp(model_path=str(path), n_ctx=2048, temperature=0.0, max_tokens=40, n_threads=2, verbose=False)
    # The passages with their titles, which the default anchors show: without one, SmolLM2 135M answered "John
    # Bardeen" from the right passage. 330 tokens hold the gold passage alone.
    docs = [Document(page_content=d["text"], id=d["id"], metadata={"title": d["title"]}) for d in sample_docs()]
    sent: list[ChatPromptValue] = []
    # litm's id-and-title anchors, given: with Liu et al.'s format (the default for a model litm has not measured)
    # SmolLM2 135M answered "John Bardeen" here too.
    chain = LitmPrompt(tokenizer=GPT4O, max_input_tokens=330, builder=XML) | RunnableLambda(
        lambda v: sent.append(v) or v
    )
    answer = (chain | llm | StrOutputParser()).invoke({"context": docs, "question": QUESTION})
    assert "Röntgen" in answer
    assert _chat_tokens(sent[0]) <= 330 and 'id="nq-0"' in sent[0].messages[-1].content


def test_a_wrapped_retriever_places_and_trims(retriever: VectorStoreRetriever) -> None:
    hits = retriever.invoke(QUESTION)
    placed = LitmRetriever(retriever=retriever, strategy="langchain")
    assert isinstance(placed, BaseRetriever)
    assert _ids(placed.invoke(QUESTION)) == _ids(LongContextReorder().transform_documents(hits))
    trimmed = LitmRetriever(retriever=retriever, tokenizer=GPT4O, max_input_tokens=800).invoke(QUESTION)
    assert _ids(trimmed) == _ids(LitmTrimmer(tokenizer=GPT4O, max_input_tokens=800).compress_documents(hits, QUESTION))
    assert _ids(asyncio.run(placed.ainvoke(QUESTION))) == _ids(placed.invoke(QUESTION))


def test_scored_pairs_rank_by_the_stores_score_once_its_direction_is_said(embeddings: MiniLMEmbeddings) -> None:
    store = InMemoryVectorStore(embeddings)
    store.add_documents([Document(page_content=d["text"], id=d["id"]) for d in sample_docs()])
    pairs = store.similarity_search_with_score(QUESTION, k=8)
    shuffled = pairs[::-1]  # the scores, not the order, say which is best
    similarity = PlacementOptions("none", rank_by="score", higher_is_better=True)
    ours = LitmReorder(placement=similarity).invoke(shuffled)
    assert [d.id for d, _ in ours] == [d.id for d, _ in pairs]
    # A placement given states the direction; without one (the strategy shorthand alone) pairs are refused.
    with pytest.raises(InvalidOptionError, match=r"pairs need higher_is_better stated: placement=PlacementOptions"):
        LitmReorder(strategy="none").invoke(shuffled)
    distance = LitmReorder(placement=similarity.replace(higher_is_better=False)).invoke(shuffled)
    assert [d.id for d, _ in distance] == [d.id for d, _ in pairs][::-1]


def test_metadata_relevance_scores_are_read_higher_is_better() -> None:
    # What LangChain's rerankers (Cohere, FlashRank, cross-encoder) write into metadata.
    docs = [Document(page_content=f"d{i}", metadata={"relevance_score": s}) for i, s in enumerate([0.2, 0.9, 0.5])]
    out = LitmReorder(placement=PlacementOptions("none", rank_by="auto")).transform_documents(docs)
    assert [d.page_content for d in out] == ["d1", "d2", "d0"]
    assert [d.page_content for d in LitmReorder(strategy="none").transform_documents(docs)] == ["d0", "d1", "d2"]


def test_settings_round_trip_through_model_dump() -> None:
    builder = PromptBuilder(anchors=AnchorOptions(style="liu"))
    placement = PlacementOptions(top_k=5, profile=litm.PositionProfile.from_weights([0.9, 0.3, 1.0]))
    trimmer = LitmTrimmer(tokenizer=GPT4O, max_input_tokens=900, builder=builder, strategy="profile",
                          placement=placement)  # fmt: skip
    dumped = trimmer.model_dump()
    assert json.loads(json.dumps(dumped))["placement"] == placement.to_dict()  # saved as its JSON form
    again = LitmTrimmer(**dumped)
    assert again.model_dump() == dumped and again.prompt_builder == builder
    assert again.placing == trimmer.placing == placement.replace(strategy="profile")


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: LitmReorder(strategy="lost"), UnknownStrategyError, "unknown placement strategy 'lost'"),
        (lambda: LitmReorder(stratgy="edges"), InvalidOptionError, "LitmReorder: unknown option.s. stratgy"),
        (lambda: LitmReorder(rank_by="score"), InvalidOptionError, "LitmReorder: unknown option.s. rank_by"),
        (lambda: LitmReorder(placement=["edges"]), UnsupportedTypeError,
         "placement must be a litm.placement.PlacementOptions, got list"),
        (lambda: LitmReorder(placement={"rank_by": "best"}), InvalidOptionError, "rank_by must be 'auto'"),
        (lambda: LitmTrimmer(strategy="edges"), InvalidOptionError, "LitmTrimmer needs a token budget"),
        (lambda: LitmTrimmer(max_input_tokens=100), InvalidOptionError, "tokenizer is missing"),
        (lambda: LitmPrompt(output="json"), InvalidOptionError, "output must be 'chat' or 'text'"),
        (lambda: LitmPrompt(builder={"type": "x"}), PromptError, "not a serialised PromptBuilder"),
    ],
)
def test_bad_settings_raise_litms_typed_errors(make: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make()  # type: ignore[operator]


def test_bad_input_raises_typed_errors() -> None:
    with pytest.raises(PromptError, match=r"LitmPrompt: the input has no 'question' \(keys: context\)"):
        LitmPrompt().invoke({"context": []})
    with pytest.raises(PromptError, match="takes a mapping with 'context' and 'question', got str"):
        LitmPrompt().invoke("who?")  # type: ignore[arg-type]
    with pytest.raises(litm.InvalidDocumentError, match="expected a list of documents, got str"):
        LitmPrompt().invoke({"context": "not documents", "question": "who?"})
    with pytest.raises(litm.InvalidDocumentError, match="item 1 is None"):
        LitmReorder().transform_documents([Document(page_content="a"), None])  # type: ignore[list-item]


def test_the_langchain_extra_installs_what_the_readme_examples_import() -> None:
    """Every distribution the LangChain guide's examples import from is in `litm[langchain]`, pinned as in dev."""
    import importlib.metadata
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    guide = (root / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = guide.split("\n## LangChain\n", 1)[1].split("\n## ", 1)[0]
    modules = set(re.findall(r"^from (langchain\w*)[.\w]* import", section, re.MULTILINE))
    assert {"langchain_classic", "langchain_core"} <= modules
    extras = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]

    def names(requirements: list[str]) -> dict[str, str]:
        return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower(): r for r in requirements}

    extra, dev = names(extras["langchain"]), names(extras["dev"])
    owners = importlib.metadata.packages_distributions()
    for module in modules:
        for dist in owners[module]:
            assert dist.lower() in extra, f"{module} comes from {dist}, which litm[langchain] does not install"
            pinned = dev.get(dist.lower())
            assert pinned is None or "==" not in pinned or extra[dist.lower()] == pinned, (dist, pinned)
