"""The LlamaIndex components inside real query engines over a ``VectorStoreIndex`` built with a local embedding.

The index embeds litm's bundled NQ sample with litm's offline MiniLM; the engines run the real retriever,
the postprocessor list and a synthesizer: ``response_mode="no_text"`` (no LLM call) or ``LitmSynthesizer``
answering with SmolLM2 through llama.cpp (see integrations_support.py).
"""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.base.llms.types import MessageRole
from llama_index.core.postprocessor import LongContextReorder
from llama_index.core.query_engine import BaseQueryEngine
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.schema import NodeWithScore, TextNode

import litm
from integrations_support import SAMPLE_QUESTION, LitmLLM, MiniLMEmbedding, sample_docs
from litm.budget._counting import as_counter
from litm.errors import InvalidOptionError, InvalidScoreError, PromptError, UnknownStrategyError, UnsupportedTypeError
from litm.integrations import Budget
from litm.integrations.llamaindex import LitmReorder, LitmSynthesizer, LitmTrimmer
from litm.placement import PlacementOptions
from litm.prompt import AnchorOptions, PromptBuilder, Wording
from litm.retrieve._embedder import MiniLM

QUESTION = SAMPLE_QUESTION["question"]
GPT4O = "openai:gpt-4o"


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    nodes = [TextNode(text=d["text"], id_=d["id"], metadata={"title": d["title"]}) for d in sample_docs()]
    return VectorStoreIndex(nodes, embed_model=MiniLMEmbedding(MiniLM()))


@pytest.fixture(scope="module")
def hits(index: VectorStoreIndex) -> list[NodeWithScore]:
    return index.as_retriever(similarity_top_k=8).retrieve(QUESTION)


def _engine(index: VectorStoreIndex, *postprocessors: object) -> BaseQueryEngine:
    # NoText asks no LLM, so its LitmLLM never loads a model: the engine runs retrieval and postprocessing only.
    # (Built here: get_response_synthesizer("no_text") drops the llm and reaches for Settings.llm, OpenAI's.)
    llm = LitmLLM()
    return index.as_query_engine(
        llm=llm, similarity_top_k=8, node_postprocessors=list(postprocessors), response_synthesizer=NoText(llm=llm)
    )


def _ids(nodes: object) -> list[str]:
    return [n.node.node_id for n in nodes]  # type: ignore[attr-defined]


def test_reorder_in_a_query_engines_postprocessor_list(index: VectorStoreIndex, hits: list[NodeWithScore]) -> None:
    assert hits[0].node.node_id == "nq-0" and all(h.score is not None for h in hits)
    response = _engine(index, LitmReorder()).query(QUESTION)
    assert _ids(response.source_nodes) == _ids(litm.place(hits, "edges", rank_by="score").items)
    assert response.source_nodes[0].node.node_id == "nq-0"  # auto without a profile: edges, the best node first
    assert [n.score for n in sorted(response.source_nodes, key=lambda n: -n.score)] == [h.score for h in hits]


def test_langchain_parity_inside_a_query_engine(index: VectorStoreIndex) -> None:
    theirs = _engine(index, LongContextReorder()).query(QUESTION)
    ours = _engine(index, LitmReorder(strategy="langchain")).query(QUESTION)
    assert _ids(ours.source_nodes) == _ids(theirs.source_nodes)


def test_trimmer_in_a_query_engine_keeps_the_best_nodes_that_fit(index: VectorStoreIndex, hits: list) -> None:
    response = _engine(index, LitmTrimmer(tokenizer=GPT4O, max_input_tokens=1000)).query(QUESTION)
    kept = response.source_nodes
    assert 4 <= len(kept) < 8 and sorted(_ids(kept)) == sorted(_ids(hits[: len(kept)]))
    assert _ids(kept) == _ids(litm.place(hits[: len(kept)], "edges", rank_by="score").items)
    messages = LitmSynthesizer.messages_for(hits[: len(kept)], QUESTION)
    sent = [{"role": m.role.value, "content": m.content} for m in messages]
    assert as_counter(GPT4O).count_request({"messages": sent}, "openai-chat").tokens <= 1000


def test_postprocessors_run_in_an_async_query(index: VectorStoreIndex) -> None:
    engine = _engine(index, LitmReorder(strategy="edges"))
    assert _ids(asyncio.run(engine.aquery(QUESTION)).source_nodes) == _ids(engine.query(QUESTION).source_nodes)


@pytest.mark.model
def test_the_synthesizer_answers_with_litms_prompt_through_a_real_llm(index: VectorStoreIndex) -> None:
    llm = LitmLLM(max_tokens=28)
    try:
        llm.model  # noqa: B018  # loads SmolLM2, or says what to install
    except litm.ModelNotFoundError as exc:
        pytest.skip(str(exc))
    # litm's id-and-title anchors, given: SmolLM2 is a model litm has not measured, whose default is Liu's format.
    xml = PromptBuilder(anchors=AnchorOptions())
    synthesizer = LitmSynthesizer(llm=llm, budget=Budget("local:smollm2", max_input_tokens=450), builder=xml)
    engine = index.as_query_engine(llm=llm, similarity_top_k=8, response_synthesizer=synthesizer)
    response = engine.query(QUESTION)
    assert "Röntgen" in str(response)
    # The model was sent litm's anchored prompt, and the response cites the nodes it showed, in prompt order.
    (sent,) = llm.requests
    assert sent[-1]["role"] == "user" and '<document id="nq-0"' in sent[-1]["content"]
    shown = synthesizer.assemble(index.as_retriever(similarity_top_k=8).retrieve(QUESTION), QUESTION)
    assert _ids(response.source_nodes) == shown.prompt.ids == _ids(shown.items)
    # The async path sends the same prompt and answers with the same nodes.
    llm.max_tokens = 2
    again = asyncio.run(engine.aquery(QUESTION))
    assert llm.requests[-1] == sent and _ids(again.source_nodes) == _ids(response.source_nodes)
    # A completion model gets the prompt text instead.
    llm.is_chat, llm.max_tokens = False, 2
    synthesizer.get_response(QUESTION, ["Wilhelm Conrad Röntgen won the first Nobel Prize in Physics."])
    assert llm.requests[-1].endswith("Answer:") and "Röntgen won the first" in llm.requests[-1]


def test_the_synthesizers_messages_are_llamaindex_chat_messages(hits: list[NodeWithScore]) -> None:
    bracket = AnchorOptions(style="bracket", positions=True, scores=True)
    builder = PromptBuilder(wording=Wording(system="Be brief."), anchors=bracket)
    edges = litm.PlacementOptions("edges", rank_by="auto")
    messages = LitmSynthesizer.messages_for(hits, QUESTION, placement=edges, builder=builder)
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    assert messages[0].content == "Be brief." and messages[1].content.startswith("Answer the question")
    assert (
        "[DOC_ID: nq-0 | REL_SCORE: 1 | POSITION: 1/8 | TITLE: List of Nobel laureates in Physics]"
        in messages[1].content
    )
    # Chat messages carry the chat wording, as the Pipeline's do: the answer first, never ids alone.
    assert messages[1].content.startswith(PromptBuilder().for_chat().wording.prompt_template.chat_instruction)
    xml = PromptBuilder(anchors=AnchorOptions())
    chat = LitmSynthesizer.messages_for(hits, QUESTION, builder=xml)[-1].content
    completion = LitmLLM()
    completion.is_chat = False  # a completion LLM's synthesizer still gives chat messages in the chat wording
    assert LitmSynthesizer(llm=completion, builder=xml).messages(hits, QUESTION)[-1].content == chat
    assert "Never reply with ids alone." in chat and "Never reply with ids alone." not in xml.build(
        [{"id": "a", "text": "x"}], QUESTION
    ).text
    # No anchors given and no model: Liu et al.'s format, whose own instruction a chat model keeps.
    default = LitmSynthesizer.messages_for(hits, QUESTION)[-1].content
    assert default.startswith(PromptBuilder().template.liu_instruction) and "Document [1](Title: " in default


def test_settings_round_trip_through_to_dict_and_json() -> None:
    profile = litm.PositionProfile.from_weights([0.9, 0.3, 1.0], name="measured")
    builder = PromptBuilder(anchors=AnchorOptions(style="liu"))
    placement = PlacementOptions(rank_by="auto", profile=profile)
    trimmer = LitmTrimmer(
        tokenizer=GPT4O, max_input_tokens=900, strategy="profile", placement=placement, builder=builder
    )
    data = trimmer.to_dict()
    assert data["class_name"] == "LitmTrimmer" and data["placement"]["profile"]["name"] == "measured"
    again = LitmTrimmer.from_dict(data)
    assert again.to_dict() == data and again.placing == trimmer.placing and again.prompt_builder == builder
    assert LitmTrimmer.from_json(trimmer.to_json()).to_dict() == data
    reorder = LitmReorder(placement=PlacementOptions("edges", min_docs=0, dedup="id"))
    assert LitmReorder.from_dict(reorder.to_dict()).placing == reorder.placing


def test_unscored_nodes_are_placed_by_rank_or_refused_never_counted_as_zero() -> None:
    nodes = [NodeWithScore(node=TextNode(text=t, id_=t), score=s) for t, s in [("a", 0.9), ("b", None), ("c", -0.4)]]
    assert _ids(LitmReorder(strategy="none").postprocess_nodes(nodes)) == ["a", "b", "c"]
    with pytest.raises(InvalidScoreError, match=r"item 1 \('b'\) has no score"):
        LitmReorder(placement=PlacementOptions(rank_by="score")).postprocess_nodes(nodes)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: LitmReorder(strategy="lost"), UnknownStrategyError, "unknown placement strategy 'lost'"),
        (lambda: LitmReorder(placement={"top_k": -2}), InvalidOptionError, "top_k must be a non-negative integer"),
        (lambda: LitmReorder(top_k=2), InvalidOptionError, "LitmReorder: unknown option.s. top_k"),
        (lambda: LitmReorder(placement="edges"), UnsupportedTypeError,
         "placement must be a litm.placement.PlacementOptions, got str"),
        (lambda: LitmReorder(topk=2), InvalidOptionError, "LitmReorder: unknown option.s. topk"),
        (lambda: LitmTrimmer(), InvalidOptionError, "LitmTrimmer needs a token budget"),
        (lambda: LitmSynthesizer.messages_for([], "Who?", rank="score"), TypeError, "unexpected keyword .* 'rank'"),
        (
            lambda: LitmSynthesizer(llm=LitmLLM(), placement={"strategy": "edges"}),
            UnsupportedTypeError,
            "placement must be a litm.placement.PlacementOptions, got dict",
        ),
        (lambda: LitmSynthesizer(llm=LitmLLM(), strategy="edges"), TypeError, "unexpected keyword argument .strategy."),
        (lambda: LitmSynthesizer(llm=LitmLLM(), tokenizer=GPT4O), TypeError, "unexpected keyword argument .tokenizer."),
        (
            lambda: LitmSynthesizer(llm=LitmLLM(), budget=GPT4O),
            UnsupportedTypeError,
            "budget must be a litm.integrations.Budget",
        ),
    ],
)
def test_bad_settings_raise_litms_typed_errors(make: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make()  # type: ignore[operator]


def test_the_trimmer_needs_the_query(hits: list[NodeWithScore]) -> None:
    with pytest.raises(PromptError, match="LitmTrimmer counts the whole prompt, question included"):
        LitmTrimmer(tokenizer=GPT4O, max_input_tokens=900).postprocess_nodes(hits)
