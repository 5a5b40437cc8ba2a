"""litm.compress: the budget holds in the target's tokens, kept spans map back, and bad input is refused.

The selection rules are checked as properties over generated counts and scores; the scorers run for real
(MiniLM int8 for ``embed``, OpenAI's o200k BPE as a target tokenizer, SmolLM2 through llama.cpp for ``lm``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litm
from litm.compress import CompressionError, CompressOptions, Compressor, ScoreCache, compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import EmbedScorer, RetrieverScorer
from litm.compress._select import rank_budgets, select
from litm.compress._terms import rare_terms
from litm.errors import (
    InvalidDocumentError,
    InvalidOptionError,
    InvalidOptionTypeError,
    LitmError,
    LogprobsUnavailableError,
    UnknownStrategyError,
)
from litm.models import load_model
from litm.placement._documents import Doc
from litm.retrieve._embedder import MiniLM

TOWER = [
    Doc(
        text="The Eiffel Tower is a wrought-iron tower in Paris. It was designed by Gustave Eiffel's company. "
        "The tower opened to the public on 31 March 1889. It is 330 metres tall.",
        id="tower",
        title="Eiffel Tower",
        source="wiki/eiffel.md",
    ),
    Doc(
        text="Berlin is the capital of Germany. The city has many museums. Its zoo is the oldest in the country.",
        id="berlin",
        title="Berlin",
    ),
    Doc(
        text="The Louvre is the world's most-visited museum. It opened in 1793. It holds the Mona Lisa.",
        id="louvre",
        title="Louvre",
    ),
    Doc(
        text="Lyon is a city in France. It is known for its cuisine. The Rhone and the Saone meet there.",
        id="lyon",
        title="Lyon",
    ),
]
QUESTION = "When did the Eiffel Tower open to the public?"


@pytest.fixture(scope="module")
def gpt4o() -> TargetCounter:
    return TargetCounter.of("openai:gpt-4o")


@pytest.fixture(scope="module")
def embed() -> EmbedScorer:
    return EmbedScorer()


def test_embed_keeps_the_answer_sentence_within_the_budget(gpt4o: TargetCounter, embed: EmbedScorer) -> None:
    out = compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=4, scorer=embed)
    text = " ".join(d.text for d in out.kept_docs)
    assert "31 March 1889" in text
    assert out.tokens <= out.budget
    # The budget is held in the target's own tokens: recount what the model will read.
    assert sum(gpt4o(d.text) for d in out.kept_docs) == out.tokens
    assert out.ratio >= 3.5
    assert out.exact and out.margin == 0.0


def test_structure_is_kept_and_spans_map_back(gpt4o: TargetCounter, embed: EmbedScorer) -> None:
    out = compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=4, scorer=embed)
    tower = next(c for c in out.docs if c.original.id == "tower")
    assert 0 < tower.kept_sentences < tower.sentences
    assert tower.doc.id == "tower" and tower.doc.title == "Eiffel Tower" and tower.doc.source == "wiki/eiffel.md"
    # Sentence order inside a document is preserved and every span is a real slice of the original.
    assert list(tower.spans) == sorted(tower.spans)
    for a, b in tower.spans:
        assert tower.doc.text.find(tower.original.text[a:b]) >= 0
    at = tower.doc.text.index("1889")
    assert tower.original.text[tower.to_original(at) : tower.to_original(at) + 4] == "1889"
    assert tower.doc.metadata["compressed"]["spans"] == [list(s) for s in tower.spans]
    # Every input document has a decision, and the plan says why.
    assert {c.original.id for c in out.docs} == {d.id for d in TOWER}
    assert all(c.reason for c in out.docs)
    json.dumps(out.to_dict())


def test_an_inexact_tokenizer_shrinks_the_budget_by_its_margin() -> None:
    words = TargetCounter.of(lambda t: len(t.split()))
    out = compress(TOWER, QUESTION, tokenizer=words, target=40, scorer="retriever")
    assert not out.exact and out.margin == 0.25
    assert out.budget == math.floor(40 / 1.25)
    assert out.tokens <= out.budget
    assert any("approximate" in n for n in out.notes)


def test_nothing_is_cut_when_everything_fits(gpt4o: TargetCounter) -> None:
    out = compress(TOWER, QUESTION, tokenizer=gpt4o, target=10_000, scorer="retriever")
    assert [d.text for d in out.kept_docs] == [d.text for d in TOWER]
    assert out.ratio == 1.0
    assert "nothing cut" in out.notes[0]


def test_document_unit_drops_whole_documents_by_rank(gpt4o: TargetCounter) -> None:
    out = compress(
        TOWER, QUESTION, tokenizer=gpt4o, ratio=2, scorer="retriever", options=CompressOptions(unit="document")
    )
    assert all(c.doc.text == c.original.text for c in out.kept)
    # Retriever order as given: the first documents survive, the last are dropped whole.
    assert out.kept[0].original.id == "tower"
    assert out.dropped and out.dropped[-1].original.id == "lyon"
    assert all(c.reason.startswith("dropped") for c in out.dropped)


def test_reorder_places_kept_documents_by_score(gpt4o: TargetCounter) -> None:
    docs = [Doc(text=f"Fact number {i} is here. Another sentence {i}.", id=f"d{i}", score=float(10 - i))
            for i in range(6)]  # fmt: skip
    out = compress(
        docs, "Which fact?", tokenizer=gpt4o, target=10_000, scorer="retriever",
        options=CompressOptions(reorder="edges"),
    )  # fmt: skip
    # edges: best first, second best last.
    assert [c.original.id for c in out.kept] == ["d0", "d2", "d4", "d5", "d3", "d1"]


def test_link_titles_keeps_the_second_hop_that_shares_no_word_with_the_question(gpt4o: TargetCounter) -> None:
    # A bridge question: the second paragraph is about the bridge entity (named in the first paragraph by its
    # title), not about the question's words, so by score alone it ranks below a distractor that shares them.
    docs = [
        Doc(text="The Rolling Hills festival is held each June. Its founder was Mira Olsen, a painter.",
            id="first", score=0.9, title="Rolling Hills festival"),
        Doc(text="The festival season in June draws crowds. Hills and fields fill with tents.", id="noise",
            score=0.6, title="Summer festivals"),
        Doc(text="Mira Olsen (born 1961) is a Norwegian artist. She was born in Bergen.", id="bridge",
            score=0.1, title="Mira Olsen (painter)"),
        Doc(text="Bergen is a city on the west coast. It has many bridges and a fish market.", id="city",
            score=0.3, title="Bergen"),
    ]  # fmt: skip
    question = "Where was the founder of the Rolling Hills festival born?"
    plain = compress(docs, question, tokenizer=gpt4o, target=40, scorer="retriever",
                     options=CompressOptions(unit="document"))  # fmt: skip
    linked = compress(docs, question, tokenizer=gpt4o, target=40, scorer="retriever",
                      options=CompressOptions(unit="document", link="titles"))  # fmt: skip
    assert [c.original.id for c in plain.kept] == ["first", "noise"]
    assert [c.original.id for c in linked.kept] == ["first", "bridge"]
    assert any("linked by title" in n and "'bridge'" in n for n in linked.notes)
    # Scores in the plan stay the scorer's own; only the choice follows the links.
    assert [c.score for c in linked.docs] == [0.9, 0.6, 0.1, 0.3]
    with pytest.raises(InvalidOptionError, match="link"):
        CompressOptions(link="entities")


def test_chinese_documents(gpt4o: TargetCounter, embed: EmbedScorer) -> None:
    docs = [
        Doc(text="埃菲尔铁塔位于巴黎。铁塔于1889年3月31日向公众开放。它高330米。", id="zh1"),
        Doc(text="柏林是德国的首都。这座城市有很多博物馆。", id="zh2"),
    ]
    out = compress(docs, "埃菲尔铁塔什么时候开放\uff1f", tokenizer=gpt4o, ratio=2, scorer=embed)
    assert out.tokens <= out.budget
    kept = next(c for c in out.docs if c.original.id == "zh1")
    assert all(kept.original.text[a:b] in kept.doc.text for a, b in kept.spans)
    assert rare_terms("埃菲尔铁塔什么时候开放\uff1f", [d.text for d in docs]) >= {"铁塔"}


def test_bad_input_is_a_typed_one_line_error(gpt4o: TargetCounter) -> None:
    cases = [
        (lambda: compress([], QUESTION, tokenizer=gpt4o, ratio=2), CompressionError, "no documents"),
        (lambda: compress(["  "], QUESTION, tokenizer=gpt4o, ratio=2), CompressionError, "is empty"),
        (lambda: compress(TOWER, "   ", tokenizer=gpt4o, ratio=2), CompressionError, "blank"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o), CompressionError, "exactly one"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=2, target=5), CompressionError, "exactly one"),
        (lambda: compress(TOWER, QUESTION, tokenizer=None, ratio=2), CompressionError, "tokenizer"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, target=1, scorer="retriever"), CompressionError,
         "smaller than every sentence"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=0.5), InvalidOptionError, "ratio"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=float("nan")), InvalidOptionError, "ratio"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, target=True), InvalidOptionError, "target"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=2, scorer="bm25"), InvalidOptionError, "scorer"),
        (lambda: CompressOptions(unit="token"), InvalidOptionError, "unit"),
        (lambda: CompressOptions(protect="words"), InvalidOptionError, "protect"),
        (lambda: CompressOptions(coarse_factor=0.5), InvalidOptionError, "coarse_factor"),
        (lambda: CompressOptions(rank_weight=1.0), InvalidOptionError, "rank_weight"),
        (lambda: CompressOptions(rank_weight=float("inf")), InvalidOptionTypeError, "rank_weight"),
        (lambda: CompressOptions(coarse="yes"), InvalidOptionTypeError, "coarse"),  # type: ignore[arg-type]
        (lambda: CompressOptions(reorder=3), InvalidOptionTypeError, "reorder"),  # type: ignore[arg-type]
        (lambda: CompressOptions(reorder="sideways"), UnknownStrategyError, "sideways"),
        (lambda: compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=2, options={"unit": "document"}),  # type: ignore[arg-type]
         InvalidOptionTypeError, "CompressOptions"),
        (lambda: compress("a text", QUESTION, tokenizer=gpt4o, ratio=2), InvalidOptionError, "sequence"),
        (lambda: compress([{"text": 5, "id": "x"}], QUESTION, tokenizer=gpt4o, ratio=2), InvalidDocumentError,
         "text"),
    ]  # fmt: skip
    for call, kind, words in cases:
        with pytest.raises(kind, match=words) as info:
            call()
        assert isinstance(info.value, LitmError)
        assert "\n" not in str(info.value)


def test_an_lm_scorer_model_without_logprobs_is_refused() -> None:
    with pytest.raises(LogprobsUnavailableError, match="scores continuations"):
        compress(TOWER, QUESTION, tokenizer="openai:gpt-4o", ratio=2, scorer="lm", model="anthropic:claude-haiku-4-5")


def test_compression_error_is_exported() -> None:
    assert litm.CompressionError is CompressionError
    assert issubclass(CompressionError, ValueError)


def test_score_cache_persists_and_survives_a_torn_line(tmp_path: Path, embed: EmbedScorer) -> None:
    path = tmp_path / "scores.jsonl"
    scorer = EmbedScorer(embed._embedder, cache=ScoreCache(path))
    first = compress(TOWER, QUESTION, tokenizer="openai:gpt-4o", ratio=2, scorer=scorer)
    assert path.stat().st_size > 0
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"key": "torn')  # a run killed mid-write
    again = ScoreCache(path)
    assert len(again) == len(scorer.cache)
    reused = EmbedScorer(_Refuses(), cache=again)  # an embedder that must not be called
    second = compress(TOWER, QUESTION, tokenizer="openai:gpt-4o", ratio=2, scorer=reused)
    assert [d.text for d in second.kept_docs] == [d.text for d in first.kept_docs]
    path.write_text('not json\n{"key": "k", "scores": [1]}\n', encoding="utf-8")
    with pytest.raises(CompressionError, match="line 1"):
        ScoreCache(path)


class _Refuses:
    name = MiniLM.name  # the same model id, so the cached scores are this embedder's
    dim = 384

    def embed(self, texts: object) -> object:
        raise AssertionError("the cache should have answered")


def test_compressor_component_validates_once_and_runs(gpt4o: TargetCounter) -> None:
    comp = Compressor(tokenizer=gpt4o, ratio=2, scorer="retriever", unit="document")
    assert comp.run(TOWER, QUESTION).tokens <= comp.run(TOWER, QUESTION).budget
    assert comp.to_dict() == {
        "target": None, "ratio": 2.0, "scorer": "retriever", "model": None, "unit": "document", "coarse": True,
        "coarse_factor": 1.5, "rank_weight": 0.9, "protect": None, "reorder": None, "link": None,
    }  # fmt: skip
    assert Compressor(tokenizer=gpt4o, ratio=2, scorer="static").to_dict()["scorer"] == "static"
    with pytest.raises(InvalidOptionError, match="rank_weight"):
        Compressor(tokenizer=gpt4o, ratio=2, rank_weight=1.0)


def test_compressor_runs_what_compress_runs_with_the_same_options(gpt4o: TargetCounter) -> None:
    comp = Compressor(tokenizer=gpt4o, ratio=2, scorer="retriever", unit="document", reorder="edges", rank_weight=0)
    assert comp.options == CompressOptions(unit="document", reorder="edges", rank_weight=0.0)
    direct = compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=2, scorer="retriever", options=comp.options)
    via = comp.run(TOWER, QUESTION)
    assert [c.doc.text for c in via.kept] == [c.doc.text for c in direct.kept]
    assert via.order == direct.order and via.tokens == direct.tokens


# --- the selection rules, as properties -------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=6), min_size=1, max_size=8).flatmap(
        lambda toks: st.tuples(
            st.just(toks),
            st.lists(st.floats(-5, 5), min_size=len(toks), max_size=len(toks)),
            st.tuples(*[st.lists(st.floats(-5, 5), min_size=len(t), max_size=len(t)) for t in toks]),
            st.integers(1, sum(map(sum, toks))),
            st.booleans(),
            st.sampled_from(["sentence", "document"]),
        )
    )
)
def test_selection_never_exceeds_the_budget(case: tuple) -> None:  # type: ignore[type-arg]
    toks, doc_scores, sent_scores, budget, coarse, unit = case
    plan = select(
        sentence_tokens=toks, sentence_scores=list(sent_scores), doc_scores=doc_scores, budget=budget,
        coarse=coarse, unit=unit,
    )  # fmt: skip
    used = sum(toks[i][s] for i, kept in enumerate(plan.kept) for s in kept)
    assert used <= budget
    assert all(kept == sorted(set(kept)) for kept in plan.kept)
    assert sorted(plan.ranks) == list(range(1, len(toks) + 1))
    # The best-scored document is never dropped while one of its sentences fits the whole budget.
    best = plan.ranks.index(1)
    if unit == "sentence" and min(toks[best]) <= budget:
        assert plan.kept[best]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=10), st.floats(0, 2000), st.floats(0, 0.99))
def test_rank_budgets_split_the_budget_and_cap_each_share(lengths: list[int], budget: float, weight: float) -> None:
    shares = rank_budgets(lengths, budget, weight)
    assert all(0 <= s <= n + 1e-6 for s, n in zip(shares, lengths, strict=True))
    assert sum(shares) == pytest.approx(min(budget, sum(lengths)), abs=1e-6)


def test_protected_sentences_go_first() -> None:
    plan = select(
        sentence_tokens=[[5, 5, 5]], sentence_scores=[[0.9, 0.8, 0.1]], doc_scores=[1.0], budget=10,
        protected=[[False, False, True]],
    )  # fmt: skip
    assert plan.kept == [[0, 2]]


def test_retriever_scorer_keeps_reading_order() -> None:
    scorer = RetrieverScorer()
    assert scorer.score_documents("q", [Doc(text="a", id="1"), Doc(text="b", id="2")]) == [0.0, -1.0]


def test_lm_scorer_on_a_real_local_model(gpt4o: TargetCounter) -> None:
    model = load_model("local:smollm2")
    out = compress(TOWER, QUESTION, tokenizer=gpt4o, ratio=2, scorer="lm", model=model)
    assert out.scorer == "lm" and out.tokens <= out.budget
    ranks = {c.original.id: c.rank for c in out.docs}
    # The document about the tower predicts the question far better than the one about Berlin.
    assert ranks["tower"] < ranks["berlin"]


def test_an_in_memory_cache_forgets_its_oldest_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScoreCache, "MEMORY_LIMIT", 3)
    cache = ScoreCache()
    for i in range(5):
        cache.put("embed", "m", "doc", "q", f"t{i}", [float(i)])
    assert len(cache) == 3 and cache.get("embed", "m", "doc", "q", "t0") is None
    assert cache.get("embed", "m", "doc", "q", "t4") == [4.0]


def test_compressor_refuses_settings_it_would_ignore_or_fail_on_later(gpt4o: TargetCounter) -> None:
    from litm.errors import InvalidOptionTypeError, UnknownStrategyError

    with pytest.raises(InvalidOptionTypeError):
        Compressor(tokenizer=gpt4o, ratio=2, rank_weight="high")  # type: ignore[arg-type]
    with pytest.raises(UnknownStrategyError):
        Compressor(tokenizer=gpt4o, ratio=2, reorder="middle-out")
    with pytest.raises(InvalidOptionError, match="lm scorer's model"):
        Compressor(tokenizer=gpt4o, ratio=2, scorer="embed", model="local")
