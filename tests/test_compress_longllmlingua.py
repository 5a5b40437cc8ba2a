"""litm's coarse stage next to LongLLMLingua's description (Jiang et al. 2023, arXiv 2310.06839), on a worked example.

The paper's coarse stage ranks documents by how well each predicts the question (question-conditioned, so the
ranking moves with the question, not with the input order), keeps the best ones, and gives each kept document
a compression budget that follows its rank linearly ("dynamic compression ratio": llmlingua 0.2.2's
``control_context_budget`` adds ``+d .. -d`` in equal steps from the best to the worst). Fine-grained selection
never reorders what it keeps inside a document. These tests pin those three properties in litm, with the real
MiniLM scorer where a question is involved. Where litm differs on purpose (the coarse cut is 1.5x the budget,
not llmlingua's budget + 100 tokens; the kept documents stay in input order unless ``reorder`` is given, where
llmlingua's example sorts them) is written in docs/results/compress-llmlingua/README.md.
"""

from __future__ import annotations

import pytest

from litm.compress import compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import EmbedScorer
from litm.compress._select import rank_budgets, select
from litm.placement._documents import Doc

# Six documents of four 10-token sentences each (240 tokens); 4x leaves a budget of 60.
LENGTHS = [[10, 10, 10, 10]] * 6
SENTENCE_SCORES = [[0.1, 0.2, 0.3, 0.4]] * 6  # later sentences score higher: order must still be kept


def _llmlingua_dynamic_ratio(n: int, delta: float) -> list[float]:
    """llmlingua 0.2.2's per-rank adjustment, best first (control_context_budget, copied formula)."""
    return [i * (abs(delta) / (n - 1)) if n > 1 else 0 for i in range(-(n - 1), n, 2)][::-1]


def test_coarse_keeps_the_best_scored_documents_wherever_they_stand() -> None:
    # The two documents that best predict the question stand 4th and 6th in the input.
    doc_scores = [-3.0, -2.5, -2.8, -0.5, -4.0, -1.0]
    plan = select(
        sentence_tokens=LENGTHS, sentence_scores=SENTENCE_SCORES, doc_scores=doc_scores, budget=60,
        coarse=True, coarse_factor=1.5, rank_weight=0.3,
    )  # fmt: skip
    assert plan.ranks == [5, 3, 4, 1, 6, 2]
    # 1.5 x 60 = 90 tokens of candidates: the two best whole documents (80), not a third (120).
    assert [i for i, k in enumerate(plan.kept) if k] == [3, 5]
    assert all(plan.reasons[i].startswith("dropped (coarse): score rank") for i in (0, 1, 2, 4))
    # The same scores in another input order give the same documents: rank, not position, decides.
    order = [5, 3, 0, 4, 1, 2]
    moved = select(
        sentence_tokens=[LENGTHS[i] for i in order], sentence_scores=[SENTENCE_SCORES[i] for i in order],
        doc_scores=[doc_scores[i] for i in order], budget=60, coarse=True, coarse_factor=1.5, rank_weight=0.3,
    )  # fmt: skip
    assert sorted(order[j] for j, k in enumerate(moved.kept) if k) == [3, 5]


@pytest.mark.parametrize("n", [2, 3, 5, 20])
@pytest.mark.parametrize("delta", [0.3, 0.4, 0.9])
def test_budget_shares_follow_rank_as_the_dynamic_compression_ratio(n: int, delta: float) -> None:
    # Equal lengths and a budget too small to cap any share: each share is budget/n x (1 + delta x step),
    # the step falling linearly with rank exactly as llmlingua's adjustment does.
    budget = 10.0 * n
    shares = rank_budgets([100] * n, budget, delta)
    steps = [s / (budget / n) - 1 for s in shares]
    assert steps == pytest.approx(_llmlingua_dynamic_ratio(n, delta))
    assert sum(shares) == pytest.approx(budget)


def test_shares_go_by_score_rank_not_by_input_position() -> None:
    plan = select(
        sentence_tokens=[[10] * 10] * 3, sentence_scores=[[0.0] * 10] * 3, doc_scores=[0.1, 0.9, 0.5],
        budget=30, coarse=False, rank_weight=0.5,
    )  # fmt: skip
    # Best (input 2nd) gets 1.5 x 10, middle (3rd) 1.0 x 10, worst (1st) 0.5 x 10.
    assert plan.shares == pytest.approx([5.0, 15.0, 10.0])
    # 15 fits one 10-token sentence (5 carried on), 10 + 5 fits one, 5 + 5 fits one: every document speaks.
    assert plan.kept == [[0], [0], [0]]
    assert plan.ranks == [3, 1, 2]


def test_kept_sentences_stay_in_reading_order() -> None:
    plan = select(
        sentence_tokens=[[10, 10, 10, 10]], sentence_scores=[[0.4, 0.1, 0.2, 0.9]], doc_scores=[1.0], budget=20,
        coarse=False,
    )  # fmt: skip
    assert plan.kept == [[0, 3]]  # the two best, the last one picked first, kept in document order


MOONS = [
    Doc(id="bridge", text="The Golden Gate Bridge opened in 1937. It spans the strait at San Francisco. "
        "Its colour is called international orange. Fog often hides its towers."),
    Doc(id="mars", text="Mars has two small moons. Their names are Phobos and Deimos. "
        "Phobos orbits closer to the planet than any other known moon. Deimos is the smaller of the two."),
    Doc(id="tea", text="Green tea is made from unoxidised leaves. It is popular in Japan and China. "
        "Matcha is a powdered form of green tea. Brewing water should not be boiling."),
    Doc(id="violin", text="A violin has four strings. They are tuned in perfect fifths. "
        "Stradivari built famous violins in Cremona. The bow is strung with horsehair."),
]  # fmt: skip


@pytest.fixture(scope="module")
def embed() -> EmbedScorer:
    return EmbedScorer()


def test_the_ranking_is_conditioned_on_the_question(embed: EmbedScorer) -> None:
    counter = TargetCounter.of("openai:gpt-4o")
    firsts = {}
    for question in ("What are the names of the moons of Mars?", "How many strings does a violin have?"):
        out = compress(MOONS, question, tokenizer=counter, ratio=4, scorer=embed)
        by_rank = sorted(out.docs, key=lambda c: (c.rank is None, c.rank or 0))
        firsts[question] = by_rank[0].original.id
        assert by_rank[0].doc.text  # the best document is never lost to the coarse cut
        for c in out.kept:  # kept spans are the original's sentences, in reading order
            starts = [a for a, _ in c.spans]
            assert starts == sorted(starts)
            assert all(c.original.text[a:b] in c.doc.text for a, b in c.spans)
        assert out.tokens <= out.budget
    assert firsts == {
        "What are the names of the moons of Mars?": "mars",
        "How many strings does a violin have?": "violin",
    }
