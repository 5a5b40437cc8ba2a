"""litm.rag.Pipeline: real indexes and retrievers, real tokenizers, the real embedded model, and the OpenAI SDK
at its HTTP boundary (the one part that would leave the machine)."""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from litm.errors import (
    ContextBudgetExceeded,
    IndexNotFoundError,
    InvalidOptionError,
    InvalidOptionTypeError,
    InvalidProfileError,
    PromptError,
    RetrievalError,
    UnknownModelSpecError,
    UnknownStrategyError,
    UnsupportedTypeError,
)
from litm.models import load_model
from litm.placement import PositionProfile
from litm.prompt import AnchorOptions, PromptBuilder, Wording
from litm.rag import Pipeline
from litm.rag._defaults import DEFAULT_ANSWER_TOKENS, DEFAULT_K, DEFAULT_STRATEGY
from litm.retrieve import BM25, Index, build_index
from litm.spend import price_completion
from litm.tokens import get_tokenizer

http: Any = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

TEXTS = {
    "fr": "Paris is the capital of France. The Eiffel Tower stands in Paris.",
    "it": "Rome is the capital of Italy. The Colosseum stands in Rome.",
    "de": "Berlin is the capital of Germany. The Brandenburg Gate stands in Berlin.",
    "es": "Madrid is the capital of Spain. The Prado museum is in Madrid.",
    "pt": "Lisbon is the capital of Portugal. Trams climb its hills.",
    "at": "Vienna is the capital of Austria. It is known for its coffee houses.",
}


@pytest.fixture
def index(tmp_path: Path) -> Index:
    idx = Index.create(tmp_path / "idx", dense=False)
    idx.add_texts([{"id": k, "text": v, "source": f"{k}.txt"} for k, v in TEXTS.items()])
    return idx


def gpt(index: Index, reply: str = "Paris [fr#0].", **options: Any) -> tuple[Pipeline, list[Any]]:
    """A pipeline whose model is the real OpenAI SDK answering through a mock HTTP transport."""
    sent: list[Any] = []

    def handle(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return http.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 6, "total_tokens": 306},
        })  # fmt: skip

    client = http.Client(transport=http.MockTransport(handle))
    model = load_model("openai:gpt-4o-mini", api_key="sk-test", http_client=client)
    # These tests are about citations by id: litm's id-and-title anchors, given (an unmeasured API model's own
    # default is Liu et al.'s numbered format; see tests/test_anchor_rule.py).
    options.setdefault("builder", PromptBuilder(anchors=AnchorOptions()))
    return Pipeline.from_index(index, retriever="bm25", model=model, **options), sent


# -- construction -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"retriever": 42}, UnsupportedTypeError, "retriever must be"),
        ({"strategy": "middle-out"}, UnknownStrategyError, "middle-out"),
        ({"strategy": 3}, InvalidOptionTypeError, "strategy must be"),
        ({"builder": {"lang": "zh"}}, UnsupportedTypeError, "builder must be a PromptBuilder"),
        ({"budget": 0}, InvalidOptionError, "budget must be >= 1"),
        ({"budget": True}, InvalidOptionTypeError, "budget must be an integer"),
        ({"model": "nonsense:x"}, UnknownModelSpecError, "nonsense"),
        ({"model": 3.5}, UnsupportedTypeError, "model must be"),
        ({"k": "10"}, InvalidOptionTypeError, "k must be an integer"),
        ({"max_answer_tokens": -1}, InvalidOptionError, "max_answer_tokens must be >= 1"),
        ({"stop": [1]}, InvalidOptionTypeError, "stop must be"),
        ({"profile": 0.5}, InvalidOptionTypeError, "profile must be"),
        ({"profile": "/nonexistent/profile.json"}, InvalidProfileError, "not found"),
    ],
)
def test_the_constructor_validates_every_argument(
    index: Index, options: dict[str, Any], error: type, match: str
) -> None:
    args: dict[str, Any] = {"retriever": BM25(index), **options}
    with pytest.raises(error, match=match):
        Pipeline(**args)


def test_defaults_are_the_shared_ones(index: Index) -> None:
    rag = Pipeline(index)  # an Index: the auto retriever (bm25 here: no vectors)
    assert (rag.strategy, rag.model_spec, rag.k, rag.max_answer_tokens) == (
        DEFAULT_STRATEGY, "local", DEFAULT_K, DEFAULT_ANSWER_TOKENS,
    )  # fmt: skip
    assert rag.retriever.name == "bm25" and rag.budget is None
    with pytest.raises(IndexNotFoundError):
        Pipeline(index.path.parent / "missing")


# -- before the call --------------------------------------------------------------------------------


def test_prepare_retrieves_places_and_counts_exactly_without_a_request(index: Index) -> None:
    rag, sent = gpt(index)
    prepared = rag.prepare("What is the capital of France?")
    assert not sent
    hits = [h.chunk.id for h in prepared.hits]
    assert hits[0] == "fr#0" and len(hits) == 6
    plan = prepared.plan
    # The default, auto, with no measured profile: edges, the best chunk first and the second best last.
    assert plan.strategy == "auto" and plan.ranks == [1, 3, 5, 6, 4, 2]
    assert plan.note is not None and plan.note.startswith("auto: no measured profile for this model: edges")
    assert plan.slots[0].doc.id == "fr#0" and plan.slots[0].doc.metadata["start"] == 0
    messages = prepared.prompt.messages("openai")
    exact = get_tokenizer("openai:gpt-4o-mini").count_messages(messages)  # type: ignore[arg-type]
    assert prepared.fit.exact and prepared.fit.tokens == exact
    assert prepared.budget == 128000 and prepared.budget_source == "the model's context window"
    assert set(prepared.timings) >= {"retrieve", "fit"}


def test_a_small_budget_drops_the_lowest_ranked_documents(index: Index) -> None:
    full = gpt(index)[0].prepare("capital of France").fit.tokens
    rag, _ = gpt(index, budget=full - 10 + DEFAULT_ANSWER_TOKENS)
    prepared = rag.prepare("capital of France")
    assert prepared.budget_source == "given"
    assert prepared.fit.upper <= full - 10 and len(prepared.fit.kept) == 5
    assert [d.id for d in prepared.fit.dropped] == [prepared.hits[-1].chunk.id]
    with pytest.raises(ContextBudgetExceeded):
        gpt(index, budget=DEFAULT_ANSWER_TOKENS + 5)[0].prepare("capital of France")


def test_a_budget_above_the_window_is_held_to_the_window(index: Index) -> None:
    prepared = gpt(index, budget=10**7)[0].prepare("capital of France")
    assert prepared.budget == 128000 and "larger" in prepared.budget_source


def test_a_measured_profile_gives_the_budget_and_the_slot_weights(index: Index) -> None:
    profile = PositionProfile.from_weights(
        [0.9, 0.1, 0.2, 0.3, 0.4, 0.95],
        name="probe-x",
        metadata={"source": "litm probe", "recommended_max_input_tokens": 4096},
    )
    prepared = gpt(index, profile=profile, strategy="profile")[0].prepare("capital of France")
    assert prepared.budget == 4096 and "probe-x" in prepared.budget_source
    assert prepared.plan.strategy == "profile" and prepared.plan.slots[-1].doc.id == "fr#0"
    assert [round(s.weight, 2) for s in prepared.plan.slots] == [0.9, 0.1, 0.2, 0.3, 0.4, 0.95]


def test_nothing_retrieved_and_bad_questions_are_typed_errors(index: Index) -> None:
    rag, sent = gpt(index)
    with pytest.raises(RetrievalError, match="found nothing"):
        rag.ask("zzqx wvut")
    for bad in ("", "   ", None):
        with pytest.raises(PromptError):
            rag.ask(bad)  # type: ignore[arg-type]
    assert not sent


# -- the call ---------------------------------------------------------------------------------------


def test_citations_map_back_to_the_source_and_the_call_is_priced(index: Index) -> None:
    rag, sent = gpt(index, reply="Paris [fr#0], not Rome [xx-9].")
    answer = rag.ask("What is the capital of France?")
    [request] = sent
    assert request["max_completion_tokens"] == DEFAULT_ANSWER_TOKENS and "stop" not in request  # a chat model
    assert '<document id="fr#0"' in request["messages"][-1]["content"]
    assert answer.text == "Paris [fr#0], not Rome [xx-9]."
    [cited] = answer.citations
    assert (cited.kind, cited.id, cited.source) == ("citation", "fr#0", "fr.txt")
    assert (cited.start, cited.end) == (0, len(TEXTS["fr"]))
    assert (cited.slot, cited.rank) == (1, 1) and answer.references == answer.citations
    assert answer.unknown_citations == ("xx-9",) and answer.attribution == ()
    assert answer.cost_micros == price_completion(answer.completion, provider="openai") > 0
    assert answer.cost_usd is not None and answer.cost_usd.startswith("$0.0")
    assert set(answer.timings) == {"load", "retrieve", "fit", "generate", "attribute", "total"}
    data = json.loads(json.dumps(answer.to_dict()))
    assert data["citations"][0]["id"] == "fr#0" and data["plan"]["strategy"] == "auto"
    assert data["tokens"]["prompt"] == answer.tokens and data["tokens"]["input"] == 300


def test_hits_given_skip_retrieval_so_two_strategies_see_one_ranking(index: Index) -> None:
    rag, sent = gpt(index, reply="Paris")
    placed = rag.ask("capital of France")
    plain = rag.replace(strategy="none").ask("capital of France", hits=placed.hits)
    assert plain.plan.ranks == [1, 2, 3, 4, 5, 6] and placed.plan.ranks == [1, 3, 5, 6, 4, 2]
    assert plain.hits == placed.hits and "retrieve" in plain.timings and "load" not in plain.timings
    assert "load" in placed.timings and "load" not in rag.ask("capital of Italy").timings  # loaded once
    assert len(sent) == 3 and plain.completion is not placed.completion
    assert [r.id for r in placed.attribution] == ["fr#0"]  # a chat answer without [id] still gets attribution
    with pytest.raises(InvalidOptionError, match="no option"):
        rag.replace(temperature=1.0)
    with pytest.raises(UnsupportedTypeError):
        rag.generate("not prepared")  # type: ignore[arg-type]


# -- serialisation ----------------------------------------------------------------------------------


def test_to_dict_round_trips_through_a_reopened_index(index: Index) -> None:
    profile = PositionProfile.from_weights([1.0, 0.2, 0.8], metadata={"source": "litm probe"})
    rag = Pipeline.from_index(
        index.path, retriever="bm25", strategy="edges", builder=PromptBuilder(wording=Wording(lang="zh")),
        budget=2048, model="openai:gpt-4o", k=4, profile=profile, max_answer_tokens=32, stop=["\n"],
    )  # fmt: skip
    data = json.loads(json.dumps(rag.to_dict()))
    again = Pipeline.from_dict(data)
    assert again.to_dict() == data
    assert (again.strategy, again.budget, again.k, again.stop, again.profile) == ("edges", 2048, 4, ("\n",), profile)
    assert again.builder == rag.builder
    ids = [h.chunk.id for h in rag.retrieve("capital of Italy")]
    assert [h.chunk.id for h in again.retrieve("capital of Italy")] == ids and ids[0] == "it#0"


def test_what_cannot_be_saved_or_read_is_refused(index: Index) -> None:
    with pytest.raises(UnsupportedTypeError, match="from_index"):
        Pipeline(BM25(index)).to_dict()
    data = Pipeline.from_index(index).to_dict()
    for broken, match in (
        ({**data, "type": "x"}, "not a serialised Pipeline"),
        ({**data, "version": 99}, "version 99"),
        ({**data, "init_parameters": {**data["init_parameters"], "temperature": 1}}, "temperature"),
        ({**data, "init_parameters": {**data["init_parameters"], "retriever": "bm25"}}, "retriever"),
    ):
        with pytest.raises(InvalidOptionError, match=match):
            Pipeline.from_dict(broken)
    with pytest.raises(RetrievalError, match="unknown retriever"):
        Pipeline.from_index(index, retriever="sparse")


# -- the embedded model -----------------------------------------------------------------------------

KB = {
    # A fact the model can only read here. The question about it is one the embedded Gemma answers with a wide
    # first-token margin (" Zanzibar" -1.06 against " The" -2.48 nats): an earlier "secret code word" question
    # was a near tie with " 4" (room 4) and flipped between machines (llama.cpp picks kernels by CPU).
    "teams.md": "# Teams\n\nThe blue team meets on Mondays in room 4.\n\n"
    "The blue team is based in the city of Zanzibar.\n",
    "cats.txt": "Cats sleep for most of the day and hunt at dawn and dusk.\n",
    "paris.md": "# France\n\nParis is the capital of France. The Eiffel Tower was finished in 1889.\n",
}


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for name, text in KB.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.model
def test_the_embedded_model_answers_from_a_folder_and_litm_attributes_it(kb: Path, tmp_path: Path) -> None:
    index, _ = build_index(kb, tmp_path / "idx", dense=False)
    rag = Pipeline.from_index(index, k=3)  # the embedded default model, litm's defaults
    answer = rag.ask("What is the capital of France?")
    # First-token margin on this prompt: " Paris" -0.32 against " The" -2.58 nats.
    # llama.cpp evaluated exactly the tokens the gate counted: the budget was held on the real count.
    assert answer.fit.exact and answer.completion.input_tokens == answer.tokens
    assert "\n" not in answer.text and answer.text == "Paris"
    assert answer.citations == () and [r.id for r in answer.attribution] == ["paris.md#0"]
    [ref] = answer.attribution
    assert ref.span is not None and KB["paris.md"][ref.span[0] : ref.span[1]] == "Paris"
    assert answer.cost_micros is None and "local models" in answer.cost_note
    assert {"load", "retrieve", "fit", "generate", "attribute", "total"} <= set(answer.timings)
    assert not answer.completion.sampled


@pytest.mark.model
def test_the_embedded_model_cites_the_right_file_after_a_restart(kb: Path, tmp_path: Path) -> None:
    build_index(kb, tmp_path / "idx", dense=False)
    saved = Pipeline.from_index(tmp_path / "idx", retriever="bm25", k=3).to_dict()
    answer = Pipeline.from_dict(saved).ask("In which city is the blue team based?")
    assert "Zanzibar" in answer.text
    ref = next(r for r in answer.attribution if r.id == "teams.md#0")
    assert ref.source == "teams.md" and ref.span is not None
    assert "Zanzibar" in KB["teams.md"][ref.span[0] : ref.span[1]]


# -- a chat model that answers with a citation only (issue 40, defect 9) ---------------------------------------


def gpt_replies(index: Index, replies: list[str], **options: Any) -> tuple[Pipeline, list[Any]]:
    """As :func:`gpt`, but the model gives ``replies`` in turn, one per request."""
    sent: list[Any] = []

    def handle(request: Any) -> Any:
        sent.append(json.loads(request.content))
        reply = replies[len(sent) - 1]
        return http.Response(200, json={
            "id": f"c{len(sent)}", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 6, "total_tokens": 306},
        })  # fmt: skip

    client = http.Client(transport=http.MockTransport(handle))
    model = load_model("openai:gpt-4o-mini", api_key="sk-test", http_client=client)
    # These tests are about citations by id: litm's id-and-title anchors, given (an unmeasured API model's own
    # default is Liu et al.'s numbered format; see tests/test_anchor_rule.py).
    options.setdefault("builder", PromptBuilder(anchors=AnchorOptions()))
    return Pipeline.from_index(index, retriever="bm25", model=model, **options), sent


def test_a_chat_model_is_asked_for_the_answer_before_the_ids(index: Index) -> None:
    rag, sent = gpt_replies(index, ["Paris [fr#0]."])
    answer = rag.ask("What is the capital of France?")
    prompt = sent[0]["messages"][-1]["content"]
    assert "Write the answer first" in prompt and "Never reply with ids alone." in prompt
    assert answer.text == "Paris [fr#0]." and answer.note == "" and len(sent) == 1
    # What the gate counted is what was sent: the chat wording, not the default one.
    assert answer.prompt.user == prompt
    # A given instruction is kept; so is a base model's wording (the embedded model's committed demo relies on it).
    own = PromptBuilder(wording=Wording(instruction="Be brief."), anchors=AnchorOptions())
    rag, sent = gpt_replies(index, ["Paris [fr#0]."], builder=own)
    rag.ask("What is the capital of France?")
    assert sent[0]["messages"][-1]["content"].startswith("Be brief.")


def test_a_reply_of_citations_only_is_asked_again_and_not_printed_as_the_answer(index: Index) -> None:
    rag, sent = gpt_replies(index, ["[fr#0]", "Paris is the capital of France."])
    answer = rag.ask("What is the capital of France?")
    assert len(sent) == 2
    follow = sent[1]["messages"]
    assert follow[:-2] == sent[0]["messages"]
    assert follow[-2] == {"role": "assistant", "content": "[fr#0]"}
    assert follow[-1]["role"] == "user" and "no answer" in follow[-1]["content"]
    assert answer.text == "Paris is the capital of France."
    assert "was asked again" in answer.note and "'[fr#0]'" in answer.note
    # The first reply's citation still counts; both calls are paid for.
    assert [c.id for c in answer.citations] == ["fr#0"]
    assert answer.cost_micros == 2 * price_completion(answer.completion, provider="openai")
    assert [c.text for c in answer.earlier] == ["[fr#0]"] and answer.to_dict()["calls"] == 2


@pytest.mark.parametrize(
    ("replies", "text", "note"),
    [
        (["[fr#0]", "[fr#0][it#0]"], "", "no answer text, only citations"),
        (["【fr#0】", " [fr#0]. "], "", "no answer text, only citations"),
        (["[Paris]", "[Paris] [fr#0]"], "Paris", "taken as the answer"),  # an answer in brackets is still one
    ],
)
def test_a_model_that_never_answers_in_words_gets_no_citation_as_its_answer(
    index: Index, replies: list[str], text: str, note: str
) -> None:
    rag, sent = gpt_replies(index, replies)
    answer = rag.ask("What is the capital of France?")
    assert len(sent) == 2 and answer.text == text and note in answer.note
    assert answer.to_dict()["answer"] == text and answer.to_dict()["note"] == answer.note


def test_a_paraphrased_answer_is_attributed_with_its_supporting_sentence(index: Index) -> None:
    # Issue 40, defect 8: no copy of the answer is in any document, yet one sentence says the same.
    rag, _ = gpt_replies(index, ["The tower is located in Paris."])
    answer = rag.ask("Where is the Eiffel Tower?")
    [ref] = answer.attribution
    assert (ref.kind, ref.id, ref.score) == ("attribution", "fr#0", 1.0) and answer.citations == ()
    assert ref.span is not None and TEXTS["fr"][ref.span[0] : ref.span[1]] == "The Eiffel Tower stands in Paris."
    assert answer.to_dict()["attribution"][0]["score"] == 1.0
    rag, _ = gpt_replies(index, ["The tower is located in Lyon."])
    assert rag.ask("Where is the Eiffel Tower?").attribution == ()
