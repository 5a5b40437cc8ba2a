"""The benchmark's psc arm: rows scored like the other arms, paired with the plain prompt, resumable, and its CLI."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.bench._config import BenchConfig, BenchError
from litm.bench._consistency import psc_keys, psc_summary
from litm.bench._data import Passage, QAItem
from litm.bench._design import LIU_INSTRUCTION, MULTIHOP_INSTRUCTION, build_prompt, gold_slots
from litm.bench._runner import run_bench
from litm.cli import app
from litm.consistency import vote
from litm.consistency._permute import permutations
from litm.consistency._psc import DEFAULT_BUILDER
from litm.eval._scoring import normalize
from litm.models import Completion, GenerationRequest, Model, register_backend, unregister_backend
from litm.placement import Doc
from litm.prompt import Wording


class EdgeModel(Model):
    """A scripted base model with a dead zone: it answers only when the document holding the answer is the
    first or the last one of the prompt, else " I do not know"."""

    name = "edge-model"
    spec = "edge:test"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.calls = 0

    @property
    def supports_chat(self) -> bool:
        return False

    @property
    def context_window(self) -> int:
        return 100_000

    @property
    def tokenizer(self) -> Any:
        raise NotImplementedError  # the benchmark never counts: usage comes from the completion

    def reply(self, prompt: str) -> str:
        question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        answer = self.answers[question]
        docs = prompt.split("\nDocument [")[1:]
        where = [i for i, d in enumerate(docs) if normalize(answer) in normalize(d)]
        return f" {answer}\nQuestion:" if where and where[0] in (0, len(docs) - 1) else " I do not know"

    def _generate(self, request: GenerationRequest) -> Completion:
        assert isinstance(request.prompt, str)
        self.calls += 1
        return Completion(self.reply(request.prompt), 10, 3, 0.001, "stop", self.name)


class ChatEdgeModel(EdgeModel):
    """The same model behind a chat template: it must receive the prompt as one user message."""

    @property
    def supports_chat(self) -> bool:
        return True

    def _generate(self, request: GenerationRequest) -> Completion:
        prompt = request.prompt
        assert not isinstance(prompt, str) and len(prompt) == 1 and prompt[0]["role"] == "user"
        return super()._generate(dataclasses.replace(request, prompt=prompt[0]["content"]))


def _single(i: int) -> QAItem:
    gold = Passage(f"g{i}", f"Gold {i}", f"The code of vault {i} is {4000 + i}.")
    rest = tuple(Passage(f"d{i}-{j}", f"Other {j}", f"Vault {j} is elsewhere.") for j in range(5))
    return QAItem(i, f"What is the code of vault {i}?", (str(4000 + i),), gold, rest)


def _multi() -> QAItem:
    golds = (Passage("m1", "Hop one", "Ada was born in London."), Passage("m2", "Hop two", "London is in England."))
    rest = tuple(Passage(f"x{j}", f"Noise {j}", f"Nothing {j}.") for j in range(5))
    return QAItem("mq", "Where was Ada born?", ("England",), golds[0], rest, more_golds=golds[1:], kind="bridge")


ITEMS = [_single(1), _single(2)]
ANSWERS = {it.question: it.answers[0] for it in [*ITEMS, _multi()]}


def _config(**kw: Any) -> BenchConfig:
    base: dict[str, Any] = {"questions": 2, "ks": (4,), "direct_questions": 0, "ablation_questions": 0,
                            "controls": False, "likelihood": "off", "psc_calls": 3}  # fmt: skip
    return BenchConfig(**{**base, **kw})


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_psc_rows_vote_over_orders_and_call_zero_is_the_slot_prompt(tmp_path: Path) -> None:
    model = EdgeModel(ANSWERS)
    run = run_bench(model, _config(), tmp_path, progress=False, items=ITEMS)
    psc = [r for r in run.rows if r["phase"] == "psc"]
    slot = {(r["qid"], r["slot"]): r for r in run.rows if r["phase"] == "slot"}
    assert sorted(r["key"] for r in psc) == sorted(k for it in ITEMS for k in psc_keys(it, 4, 3, (1, 2, 4), ()))
    assert model.calls == len(slot) + 3 * len(psc) == run.answered - len(psc) + 3 * len(psc)
    for r in psc:
        assert r["first_prompt_sha"] == slot[(r["qid"], r["slot"])]["prompt_sha"]  # call 0 is the plain prompt
        assert r["prompt_sha"] != r["first_prompt_sha"]  # ... but the row is never mistaken for it
        assert r["orders"] == [list(o) for o in permutations(4, 3, seed=r["qid"])]
        # The model answers only with the gold passage first or last: each call's answer follows where it sat.
        answer = ANSWERS[r["question"]]
        assert [a == answer for a in r["call_answers"]] == [g[0] in (1, 4) for g in r["call_gold_slots"]]
        assert r["first_line"] == vote(r["call_answers"]).answer
        # Scored like every arm, and the cost is every call's.
        assert r["hit"] == (r["first_line"] == answer) and r["em"] == r["hit"]
        assert (r["calls_made"], r["input_tokens"], r["output_tokens"]) == (3, 30, 9)
        assert "likelihood" not in r
    summary = psc_summary(run.rows)["by_k"]["4"]["m=3"]
    assert set(summary) == {"s=1", "s=2", "s=4"}
    assert all(c["same_first_prompt"] == 2 and c["cost"]["input_ratio"] == 3.0 for c in summary.values())
    # Slot 1 is answered already in the order given; psc keeps it unless two other orders hide the gold.
    assert summary["s=1"]["plain"]["hit"]["acc"] == 1.0

    before = model.calls
    again = run_bench(model, _config(), tmp_path, resume=True, progress=False, items=ITEMS)
    assert model.calls == before and again.answered == 0 and len(again.rows) == len(run.rows)
    with pytest.raises(BenchError):
        run_bench(model, _config(psc_calls=4), tmp_path, resume=True, progress=False, items=ITEMS)


def test_psc_only_pairs_with_a_baseline_and_multi_gold_designs(tmp_path: Path) -> None:
    items = [*ITEMS, _multi()]
    base = run_bench(EdgeModel(ANSWERS), _config(psc_calls=0), tmp_path / "base", progress=False, items=items)
    model = EdgeModel(ANSWERS)
    config = _config(psc_only=True, psc_slots=(2,), psc_designs=("middle", "split"), baseline=str(tmp_path / "base"))
    run = run_bench(model, config, tmp_path / "psc", progress=False, items=items)
    assert {r["phase"] for r in run.rows} == {"psc"} and model.calls == 3 * len(run.rows)
    multi = {r["design"]: r for r in run.rows if r.get("gold_set")}
    assert set(multi) == {"middle", "split"}
    designs = {r["design"]: r for r in base.rows if r.get("phase") == "design"}
    for design, r in multi.items():
        assert r["first_prompt_sha"] == designs[design]["prompt_sha"]
        assert r["gold_slots"] == gold_slots(design, 4, 2) and r["call_gold_slots"][0] == gold_slots(design, 4, 2)
    summary = psc_summary(run.rows, base.rows)["by_k"]["4"]["m=3"]
    assert set(summary) == {"s=2", "d=middle", "d=split"}
    assert summary["s=2"]["questions"] == 2 and summary["d=middle"]["questions"] == 1
    assert set(summary["d=middle"]["vs_plain"]) == {"em", "f1", "hit"}
    # The plain slot-2 prompt misses (the gold in the middle); a vote that reaches an edge can only help here.
    assert summary["s=2"]["plain"]["hit"]["acc"] == 0.0
    assert summary["s=2"]["vs_plain"]["hit"]["worse"] == 0
    assert {cell["plain_from_call0"] for cell in summary.values()} == {0}
    # Without the baseline, each row's call 0 (the plain prompt, byte for byte) is its plain answer: the same
    # comparison, each pair counted as read off call 0.
    alone = psc_summary(run.rows)["by_k"]["4"]["m=3"]
    for label, cell in alone.items():
        assert cell["plain_from_call0"] == cell["questions"] == summary[label]["questions"]
        assert (cell["plain"], cell["vs_plain"]) == (summary[label]["plain"], summary[label]["vs_plain"])
        assert cell["cost"]["input_ratio"] == 3.0


def test_the_plain_builder_makes_the_benchmarks_own_prompt_bytes() -> None:
    for item, instruction in ((ITEMS[0], LIU_INSTRUCTION), (_multi(), MULTIHOP_INSTRUCTION)):
        passages = item.golds_at(list(range(1, len(item.golds) + 1)), 4)
        docs = [Doc(text=p.text, id=f"doc-{i}", title=p.title) for i, p in enumerate(passages, start=1)]
        ours = DEFAULT_BUILDER.replace(wording=Wording(instruction=instruction)).build(docs, item.question).text
        assert ours == build_prompt(passages, [1, 2, 3, 4], item.question, instruction=instruction)


def test_a_chat_model_gets_each_order_as_one_user_turn(tmp_path: Path) -> None:
    model = ChatEdgeModel(ANSWERS)  # asserts the one-user-message form on every call
    run = run_bench(model, _config(psc_only=True, psc_slots=(1,)), tmp_path, progress=False, items=ITEMS)
    assert [r["format"] for r in run.rows] == ["chat", "chat"] and model.calls == 6


@pytest.mark.parametrize(
    "kw",
    [{"psc_calls": -1}, {"psc_calls": 33}, {"psc_calls": True}, {"psc_only": True, "psc_calls": 0},
     {"psc_designs": ("centre",)}],
)  # fmt: skip
def test_bad_psc_settings_are_bench_errors(kw: dict[str, Any]) -> None:
    with pytest.raises(BenchError):
        _config(**kw)


@pytest.fixture()
def edge_backend() -> Iterator[None]:
    register_backend("edgepsc", lambda spec, **_: EdgeModel(ANSWERS), replace=True)
    yield
    unregister_backend("edgepsc")


def test_cli_runs_the_psc_arm_against_a_baseline(
    tmp_path: Path, edge_backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litm.bench._runner as runner

    # The CLI loads NQ questions; these stand in for them (same shape, no BM25 mining).
    monkeypatch.setattr(runner, "load_bench_items", lambda *a, **kw: (ITEMS, {"left_out": []}))
    common = ["bench", "--model", "edgepsc:x", "--k", "4", "--questions", "2", "--direct", "0", "--ablation", "0",
              "--no-controls", "--likelihood", "off", "--no-progress", "--no-plots"]  # fmt: skip
    res = CliRunner().invoke(app, [*common, "--out", str(tmp_path / "base")])
    assert res.exit_code == 0, res.output
    psc = ["--psc-calls", "3", "--psc-only", "--baseline", str(tmp_path / "base")]
    res = CliRunner().invoke(app, [*common, *psc, "--out", str(tmp_path / "p")])
    assert res.exit_code == 0, res.output
    assert "psc summary:" in res.output and "== k=" not in res.output
    summary = json.loads((tmp_path / "p" / "psc-summary.json").read_text(encoding="utf-8"))
    assert summary["baseline"] == str(tmp_path / "base")
    assert summary["by_k"]["4"]["m=3"]["s=1"]["questions"] == 2
    assert "| s=2 | 2 | hit |" in (tmp_path / "p" / "psc-summary.md").read_text(encoding="utf-8")
    res = CliRunner().invoke(app, [*common, "--psc-calls", "40", "--out", str(tmp_path / "bad")])
    assert res.exit_code != 0 and "Traceback" not in res.output


def test_a_refresh_of_a_psc_only_run_writes_its_psc_summary_only(tmp_path: Path) -> None:
    from litm.bench._outputs import refresh_outputs

    run = run_bench(EdgeModel(ANSWERS), _config(psc_only=True, psc_slots=(1,)), tmp_path, progress=False, items=ITEMS)
    assert run.rows
    refreshed = refresh_outputs(tmp_path)
    assert refreshed.summary_path.name == "psc-summary.json" and refreshed.report is None
    assert refreshed.summary["by_k"]["4"]["m=3"]["s=1"]["plain_from_call0"] == len(ITEMS)
    assert not (tmp_path / "bench-summary.json").exists()
