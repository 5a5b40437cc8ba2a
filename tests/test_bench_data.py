"""Distractor mining and question split for the strategy benchmark (real NQ-Open data, real BM25)."""

from __future__ import annotations

import pytest

from litm.bench._data import Passage, QAItem, contains_answer, eligible_questions, load_items, mine_distractors
from litm.eval._scoring import normalize

pytest.importorskip("bm25s")


@pytest.fixture(scope="module")
def items() -> list[QAItem]:
    return load_items(25, k=20, seed=0)


def test_every_question_gets_k_minus_1_distractors(items: list[QAItem]) -> None:
    assert len(items) == 25
    assert all(len(it.distractors) == 19 for it in items)


def test_no_distractor_contains_an_accepted_answer(items: list[QAItem]) -> None:
    for it in items:
        answers = [normalize(a) for a in it.answers if normalize(a)]
        assert answers
        for d in it.distractors:
            text = normalize(d.text)
            assert not any(a in text for a in answers), (it.question, it.answers, d.title)


def test_gold_passage_contains_an_answer_and_is_never_a_distractor(items: list[QAItem]) -> None:
    for it in items:
        assert contains_answer(it.gold.text, it.answers)
        assert all(d.pid != it.qid for d in it.distractors)
        assert all(normalize(d.text) != normalize(it.gold.text) for d in it.distractors)
        assert len({normalize(d.text) for d in it.distractors}) == len(it.distractors)  # no repeats


def test_distractors_are_in_bm25_order_and_mining_is_deterministic(items: list[QAItem]) -> None:
    for it in items[:5]:
        assert list(it.distractor_scores) == sorted(it.distractor_scores, reverse=True)
        again, scores = mine_distractors(it.qid, 19)
        assert tuple(again) == it.distractors and tuple(scores) == it.distractor_scores
        # k=10 uses the top 9 of the same ranking, so results for both k come from one mining.
        assert tuple(mine_distractors(it.qid, 9)[0]) == it.distractors[:9]


def test_distractors_are_topical_not_random(items: list[QAItem]) -> None:
    # BM25 top passages share words with the question; random pool passages mostly would not.
    overlaps = []
    for it in items:
        q = set(normalize(it.question).split()) - {"who", "what", "when", "where", "of", "in", "is", "was", "did"}
        overlaps.append(sum(bool(q & set(normalize(d.text).split())) for d in it.distractors[:5]) / 5)
    assert sum(overlaps) / len(overlaps) > 0.8


def test_split_is_seeded_and_prefix_stable() -> None:
    a, b = eligible_questions(0), eligible_questions(0)
    assert a == b and len(a) == len(set(a)) > 2000
    assert eligible_questions(1)[:20] != a[:20]
    assert [it.qid for it in load_items(3, k=4)] == a[:3]
    assert [it.qid for it in load_items(2, k=4, offset=3)] == a[3:5]


def test_contains_answer_uses_the_metric_normalisation() -> None:
    assert contains_answer("The Answer is: Röntgen!", ["röntgen"])
    assert contains_answer("paid 150,782 SEK", ["150782"])  # punctuation deleted, as in the metric
    assert not contains_answer("Marie Curie", ["Röntgen"])
    assert not contains_answer("anything", ["", "!!"])  # empty answers never match


def test_ranked_puts_gold_at_its_rank() -> None:
    g = Passage(0, "G", "gold")
    d = tuple(Passage(i, "D", f"d{i}") for i in range(1, 10))
    it = QAItem(0, "q?", ("gold",), g, d)
    for r in range(1, 11):
        docs = it.ranked(r, 10)
        assert docs.index(g) == r - 1 and len(docs) == 10
        assert [x for x in docs if x is not g] == list(d)
    with pytest.raises(ValueError):
        it.ranked(11, 10)
    with pytest.raises(ValueError):
        it.ranked(1, 12)
