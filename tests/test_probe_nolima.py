"""NoLiMa-style probe tasks: the bundled items never give themselves away, and the tasks run like the others.

The item checks walk the shipped file (``litm/data/nolima-needles.json``): a needle and its question must
share no content word after Snowball stemming and function-word removal, the answer must be in the needle,
the literal control must share words with its needle, and the stated link must touch both ends.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.cli import app
from litm.errors import ProbeError
from litm.eval._results import read_rows
from litm.models import register_backend, unregister_backend
from litm.probe import ProbeConfig, run_probe
from litm.probe._nolima import (
    DATA_FILE,
    NolimaChain,
    NolimaItem,
    NolimaLiteralTask,
    NolimaMultiTask,
    NolimaTask,
    content_stems,
    load_chains,
    load_items,
    parse_chains,
    parse_items,
    shared_content_words,
)
from litm.probe._recipe import rebuild_prompt, verify_row
from litm.probe._registry import get_task
from litm.probe._rescore import rescore_rows
from litm.probe._tasks import _PARAPHRASES, ParaphraseTask
from litm.probe._testing import DeadZoneModel

NAMES = {"name": "Zovalemi"}
PEOPLE = {"a": "Zovalemi", "b": "Kirubato", "c": "Fenudasi", "d": "Plomaveku"}


def item_problems(item: NolimaItem) -> list[str]:
    """Everything wrong with one single-needle item (empty: it is a fair non-literal needle)."""
    needle = item.needle.format(**NAMES)
    answers = [a.format(**NAMES) for a in item.answers]
    out = []
    if shared := shared_content_words(needle, item.question):
        out.append(f"question shares {sorted(shared)} with the needle")
    out += [f"answer {a!r} is not in the needle" for a in answers if a not in needle]
    out += [f"answer {a!r} is in the question" for a in answers if a.lower() in item.question.lower()]
    if not shared_content_words(needle, item.literal):
        out.append("the literal question shares no content word with the needle")
    if not (shared_content_words(item.link, needle) and shared_content_words(item.link, item.question)):
        out.append("the link does not name both the needle's and the question's side")
    return out


def chain_problems(chain: NolimaChain) -> list[str]:
    """Everything wrong with one multi-needle chain."""
    facts = [f.format(**PEOPLE) for f in chain.facts]
    people = list(PEOPLE.values())[: len(facts)]
    answers = [a.format(**PEOPLE) for a in chain.answers]
    out = [
        f"question shares {sorted(s)} with fact {i}"
        for i, fact in enumerate(facts)
        if (s := shared_content_words(fact, chain.question))
    ]
    out += [f"answer {a!r} is not in the first fact" for a in answers if a not in facts[0]]
    out += [f"{p!r} is named in the question" for p in people if p in chain.question]
    # A chain: fact i names person i and person i+1, so every fact is needed to get from the answer to the end.
    for i in range(len(facts) - 1):
        if not (people[i] in facts[i] and people[i + 1] in facts[i] and people[i + 1] in facts[i + 1]):
            out.append(f"facts {i} and {i + 1} are not linked by {people[i + 1]!r}")
    if sorted(d.format(**PEOPLE) for d in chain.distractors) != sorted(people[1:]):
        out.append("the distractors are not exactly the intermediate people")
    if not shared_content_words(chain.links[-1], chain.question):
        out.append("the last link does not reach the question")
    pairs = enumerate(zip(facts, chain.links, strict=True))
    out += [f"link {i} does not touch fact {i}" for i, (f, x) in pairs if not shared_content_words(f, x)]
    return out


def test_paraphrase_needles_share_only_the_invented_name_with_their_question() -> None:
    # The finding of issue 41: the older paraphrase task avoids every content word of its question except
    # the invented person or thing the question asks about, which is a literal string to search for.
    for seed in range(len(_PARAPHRASES)):
        inst = ParaphraseTask().instance(seed=seed, depth=0.5, depths=(0.5,))
        needle, question = inst.needles[0][1], inst.question.removeprefix("Question: ")
        shared = shared_content_words(needle, question)
        names = {w for w in re.findall(r"[A-Z][a-z]+", needle) if w in question and w not in inst.answers}
        assert shared and shared == content_stems(" ".join(names)), (seed, shared)
    for template, question in _PARAPHRASES:
        assert not shared_content_words(template.format(p="", w="", a=""), question.format(p="", w=""))


def test_every_bundled_item_is_non_literal_and_answerable() -> None:
    items = load_items()
    assert len(items) >= 40
    assert {i.id: item_problems(i) for i in items if item_problems(i)} == {}
    assert len({i.question for i in items}) >= 40  # not one question reused


def test_every_bundled_chain_is_non_literal_and_needs_all_its_facts() -> None:
    chains = load_chains()
    assert sorted({len(c.facts) for c in chains}) == [2, 3, 4]
    assert {c.id: chain_problems(c) for c in chains if chain_problems(c)} == {}


def test_the_checks_catch_a_literal_needle_and_a_missing_answer() -> None:
    good = load_items()[0]
    literal = NolimaItem(**{**good.__dict__, "question": "Who lived by the opera house?"})
    assert "question shares ['live', 'opera'] with the needle" in item_problems(literal)  # lived ~ lives
    assert shared_content_words("Kivo lives in Paris.", "Who was living there?") == {"live"}  # stems, not strings
    no_answer = NolimaItem(**{**good.__dict__, "answers": ("Dresden",)})
    assert "answer 'Dresden' is not in the needle" in item_problems(no_answer)
    chain = load_chains()[0]
    leaky = NolimaChain(**{**chain.__dict__, "question": "Whose sister lives in Dresden?"})
    assert any(p.startswith("question shares") for p in chain_problems(leaky))
    broken = NolimaChain(**{**chain.__dict__, "facts": (chain.facts[0], "{c} lives next to the Semper Opera.")})
    assert any("not linked" in p for p in chain_problems(broken))


def test_function_words_do_not_count_and_content_words_do() -> None:
    assert content_stems("Who has been to the place where it is?") == {"place"}
    assert content_stems("Which character had visited Dresden twice?") == {"charact", "visit", "dresden", "twice"}


def _doc() -> dict[str, Any]:
    raw = (resources.files("litm") / "data" / DATA_FILE).read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(raw)
    return doc


def test_the_data_file_carries_its_licence_and_the_readme_documents_it() -> None:
    doc = _doc()
    assert doc["licence"] == "CC0-1.0" and "NoLiMa" in doc["licence_note"]
    readme = (resources.files("litm") / "data" / "README.md").read_text(encoding="utf-8")
    assert DATA_FILE in readme and "CC0" in readme


@pytest.mark.parametrize(
    ("kind", "patch", "message"),
    [
        ("single", {"needle": "Kivo lives next to the Semper Opera."}, "no {name} slot"),
        ("single", {"answers": ["{person}"]}, "has a slot other than name"),
        ("single", {"question": "Who has been to {city}?"}, "has a slot other than"),
        ("single", {"exclude": []}, "'exclude' must be a list of 1-64"),
        ("multi", {"facts": ["{a} met {b}.", "{b} met {c}.", "{c} met {d}.", "{d} met {a}.", "{a} left."]}, "2-4"),
        ("multi", {"links": ["only one"]}, "'links' must be a list of 2-2"),
        ("multi", {"facts": ["{a} met {e}.", "{e} swam."]}, "has a slot other than a, b"),
    ],
)
def test_a_malformed_item_is_a_probe_error(kind: str, patch: dict[str, Any], message: str) -> None:
    doc = copy.deepcopy(_doc())
    doc[kind][0].update(patch)
    with pytest.raises(ProbeError, match=re.escape(message)):
        parse_items(doc) if kind == "single" else parse_chains(doc)


def test_repeated_ids_and_missing_lists_are_refused() -> None:
    doc = copy.deepcopy(_doc())
    doc["single"].append(doc["single"][0])
    with pytest.raises(ProbeError, match="ids repeat"):
        parse_items(doc)
    with pytest.raises(ProbeError, match="'multi' must be a non-empty list"):
        parse_chains({"multi": {}})
    assert isinstance(ProbeError("x"), ValueError)


def test_literal_and_non_literal_tasks_are_a_paired_comparison() -> None:
    for seed in range(60):
        a = NolimaTask().instance(seed=seed, depth=0.25, depths=(0.25, 0.75))
        b = NolimaLiteralTask().instance(seed=seed, depth=0.25, depths=(0.25, 0.75))
        assert (a.needles, a.answers, a.exclude) == (b.needles, b.answers, b.exclude) and a.question != b.question
        assert a.answers[0] in a.needles[0][1] and a.answers[0] not in a.question
        assert not shared_content_words(a.needles[0][1], a.question.removeprefix("Question: "))
    # 57 items, a prime stride: the first 57 seeds read every item once.
    assert len({NolimaTask().instance(s, 0.5, (0.5,)).params["item"] for s in range(len(load_items()))}) == len(
        load_items()
    )


def test_multi_instances_put_the_answer_at_the_probed_depth_and_name_the_rest_as_distractors() -> None:
    for seed in range(30):
        inst = NolimaMultiTask().instance(seed=seed, depth=0.4, depths=(0.0, 0.4, 1.0))
        assert 2 <= len(inst.needles) <= 4 and inst.needles[0][0] == 0.4
        assert inst.answers[0] in inst.needles[0][1] and len(inst.distractors) == len(inst.needles) - 1
        names = [inst.answers[0], *inst.distractors]
        assert len({n.lower() for n in names}) == len(names) and all(n in inst.exclude for n in names)
        for _, fact in inst.needles:
            assert not shared_content_words(fact, inst.question.removeprefix("Question: "))
        again = NolimaMultiTask().instance(seed=seed, depth=0.9, depths=(0.0, 0.4, 1.0))
        assert again.needles[1:] == inst.needles[1:] and again.exclude == inst.exclude  # a trial shares its filler


def test_registry_and_get_task() -> None:
    plain, literal = get_task("nolima"), get_task("nolima-literal")
    assert isinstance(plain, NolimaTask) and not plain.literal and plain.name == "nolima"
    assert isinstance(literal, NolimaLiteralTask) and literal.literal and literal.name == "nolima-literal"
    assert isinstance(get_task("nolima-multi", k=3, second_depth=0.9), NolimaMultiTask)


class KnowsTheHop(DeadZoneModel):
    """A scripted reader that knows the one hop of every bundled item: it answers ``nolima`` questions with
    the person in the matching needle, and ``nolima-multi`` questions with the *last* person of the chain
    (the classic wrong item); anything else as :class:`DeadZoneModel`."""

    def _answer(self, prompt: str) -> str:
        question = prompt.rsplit("Question: ", 1)[-1].split("\n")[0]
        for item in load_items():
            if question in (item.question, item.literal):
                found = re.search(re.escape(item.needle).replace(re.escape("{name}"), r"(\w+)"), prompt)
                return f" {found.group(1)}." if found else " I do not know."
        for chain in load_chains():
            if question == chain.question:
                last = re.escape(chain.facts[-1]).replace(re.escape("{" + "abcd"[len(chain.facts) - 1] + "}"), r"(\w+)")
                found = re.search(last, prompt)
                return f" {found.group(1)}." if found else " I do not know."
        return super()._answer(prompt)


def test_a_probe_run_scores_hits_wrong_items_and_rebuilds_every_prompt(tmp_path: Path) -> None:
    config = ProbeConfig(
        tasks=("nolima-literal", "nolima", "nolima-multi"), lengths=(200, 300), depths=(0.0, 0.5, 1.0), trials=3
    )
    run = run_probe(KnowsTheHop(dead_zone=(2.0, 2.0)), config, tmp_path, progress=False)
    trials = [r for r in run.rows if r["kind"] == "trial"]
    assert len(trials) == 3 * 2 * 3 * 3 and all(r["exact_length"] for r in trials)
    by_task = {t: [r for r in trials if r["task"] == t] for t in config.tasks}
    assert all(r["hit"] for t in ("nolima", "nolima-literal") for r in by_task[t])
    assert all(not r["hit"] and r["miss"] == "wrong_item" for r in by_task["nolima-multi"])
    closed = [r for r in run.rows if r["kind"] == "closed_book"]
    assert len(closed) == 9 and not any(r["hit"] for r in closed)
    assert all(verify_row(r) for r in run.rows)
    assert all(r["answers"][0] in rebuild_prompt(r["recipe"]) for r in trials)
    rescored = rescore_rows(read_rows(tmp_path / "results.jsonl"), run.settings["config"])
    assert [(r["hit"], r["miss"]) for r in rescored] == [(r["hit"], r["miss"]) for r in run.rows]


@pytest.fixture
def fake_backend() -> Iterator[None]:
    register_backend("nolimafake", lambda spec, **options: KnowsTheHop(dead_zone=(2.0, 2.0)), replace=True)
    yield
    unregister_backend("nolimafake")


def test_litm_probe_task_nolima_on_the_command_line(tmp_path: Path, fake_backend: None) -> None:
    out = tmp_path / "run"
    args = ["probe", "--model", "nolimafake:m", "--task", "nolima-literal,nolima", "--lengths", "256,512"]
    res = CliRunner().invoke(
        app, [*args, "--depths", "0,1", "--trials", "2", "--no-progress", "--out", str(out)], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert "== nolima: accuracy" in res.output and "== nolima-literal: accuracy" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert {"nolima", "nolima-literal"} <= set(json.dumps(summary).replace('"', " ").split())
    bad = CliRunner().invoke(app, ["probe", "--model", "nolimafake:m", "--task", "nolima-x", "--out", str(tmp_path)])
    # In process the typed error surfaces as such (the installed `litm` prints it as one line).
    assert isinstance(bad.exception, ProbeError) and "nolima-multi" in str(bad.exception)
