"""Gold-rank placement derivation: the benchmark's slot for each rank is exactly what litm.place does."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from litm.bench._data import Passage, QAItem
from litm.bench._design import (
    ANCHOR_ELEMENT_ARMS,
    ARMS,
    GOLD_DESIGNS,
    LIU_INSTRUCTION,
    MULTIHOP_INSTRUCTION,
    QUOTE_ARM,
    QUOTE_TOKENS,
    STRATEGIES,
    arm_input,
    arm_reply,
    arm_tokens_per_doc,
    arrangement,
    build_prompt,
    closed_book_prompt,
    fold_of,
    gold_slot,
    gold_slots,
    quote_prefilled,
    read_arm_reply,
)
from litm.bench._jobs import stage1_jobs
from litm.bench._runner import BenchConfig
from litm.bench._sources import load_bench_items
from litm.errors import EvalError, InvalidOptionError
from litm.placement import PlacementOptions, PositionProfile, place
from litm.placement._registry import get_strategy
from litm.placement._strategies import RandomOrder
from litm.prompt import PromptTemplate
from litm.prompt._anchors import middle_slots

PROFILE = PositionProfile.from_weights([0.7, 0.5, 0.3, 0.2, 0.2, 0.25, 0.3, 0.4, 0.5, 0.8], name="t")


def _item(k: int) -> QAItem:
    return QAItem(
        7, "who?", ("gold",), Passage(0, "Gold", "gold text"), tuple(Passage(i, f"D{i}", f"d{i}") for i in range(1, k))
    )


@pytest.mark.parametrize("k", [4, 5, 10, 20])
@pytest.mark.parametrize("name", STRATEGIES)
def test_gold_slot_matches_place_on_real_documents(name: str, k: int) -> None:
    item = _item(k)
    for seed in (0, 7, 123):
        for r in range(1, k + 1):
            docs = [{"id": f"p{p.pid}", "text": p.text} for p in item.ranked(r, k)]
            strat = RandomOrder(seed) if name == "random" else get_strategy(name, profile=PROFILE)
            plan = place(docs, strat, placement=PlacementOptions(profile=PROFILE if name == "profile" else None))
            slot = [d["id"] for d in plan.items].index("p0") + 1
            assert gold_slot(name, k, r, seed=seed, profile=PROFILE) == slot


def test_known_orders_for_k_10() -> None:
    assert [gold_slot("none", 10, r) for r in range(1, 11)] == list(range(1, 11))
    assert gold_slot("edges", 10, 1) == 1 and gold_slot("edges", 10, 2) == 10
    assert gold_slot("pyramid", 10, 1) == 10 and gold_slot("pyramid", 10, 2) == 1
    assert arrangement("langchain", 10) == arrangement("pyramid", 10)  # LongContextReorder, even k
    assert arrangement("langchain", 9) == arrangement("edges", 9)  # ... and odd k
    # The profile strategy sends rank 1 to the highest-weight slot (slot 10 here), rank 2 to the next (slot 1).
    assert gold_slot("profile", 10, 1, profile=PROFILE) == 10
    assert gold_slot("profile", 10, 2, profile=PROFILE) == 1


def test_random_is_a_per_question_permutation() -> None:
    orders = {tuple(arrangement("random", 10, seed=s)) for s in range(20)}
    assert len(orders) > 15
    assert all(sorted(o) == list(range(1, 11)) for o in orders)
    assert arrangement("random", 10, seed=3) == arrangement("random", 10, seed=3)


def test_profile_strategy_requires_a_profile() -> None:
    with pytest.raises(ValueError):
        arrangement("profile", 10)


def test_folds_alternate() -> None:
    assert [fold_of(i) for i in range(6)] == [0, 1, 0, 1, 0, 1]


def test_plain_prompt_is_liu_format() -> None:
    docs = [Passage(1, "A", "alpha."), Passage(2, "B", "beta.")]
    text = build_prompt(docs, [1, 2], "what?")
    assert text == (
        f"{LIU_INSTRUCTION}\n\nDocument [1](Title: A) alpha.\nDocument [2](Title: B) beta.\n\nQuestion: what?\nAnswer:"
    )
    both = build_prompt(docs, [1, 2], "what?", "plain-both")
    assert both.count("Question: what?") == 2 and both.index("Question") < both.index("Document [1]")


def test_anchored_prompt_has_ids_scores_closing_tags_and_middle_marker() -> None:
    docs = [Passage(i, f"T{i}", f"text {i}.") for i in range(1, 7)]
    ranks = [3, 1, 2, 6, 5, 4]
    text = build_prompt(docs, ranks, "what?", "anchored")
    assert '<document id="doc-3" position="1/6" score="0.9" title="T1">' in text
    assert '</document id="doc-3">' in text
    assert text.count('zone="middle"') >= 2
    assert text.rstrip().endswith("Question: what?\nAnswer:")
    assert text.count("Question: what?") == 1
    assert build_prompt(docs, ranks, "what?", "anchored-both").count("Question: what?") == 2
    assert LIU_INSTRUCTION in text and "Cite" not in text
    with pytest.raises(ValueError):
        build_prompt(docs, ranks, "what?", "fancy")
    assert set(ARMS) == {"plain", "plain-both", "anchored", "anchored-both", "default", "bracket",
                         *ANCHOR_ELEMENT_ARMS, QUOTE_ARM}  # fmt: skip


def test_closed_book_prompt_has_no_documents() -> None:
    text = closed_book_prompt("who?")
    assert "Document" not in text and text.endswith("Question: who?\nAnswer:")


def _multi(golds: int, k: int) -> QAItem:
    gs = tuple(Passage(f"g{i}", f"G{i}", f"gold {i}") for i in range(golds))
    return QAItem("m", "q?", ("a",), gs[0], tuple(Passage(i, f"D{i}", f"d{i}") for i in range(k)), more_golds=gs[1:])


@pytest.mark.parametrize(("k", "golds"), [(4, 2), (4, 3), (10, 2), (10, 3), (10, 4), (20, 2), (20, 4)])
def test_gold_set_designs_place_every_gold_once_in_order(k: int, golds: int) -> None:
    item = _multi(golds, k)
    spans = {}
    for design in GOLD_DESIGNS:
        slots = gold_slots(design, k, golds)
        assert len(set(slots)) == golds and slots == sorted(slots) and all(1 <= s <= k for s in slots)
        docs = item.golds_at(slots, k)
        assert len(docs) == k and [docs[s - 1] for s in slots] == list(item.golds)
        assert [p for p in docs if p not in item.golds] == list(item.distractors[: k - golds])  # rank order kept
        spans[design] = slots
    assert spans["early"] == list(range(1, golds + 1)) and spans["late"] == list(range(k - golds + 1, k + 1))
    assert spans["split"][0] == 1 and spans["split"][-1] == k
    mid = (k + 1) / 2
    assert abs(sum(spans["middle"]) / golds - mid) <= 0.5  # centred on the middle of the context


def test_gold_set_design_errors() -> None:
    with pytest.raises(InvalidOptionError, match="unknown gold-set design"):
        gold_slots("centre", 10, 2)
    with pytest.raises(InvalidOptionError, match="1 <= golds < k"):
        gold_slots("early", 4, 4)
    item = _multi(2, 10)
    with pytest.raises(InvalidOptionError, match="need 2 distinct gold slots"):
        item.golds_at([3, 3], 10)
    with pytest.raises(EvalError, match="needs 10"):
        _multi(2, 3).golds_at([1, 12], 12)


def test_anchor_arms_render_their_style() -> None:
    docs = [Passage(0, "T", "Paris is in France."), Passage(1, "U", "Lyon."), Passage(2, "V", "Nice.")]
    default = build_prompt(docs, [1, 2, 3], "Where is Paris?", "default")
    assert '<document id="doc-1" position="1/3" score="1" title="T">' in default
    assert "for citations: [doc-1] [doc-2] [doc-3]" in default and "MIDDLE" not in default
    bracket = build_prompt(docs, [1, 2, 3], "Where is Paris?", "bracket")
    assert "[DOC_ID: doc-2 | REL_SCORE: 0.5 | POSITION: 2/3 | TITLE: U | ZONE: MIDDLE]" in bracket
    assert "[/DOC_ID: doc-2]" in bracket and "<document" not in bracket
    for arm in ARMS:
        text = build_prompt(docs, [1, 2, 3], "Where is Paris?", arm, instruction=MULTIHOP_INSTRUCTION)
        assert text.startswith(MULTIHOP_INSTRUCTION[:40]) and text.count("Where is Paris?") == (
            2 if arm.endswith("-both") else 1
        )


# -- the anchor-element arms: each differs from default in exactly its element -------------------------------

_POSITION = re.compile(r' position="\d+/\d+"')
_SCORE = re.compile(r' score="[^"]*"')
_RECAP = re.compile(r"\n\nDocuments above, for citations: [^\n]*")
_CLOSING = re.compile(r'</document id="[^"]*">')


def _element_docs() -> tuple[list[Passage], list[int]]:
    docs = [Passage(i, f"Title {i}", f"Passage {i} says something.\nA second line.") for i in range(1, 11)]
    return docs, [4, 1, 2, 9, 3, 10, 5, 6, 8, 7]


@pytest.mark.parametrize(
    ("arm", "remove"),
    [
        ("default-position", lambda t: _POSITION.sub("", t)),
        ("default-score", lambda t: _SCORE.sub("", t)),
        ("default-recap", lambda t: _RECAP.sub("", t)),
        ("default-closing", lambda t: _CLOSING.sub("</document>", t)),
        ("minimal", lambda t: _CLOSING.sub("</document>", _RECAP.sub("", _SCORE.sub("", _POSITION.sub("", t))))),
    ],
)
def test_each_element_arm_is_default_without_that_element(arm: str, remove: Any) -> None:
    docs, ranks = _element_docs()
    default = build_prompt(docs, ranks, "what?", "default")
    changed = remove(default)
    assert changed != default  # the element is in the default prompt ...
    assert build_prompt(docs, ranks, "what?", arm) == changed  # ... and the arm is the default without it
    multi = build_prompt(docs, ranks, "what?", arm, instruction=MULTIHOP_INSTRUCTION)
    assert multi == remove(build_prompt(docs, ranks, "what?", "default", instruction=MULTIHOP_INSTRUCTION))


def test_the_middle_arm_adds_the_marker_and_its_note_only() -> None:
    docs, ranks = _element_docs()
    default = build_prompt(docs, ranks, "what?", "default")
    middle = build_prompt(docs, ranks, "what?", "default+middle")
    note = " " + PromptTemplate().middle_note.format(marker='zone="middle"')
    assert middle.count(' zone="middle">\n') == len(middle_slots(10)) == 4
    assert middle.count(note) == 1
    assert middle.replace(note, "").replace(' zone="middle">', ">") == default


def test_quote_first_arm_is_plain_plus_the_request_and_the_quote_cue() -> None:
    docs, ranks = _element_docs()
    request = PromptTemplate().quote_instruction.format(quote="Quote:", answer="Answer:")
    for instruction in (LIU_INSTRUCTION, MULTIHOP_INSTRUCTION):
        plain = build_prompt(docs, ranks, "what?", instruction=instruction)
        quoted = build_prompt(docs, ranks, "what?", QUOTE_ARM, instruction=instruction)
        assert quoted == plain.replace(instruction, f"{instruction} {request}", 1).removesuffix("Answer:") + "Quote:"


def test_arm_replies() -> None:
    assert arm_reply("plain", 16) == (16, ("\n",), True)
    assert arm_reply(QUOTE_ARM, 16) == (16 + QUOTE_TOKENS, ("\n\n", "\nQuestion:", "\nQuote:"), False)
    item = QAItem("q", "Who?", ("Ada Lovelace",), Passage(0, "G", "Ada Lovelace wrote the first program."),
                  (Passage(1, "D", "Charles Babbage designed the engine."),))  # fmt: skip
    # The quote holds the answer; the answer line does not: scored by the answer line.
    reply = " Ada Lovelace wrote the first program.\nAnswer: Babbage"
    text, fields = read_arm_reply(QUOTE_ARM, reply, item, prefilled=True)
    assert text == "Babbage" and fields["quote_found"] and fields["quote_gold"] and fields["answered"]
    labelled = "Quote: Charles Babbage designed the engine.\nAnswer: x"
    _, other = read_arm_reply(QUOTE_ARM, labelled, item, prefilled=False)
    assert other["quote_found"] and not other["quote_gold"]
    # A chat reply without the marker that began no quote answered directly.
    assert read_arm_reply(QUOTE_ARM, "Ada Lovelace", item, prefilled=False)[0] == "Ada Lovelace"
    assert read_arm_reply(QUOTE_ARM, "Ada Lovelace wrote", item, prefilled=True)[0] == ""
    assert read_arm_reply("default", "x\ny", item, prefilled=True) == ("x\ny", {})


def test_quote_first_is_prefilled_wherever_litm_renders_the_prompt() -> None:
    from litm.models import load_model

    smol, remote = load_model("local:smollm2"), load_model("openai:gpt-4o-mini")
    sent = arm_input(QUOTE_ARM, "Question: why?\nQuote:", smol, chat=True)
    assert isinstance(sent, str) and sent.endswith("<|im_start|>assistant\nQuote:")
    assert sent.count("Question: why?\nQuote:<|im_end|>") == 1
    turn = [{"role": "user", "content": "Question: why?\nAnswer:"}]
    assert arm_input("plain", "Question: why?\nAnswer:", smol, chat=True) == turn
    assert arm_input(QUOTE_ARM, "x", remote, chat=True) == [{"role": "user", "content": "x"}]
    assert arm_input(QUOTE_ARM, "x", remote, chat=False) == "x"
    assert quote_prefilled(smol, chat=True) and not quote_prefilled(remote, chat=True)
    assert quote_prefilled(remote, chat=False)


def test_anchor_tokens_per_document_with_the_embedded_tokenizer() -> None:
    from litm.tokens import get_tokenizer

    count = get_tokenizer("local").count
    docs, _ = _element_docs()
    cost = arm_tokens_per_doc(docs, "what?", count, ["plain", "default", *ANCHOR_ELEMENT_ARMS])
    assert cost["plain"] == 0
    # Each element costs tokens; minimal costs least and the default most of the xml arms without the marker.
    for arm in ("default-position", "default-score", "default-recap", "default-closing", "minimal"):
        assert 0 < cost[arm] < cost["default"], arm
    assert cost["default+middle"] > cost["default"]
    assert cost["minimal"] < min(cost[a] for a in ANCHOR_ELEMENT_ARMS if a != "minimal")
    with pytest.raises(InvalidOptionError):
        arm_tokens_per_doc([], "what?", count)


# -- the committed Qwen runs, byte for byte ----------------------------------------------------------------------

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


@pytest.mark.parametrize(
    ("run", "config"),
    [
        ("bench-qwen05-2wiki-k10", {"data": "2wiki", "ks": (10,), "strategies": ("none", "edges")}),
        ("bench-qwen05-nq-k20", {"data": "nq", "ks": (20,), "ablation_slots": (10,)}),
    ],
)
def test_committed_qwen_runs_prompts_are_rebuilt_byte_for_byte(run: str, config: dict[str, Any]) -> None:
    """The first three questions' prompts of the runs the anchor ablation extends hash to what was recorded, the
    default and bracket arms included (so new arms resumed into a copy of the run pair with unchanged rows)."""
    pytest.importorskip("bm25s")
    recorded = {}
    with (RESULTS / run / "bench.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            recorded[row["key"]] = row["prompt_sha"]
    items, _ = load_bench_items(config["data"], questions=3, k=config["ks"][0], retriever="auto")
    cfg = BenchConfig(questions=3, ablation_questions=3, ablation_arms=("default", "bracket"), **config)
    arms: dict[str, int] = {}
    for job in stage1_jobs(items, cfg):
        if job.key in recorded:
            assert hashlib.sha256(job.prompt.encode("utf-8")).hexdigest()[:16] == recorded[job.key], job.key
            arm = str(job.meta.get("arm", job.meta["phase"]))
            arms[arm] = arms.get(arm, 0) + 1
    assert arms["default"] == arms["bracket"] == 3 and arms["plain"] >= 12
