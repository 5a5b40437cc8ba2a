"""The Haystack components inside real Haystack 3 pipelines, saved to YAML and loaded back.

Retrieval is Haystack's own in-memory BM25 over litm's bundled NQ sample; one pipeline ends in Haystack's
``OpenAIChatGenerator`` talking to a real llama.cpp server (SmolLM2, tests/fixtures_server.py).
"""

from __future__ import annotations

import asyncio
import doctest
import inspect
import json

import pytest
from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.core.errors import DeserializationError, PipelineError
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore

import litm
from fixtures_server import Server
from integrations_support import SAMPLE_QUESTION, sample_docs
from litm.budget._counting import as_counter
from litm.errors import InvalidOptionError, UnknownStrategyError, UnsupportedTypeError
from litm.integrations import haystack as litm_haystack
from litm.placement import PlacementOptions
from litm.prompt import AnchorOptions, PromptBuilder, Wording

QUESTION = SAMPLE_QUESTION["question"]
GPT4O = "openai:gpt-4o"


def _store() -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=d["text"], id=d["id"], meta={"title": d["title"]}) for d in sample_docs()])
    return store


def _chat_tokens(messages: list[ChatMessage]) -> int:
    sent = [{"role": m.role.value, "content": m.text} for m in messages]
    return as_counter(GPT4O).count_request({"messages": sent}, "openai-chat").tokens


def _ids(docs: list[Document]) -> list[str]:
    return [d.id for d in docs]


def test_the_components_are_saved_under_haystack_integrations() -> None:
    from haystack_integrations.components.builders.litm import LitmPromptBuilder
    from haystack_integrations.components.rankers.litm import LitmRanker, LitmTrimmer

    assert LitmRanker is litm_haystack.LitmRanker and LitmTrimmer is litm_haystack.LitmTrimmer
    assert LitmPromptBuilder is litm_haystack.LitmPromptBuilder
    assert LitmRanker().to_dict()["type"] == "haystack_integrations.components.rankers.litm.LitmRanker"
    assert LitmPromptBuilder().to_dict()["type"] == "haystack_integrations.components.builders.litm.LitmPromptBuilder"


def test_a_trim_and_prompt_pipeline_survives_yaml_and_runs() -> None:
    from haystack_integrations.components.builders.litm import LitmPromptBuilder
    from haystack_integrations.components.rankers.litm import LitmTrimmer

    builder = PromptBuilder(
        wording=Wording(system="Answer from the documents."), anchors=AnchorOptions(style="bracket")
    )
    profile = litm.PositionProfile.from_weights([0.95, 0.4, 0.3, 0.5, 0.9], name="measured")
    placement = PlacementOptions("profile", rank_by="auto", dedup="id", profile=profile)
    settings = {"builder": builder, "placement": placement}
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(), top_k=8))
    pipe.add_component("trim", LitmTrimmer(tokenizer=GPT4O, max_input_tokens=900, **settings))
    pipe.add_component("prompt", LitmPromptBuilder(**settings))
    pipe.connect("retriever.documents", "trim.documents")
    pipe.connect("trim.documents", "prompt.documents")
    yaml = pipe.dumps()
    assert "type: haystack_integrations.components.rankers.litm.LitmTrimmer" in yaml and "name: measured" in yaml

    loaded = Pipeline.loads(yaml)
    assert loaded.dumps() == yaml
    inputs = {"retriever": {"query": QUESTION}, "trim": {"query": QUESTION}, "prompt": {"query": QUESTION}}
    out = loaded.run(inputs, include_outputs_from={"retriever", "trim"})
    hits, kept, dropped = out["retriever"]["documents"], out["trim"]["documents"], out["trim"]["dropped"]
    assert 4 <= len(kept) < len(hits) and _ids(dropped) == _ids(hits[len(kept) :])  # lowest-ranked cut first
    by_profile = PlacementOptions("profile", rank_by="score", profile=profile)
    assert _ids(kept) == _ids(litm.place(hits[: len(kept)], placement=by_profile).items)
    # The prompt shows the trimmer's documents in the trimmer's order, and it is the prompt that was counted.
    assert _ids(out["prompt"]["documents"]) == _ids(kept)
    system, user = out["prompt"]["prompt"]
    assert system.text == "Answer from the documents." and f"[DOC_ID: {kept[0].id} |" in user.text
    assert _chat_tokens(out["prompt"]["prompt"]) <= 900 and out["prompt"]["text"].endswith("Answer:")


def test_a_ranker_before_haystacks_own_chat_prompt_builder_survives_yaml() -> None:
    from haystack_integrations.components.rankers.litm import LitmRanker

    template = [ChatMessage.from_user("{% for d in documents %}[{{ d.id }}] {% endfor %}{{ query }}")]
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(), top_k=6))
    pipe.add_component("ranker", LitmRanker(strategy="edges"))
    pipe.add_component("prompt", ChatPromptBuilder(template=template))
    pipe.connect("retriever.documents", "ranker.documents")
    pipe.connect("ranker.documents", "prompt.documents")
    loaded = Pipeline.loads(pipe.dumps())
    inputs = {"retriever": {"query": QUESTION}, "prompt": {"query": QUESTION}}
    out = loaded.run(inputs, include_outputs_from={"retriever", "ranker"})
    placed = _ids(litm.place(out["retriever"]["documents"], "edges", rank_by="score").items)
    assert _ids(out["ranker"]["documents"]) == placed
    assert out["prompt"]["prompt"][0].text == "".join(f"[{i}] " for i in placed) + QUESTION


def test_the_pipeline_runs_async_through_run_async() -> None:
    from haystack_integrations.components.rankers.litm import LitmRanker

    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(), top_k=8))
    pipe.add_component("ranker", LitmRanker(placement=PlacementOptions(rank_by="auto", top_k=5)))
    pipe.connect("retriever.documents", "ranker.documents")
    sync = pipe.run({"retriever": {"query": QUESTION}})["ranker"]["documents"]
    done = asyncio.run(pipe.run_async({"retriever": {"query": QUESTION}}))["ranker"]["documents"]
    assert len(sync) == 5 and _ids(done) == _ids(sync)


@pytest.mark.parametrize("name", ["LitmRanker", "LitmTrimmer", "LitmPromptBuilder"])
def test_run_async_has_runs_signature(name: str) -> None:
    cls = getattr(litm_haystack, name)
    assert inspect.signature(cls.run) == inspect.signature(cls.run_async)
    assert inspect.iscoroutinefunction(cls.run_async)


def test_a_component_outside_haystack_integrations_would_not_load() -> None:
    # Why the components are saved under haystack_integrations: Pipeline.loads refuses other modules.
    pipe = Pipeline()
    pipe.add_component("ranker", litm_haystack.LitmRanker())
    yaml = pipe.dumps().replace(
        "haystack_integrations.components.rankers.litm.LitmRanker", "litm.integrations.haystack._rankers.LitmRanker"
    )
    with pytest.raises((DeserializationError, PipelineError), match=r"litm\.integrations\.haystack"):
        Pipeline.loads(yaml)


def test_the_placement_is_saved_as_one_value_with_the_strategy_shorthand_applied() -> None:
    profile = litm.PositionProfile.from_weights([0.9, 0.3, 1.0], name="measured")
    given = PlacementOptions(rank_by="score", top_k=3, profile=profile)
    ranker = litm_haystack.LitmRanker(strategy="profile", placement=given)
    saved = json.loads(json.dumps(ranker.to_dict()))
    assert list(saved["init_parameters"]) == ["placement"] and saved["init_parameters"]["placement"]["top_k"] == 3
    again = litm_haystack.LitmRanker.from_dict(saved)
    assert again.placing == ranker.placing == given.replace(strategy="profile")
    assert litm_haystack.LitmRanker().placing == PlacementOptions(rank_by="auto", dedup="id")


def test_duplicates_keep_the_best_ranked_copy_as_haystacks_rankers_do() -> None:
    docs = [Document(content="a", id="x", score=0.2), Document(content="b", id="y", score=0.5),
            Document(content="a", id="x", score=0.9)]  # fmt: skip
    out = litm_haystack.LitmRanker(strategy="none").run(documents=docs)["documents"]
    assert [(d.id, d.score) for d in out] == [("x", 0.9), ("y", 0.5)]


def test_per_run_overrides() -> None:
    docs = [Document(content="lorem ipsum " * 30, id=f"d{i}", score=1 - i / 10) for i in range(6)]
    ranker = litm_haystack.LitmRanker(strategy="none")
    assert _ids(ranker.run(documents=docs, top_k=2)["documents"]) == ["d0", "d1"]
    trimmer = litm_haystack.LitmTrimmer(tokenizer=GPT4O, max_input_tokens=2000)
    assert len(trimmer.run(documents=docs, query="Which?")["documents"]) == 6
    assert len(trimmer.run(documents=docs, query="Which?", max_input_tokens=300)["documents"]) < 6
    prompt = litm_haystack.LitmPromptBuilder(tokenizer=GPT4O, max_input_tokens=2000)
    assert len(prompt.run(query="Which?", documents=docs)["documents"]) == 6
    assert len(prompt.run(query="Which?", documents=docs, max_input_tokens=300)["documents"]) < 6
    with pytest.raises(InvalidOptionError, match="tokenizer is missing"):
        litm_haystack.LitmPromptBuilder().run(query="Which?", documents=docs, max_input_tokens=-1)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: litm_haystack.LitmRanker(strategy="lost"), UnknownStrategyError, "unknown placement strategy"),
        (lambda: litm_haystack.LitmRanker(placement={"strategy": "edges"}), UnsupportedTypeError,
         "LitmRanker: placement must be a litm.placement.PlacementOptions, got dict"),
        (lambda: litm_haystack.LitmRanker.from_dict(
            {"type": "haystack_integrations.components.rankers.litm.LitmRanker",
             "init_parameters": {"placement": {"rank_by": "bm25"}}}),
         InvalidOptionError, "rank_by must be 'auto', 'input'"),
        (lambda: litm_haystack.LitmRanker.from_dict(
            {"type": "haystack_integrations.components.rankers.litm.LitmRanker",
             "init_parameters": {"placement": {"top_kk": 3}}}),
         InvalidOptionError, "unknown placement option.s. top_kk"),
        (lambda: litm_haystack.LitmTrimmer(tokenizer=GPT4O, max_input_tokens=0), InvalidOptionError,
         "max_input_tokens must be a positive integer"),
        (lambda: litm_haystack.LitmPromptBuilder(max_input_tokens=500), InvalidOptionError, "tokenizer is missing"),
        (lambda: litm_haystack.LitmRanker.from_dict(
            {"type": "haystack_integrations.components.rankers.litm.LitmRanker", "init_parameters": {"stratgy": "x"}}),
         InvalidOptionError, "LitmRanker: unknown parameter.s. stratgy"),
        (lambda: litm_haystack.LitmRanker.from_dict({"type": "haystack.X", "init_parameters": {}}),
         InvalidOptionError, "cannot load a 'haystack.X'"),
    ],
)  # fmt: skip
def test_bad_settings_raise_litms_typed_errors(make: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make()  # type: ignore[operator]


def test_a_document_without_text_is_refused_with_its_index() -> None:
    with pytest.raises(litm.InvalidDocumentError, match="item 1: text must be str, got NoneType"):
        litm_haystack.LitmRanker().run(documents=[Document(content="a"), Document(content=None)])


@pytest.mark.parametrize("name", ["LitmRanker", "LitmTrimmer", "LitmPromptBuilder"])
def test_the_class_docstring_examples_run(name: str) -> None:
    # Their __module__ is the haystack_integrations path, so tests/test_doctests.py (which walks src/litm) skips
    # them; they run here.
    cls = getattr(litm_haystack, name)
    home = inspect.getmodule(cls.run)  # the module the class is written in
    tests = doctest.DocTestFinder().find(cls, name, globs=dict(vars(home)))
    assert sum(len(t.examples) for t in tests) >= 1
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.server
def test_a_rag_pipeline_answers_through_haystacks_openai_chat_generator(
    llama_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    from haystack_integrations.components.builders.litm import LitmPromptBuilder

    monkeypatch.setenv("LITM_TEST_LLAMA_KEY", "not-needed-by-llama-cpp")
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(), top_k=8))
    # litm's id-and-title anchors, given: SmolLM2 is a model litm has not measured (whose default is Liu's format).
    xml = PromptBuilder(anchors=AnchorOptions())
    pipe.add_component("prompt", LitmPromptBuilder(tokenizer=GPT4O, max_input_tokens=330, builder=xml))
    pipe.add_component("llm", OpenAIChatGenerator(
        api_key=Secret.from_env_var("LITM_TEST_LLAMA_KEY"), model=llama_server.alias,
        api_base_url=llama_server.base_url,
        generation_kwargs={"max_tokens": 24, "temperature": 0.0}))  # fmt: skip
    pipe.connect("retriever.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.messages")
    loaded = Pipeline.loads(pipe.dumps())
    out = loaded.run({"retriever": {"query": QUESTION}, "prompt": {"query": QUESTION}}, include_outputs_from={"prompt"})
    assert _chat_tokens(out["prompt"]["prompt"]) <= 330 and _ids(out["prompt"]["documents"]) == ["nq-0"]
    assert "Röntgen" in out["llm"]["replies"][0].text
