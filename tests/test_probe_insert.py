"""Exact-length haystacks: token counts, sentence boundaries, depth 0 and 1, shared filler, rebuildable recipes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litm.errors import ProbeError
from litm.probe._corpus import Corpus, Unit, default_corpus
from litm.probe._insert import fill_exact, insert_units, text_of
from litm.probe._layouts import LAYOUTS
from litm.probe._recipe import rebuild_prompt
from litm.probe._tasks import ChainTask, MultiNeedleTask, NeedleTask
from litm.probe._testing import WordTokenizer

TOK = WordTokenizer()


def _needle_prompt(length: int, depth: float, seed: int = 1, count=TOK.count, layout: str = "plain"):  # type: ignore[no-untyped-def]
    task = NeedleTask()
    inst = task.instance(seed, depth, (0.0, 0.5, 1.0))
    return inst, task.build(inst, LAYOUTS[layout], length, count, default_corpus())


@pytest.mark.parametrize("length", [64, 100, 257, 512, 1000, 2048, 4096])
@pytest.mark.parametrize("depth", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_prompt_is_exactly_the_requested_length(length: int, depth: float) -> None:
    _, built = _needle_prompt(length, depth)
    assert built.exact
    assert TOK.count(built.prompt) == built.prompt_tokens == length


@pytest.mark.parametrize("layout", ["plain", "buffered"])
def test_exact_for_every_layout_and_seed(layout: str) -> None:
    for seed in range(8):
        _, built = _needle_prompt(777, 0.5, seed=seed, layout=layout)
        assert TOK.count(built.prompt) == 777


def test_needle_sits_between_whole_corpus_sentences() -> None:
    corpus = default_corpus()
    sentences = set(corpus.sentences)
    inst, built = _needle_prompt(1500, 0.5)
    needle = inst.needles[0][1]
    units = built.recipe["document"]["units"]
    inserted = [u for u in units if isinstance(u, str)]
    assert [u.strip() for u in inserted] == [needle]
    # Every other unit is a whole corpus sentence: no sentence was cut to make the length exact.
    refs = [i for u in units if not isinstance(u, str) for i in range(u[0], u[1])]
    assert all(corpus.sentences[i] in sentences for i in refs)
    doc = built.document
    before, after = doc.split(needle)
    assert before.rstrip()[-1] in ".!?\"')]\u201d\u2019"
    assert after[:1] in (" ", "\n")
    assert after.strip()[:1].isupper() or after.strip()[:1] in "\"'(\u201c0123456789"


def test_depth_zero_and_one_are_the_first_and_last_sentence() -> None:
    inst0, first = _needle_prompt(800, 0.0)
    inst1, last = _needle_prompt(800, 1.0)
    assert first.document.startswith(inst0.needles[0][1])
    assert last.document.endswith(inst1.needles[0][1])
    assert first.actual_depths == (0.0,)
    assert last.actual_depths == (1.0,)


def test_actual_depth_is_near_the_requested_one() -> None:
    for depth in (0.1, 0.25, 0.5, 0.75, 0.9):
        _, built = _needle_prompt(2000, depth)
        assert abs(built.actual_depths[0] - depth) < 0.03


def test_filler_does_not_depend_on_depth_so_prompts_share_prefixes() -> None:
    inst_a, a = _needle_prompt(1200, 0.25)
    inst_b, b = _needle_prompt(1200, 0.75)
    filler_a = a.document.replace(inst_a.needles[0][1], "")
    filler_b = b.document.replace(inst_b.needles[0][1], "")
    assert " ".join(filler_a.split()) == " ".join(filler_b.split())
    shared = len(_common_prefix(a.prompt, b.prompt))
    assert shared >= 0.2 * len(a.prompt)  # up to the earlier needle


def test_shorter_length_filler_is_a_prefix_of_the_longer_one() -> None:
    _, short = _needle_prompt(600, 1.0)
    _, long = _needle_prompt(2400, 1.0)
    assert len(_common_prefix(short.prompt, long.prompt)) > 0.6 * len(short.prompt)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def test_filler_excludes_sentences_with_the_task_terms() -> None:
    inst, built = _needle_prompt(3000, 0.5)
    key = inst.exclude[0]
    assert built.document.count(key) == 1  # only in the needle


def test_recipe_rebuilds_the_exact_prompt() -> None:
    for depth in (0.0, 0.4, 1.0):
        _, built = _needle_prompt(900, depth)
        recipe = {
            **built.recipe,
            "layout": {"name": "plain", "template": LAYOUTS["plain"].template},
            "question": NeedleTask().instance(1, depth, ()).question,
            "answer_prefix": "Answer:",
        }
        assert rebuild_prompt(recipe) == built.prompt


def test_chain_and_multi_place_all_their_facts() -> None:
    inst = ChainTask(second_depth=0.9).instance(3, 0.3, (0.0, 0.3, 1.0))
    built = ChainTask().build(inst, LAYOUTS["plain"], 1500, TOK.count, default_corpus())
    assert built.exact and len(built.actual_depths) == 2
    assert abs(built.actual_depths[0] - 0.3) < 0.05 and abs(built.actual_depths[1] - 0.9) < 0.05
    multi = MultiNeedleTask(k=3)
    inst = multi.instance(5, 0.5, (0.0, 0.25, 0.5, 0.75, 1.0))
    built = multi.build(inst, LAYOUTS["plain"], 1500, TOK.count, default_corpus())
    assert built.exact and len({round(d, 1) for d in built.actual_depths}) == 3
    for _, sentence in inst.needles:
        assert sentence in built.document


def test_too_short_a_length_is_a_clear_error() -> None:
    with pytest.raises(ProbeError, match="too short"):
        _needle_prompt(20, 0.5)


def test_insert_units_rejects_depth_outside_unit_interval() -> None:
    with pytest.raises(ProbeError):
        insert_units([Unit(" a.")], [1], [(1.5, Unit(" n."))])


def test_insert_at_the_same_boundary_keeps_given_order() -> None:
    filler = [Unit(" A one.", 0), Unit(" B two.", 1)]
    placed, depths = insert_units(filler, [2, 2], [(0.5, Unit(" X.")), (0.5, Unit(" Y."))])
    assert text_of(placed) == "A one. X. Y. B two."
    assert depths == (0.5, 0.5)


@given(
    costs=st.lists(st.integers(min_value=1, max_value=60), min_size=5, max_size=600),
    budget=st.integers(min_value=0, max_value=3000),
)
def test_fill_exact_sums_exactly_or_says_so(costs: list[int], budget: int) -> None:
    units = [Unit(f"u{i}", i) for i in range(len(costs))]
    table = {u.text: c for u, c in zip(units, costs, strict=True)}
    chosen, exact = fill_exact(iter(units), budget, table.__getitem__)
    total = sum(table[u.text] for u in chosen)
    assert total <= budget
    assert exact == (total == budget)
    assert len({u.ref for u in chosen}) == len(chosen)  # no unit twice
    refs = [u.ref for u in chosen]
    assert refs == sorted(refs)  # stream order kept
    if 0 < budget < 96 and budget in costs[:400]:  # 96: the slack; 400: the pool
        # Below the greedy slack every unit goes to the pool, and a pool unit costing the budget is a match
        # (a cost-1 unit alone does not make every budget reachable: [1, 1, 4, ...] cannot sum to 3).
        assert exact


def test_exact_lengths_in_the_embedded_model_tokenizer() -> None:
    pytest.importorskip("llama_cpp")
    from litm.models import load_model

    model = load_model("local")
    for length, depth in ((300, 0.0), (1024, 0.5), (2048, 1.0), (1500, 0.33)):
        _, built = _needle_prompt(length, depth, count=model.count_tokens)
        assert built.exact
        assert model.count_tokens(built.prompt) == length


def test_corpus_fingerprint_guards_rebuilds() -> None:
    _, built = _needle_prompt(300, 0.5)
    recipe = {
        **built.recipe,
        "layout": {"name": "plain", "template": LAYOUTS["plain"].template},
        "question": "Q",
        "answer_prefix": "A:",
    }
    other = Corpus.from_texts(["Some other text here. And another sentence here."], name="other")
    with pytest.raises(ProbeError, match="corpus"):
        rebuild_prompt(recipe, other)
