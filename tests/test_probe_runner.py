"""The runner with a scripted model: resumable results, schedule, recipes, concurrency, adaptive stop, outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litm.eval._results import ResultsLog, read_rows
from litm.placement._profile import PositionProfile
from litm.probe import ProbeConfig, ProbeError, run_probe, write_outputs
from litm.probe._analysis import analyze
from litm.probe._estimate import estimate
from litm.probe._grid import plan
from litm.probe._recipe import rebuild_prompt, verify_row
from litm.probe._rescore import rescore_rows
from litm.probe._testing import DeadZoneModel

SMALL = ProbeConfig(lengths=(256, 512), depths=(0.0, 0.5, 1.0), trials=4)


def test_a_run_writes_one_row_per_planned_call(tmp_path: Path) -> None:
    run = run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    keys = [r["key"] for r in read_rows(tmp_path / "results.jsonl")]
    assert sorted(keys) == sorted(s.key for s in plan(SMALL))
    assert len(set(keys)) == len(keys) == run.new_rows == 4 + 2 * 3 * 4
    settings = json.loads((tmp_path / "run.json").read_text())
    assert settings["model"]["mode"] == "cold" and settings["identity"]["layouts"] == ["plain", "buffered"]
    row = next(r for r in run.rows if r["kind"] == "trial")
    for field in ("prompt_tokens", "exact_length", "actual_depths", "output", "hit", "miss", "recipe", "mode"):
        assert field in row
    assert all(r["exact_length"] and r["prompt_tokens"] == r["length"] for r in run.rows if r["kind"] == "trial")


def test_the_scripted_dead_zone_is_found(tmp_path: Path) -> None:
    run = run_probe(DeadZoneModel(dead_zone=(0.3, 0.7)), SMALL, tmp_path, progress=False)
    out = write_outputs(tmp_path, run.rows, run.settings, plots=False, report=False)
    a = out.analyses["needle"]
    assert a.pooled[0.5].acc == 0.0 and a.pooled[0.0].acc == 1.0 and a.pooled[1.0].acc == 1.0
    assert a.dead_zone_pooled.depths == (0.5,)
    assert {r["miss"] for r in run.rows if r["kind"] == "trial" and not r["hit"]} == {"echo"}
    assert a.closed_book.n == 4 and a.closed_book.hits == 0


def test_a_crashed_run_resumes_without_losing_or_duplicating_rows(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="scripted failure"):
        run_probe(DeadZoneModel(fail_after=7), SMALL, tmp_path, progress=False)
    first = read_rows(tmp_path / "results.jsonl")
    assert len(first) == 7
    run = run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    assert run.skipped == 7 and run.new_rows == len(plan(SMALL)) - 7
    rows = read_rows(tmp_path / "results.jsonl")
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) == len(plan(SMALL))
    assert rows[:7] == first  # finished rows are kept as they were


def test_a_torn_last_line_is_cut_and_the_row_rerun(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        run_probe(DeadZoneModel(fail_after=5), SMALL, tmp_path, progress=False)
    path = tmp_path / "results.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"key": "trial|needle|256|0|3|buffered", "hit": tr')  # killed mid-write
    assert len(read_rows(path)) == 5
    run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    rows = read_rows(path)
    assert len(rows) == len({r["key"] for r in rows}) == len(plan(SMALL))
    assert path.read_bytes().endswith(b"\n")


def test_resume_with_settings_that_change_prompts_is_refused(tmp_path: Path) -> None:
    run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    changed = ProbeConfig(lengths=(256, 512), depths=(0.0, 0.5, 1.0), trials=4, seed=7)
    with pytest.raises(ProbeError, match="different settings"):
        run_probe(DeadZoneModel(), changed, tmp_path, progress=False)
    run = run_probe(DeadZoneModel(), changed, tmp_path, progress=False, fresh=True)
    assert run.skipped == 0 and all(r["seed"] >= 7 for r in run.rows)


def test_a_grown_grid_runs_only_the_new_cells(tmp_path: Path) -> None:
    run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    grown = ProbeConfig(lengths=(256, 512, 768), depths=(0.0, 0.5, 1.0), trials=5)
    model = DeadZoneModel()
    run = run_probe(model, grown, tmp_path, progress=False)
    assert model.calls == run.new_rows == len(plan(grown)) - len(plan(SMALL))


def test_every_task_row_rebuilds_its_exact_prompt(tmp_path: Path) -> None:
    tasks = ("needle", "paraphrase", "chain", "multi", "kv", "docqa")
    cfg = ProbeConfig(tasks=tasks, lengths=(400,), depths=(0.0, 0.5, 1.0), trials=2)
    run = run_probe(DeadZoneModel(), cfg, tmp_path, progress=False)
    assert {r["task"] for r in run.rows} == set(cfg.tasks)
    for row in run.rows:
        assert verify_row(row), row["key"]
    kv = next(r for r in run.rows if r["task"] == "kv" and r["kind"] == "trial" and r["depth"] == 0.5)
    assert 'Key: "' in rebuild_prompt(kv["recipe"]) and kv["prompt_tokens"] <= 400


def test_prefix_schedule_needs_less_prefill_than_cell_by_cell(tmp_path: Path) -> None:
    est = estimate(DeadZoneModel(), ProbeConfig(lengths=(512, 1024), trials=3), tmp_path)
    assert est.calls == len(plan(ProbeConfig(lengths=(512, 1024), trials=3)))
    assert est.prefill_scheduled < 0.8 * est.prefill_grid <= est.input_tokens
    assert "calls to run" in est.describe() and "$" in est.describe(price_in=1.0, price_out=2.0)


def _lcp(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def test_prefix_order_reuses_the_longest_prefix_any_earlier_prompt_offers(tmp_path: Path) -> None:
    cfg = ProbeConfig(lengths=(300, 600), depths=(0.0, 0.25, 0.5, 0.75, 1.0), trials=2, closed_book=False)
    run = run_probe(DeadZoneModel(), cfg, tmp_path, progress=False)
    for trial in (0, 1):
        prompts = [rebuild_prompt(r["recipe"]) for r in run.rows if r["trial"] == trial]  # in the order they ran
        assert len(prompts) == 10
        for i in range(1, len(prompts)):
            best = max(_lcp(prompts[j], prompts[i]) for j in range(i))
            assert _lcp(prompts[i - 1], prompts[i]) == best  # a single KV cache loses nothing to the order
    grid = run_probe(DeadZoneModel(), ProbeConfig(**{**cfg.to_dict(), "order": "grid"}), tmp_path / "g", progress=False)
    cells = [(r["length"], r["depth"], r["trial"]) for r in grid.rows]
    assert cells == sorted(cells)  # the naive order: cell by cell


def test_remote_models_run_concurrently_and_keep_every_row(tmp_path: Path) -> None:
    model = DeadZoneModel(remote=True)
    run = run_probe(model, SMALL, tmp_path, progress=False)
    keys = [r["key"] for r in read_rows(tmp_path / "results.jsonl")]
    assert len(keys) == len(set(keys)) == len(plan(SMALL)) == model.calls
    assert run.settings["model"]["mode"] == "remote"


def test_adaptive_sampling_stops_settled_cells_early(tmp_path: Path) -> None:
    cfg = ProbeConfig(lengths=(256,), depths=(0.0, 0.5, 1.0), trials=12, adaptive=True, min_trials=4)
    run = run_probe(DeadZoneModel(dead_zone=(0.3, 0.7)), cfg, tmp_path, progress=False)
    per_depth = {d: sum(1 for r in run.rows if r["kind"] == "trial" and r["depth"] == d) for d in cfg.depths}
    # 0/4 at 0.5 against 4/4 at both edges: no completion of the grid to 12 trials changes the verdicts
    # (the rule of litm.probe._sequential), so every cell stops at min_trials.
    assert per_depth == {0.0: 4, 0.5: 4, 1.0: 4}
    assert run.stopping is not None and run.stopping["needle"]["stopped_after_round"] == {
        "256|0": 3,
        "256|0.5": 3,
        "256|1": 3,
    }
    fixed = run_probe(
        DeadZoneModel(dead_zone=(0.3, 0.7)), ProbeConfig(**{**cfg.to_dict(), "adaptive": False}), tmp_path / "f",
        progress=False,
    )  # fmt: skip
    adaptive_zone, fixed_zone = analyze(run.rows)["needle"], analyze(fixed.rows)["needle"]
    assert adaptive_zone.dead_zone_pooled.depths == fixed_zone.dead_zone_pooled.depths == (0.5,)
    with pytest.raises(ProbeError, match="adaptive"):
        run_probe(DeadZoneModel(), ProbeConfig(adaptive=True, order="grid"), tmp_path / "x", progress=False)


def test_outputs_profile_plots_and_a_self_contained_report(tmp_path: Path) -> None:
    run = run_probe(DeadZoneModel(), SMALL, tmp_path, progress=False)
    out = write_outputs(tmp_path, run.rows, run.settings)
    assert {p.name for p in out.plots} == {"needle-accuracy.png", "needle-heatmap.png"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in out.plots)
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2
    assert "<script" not in html and "http://" not in html and "https://" not in html  # opens offline
    assert "dead zone" in html and "closed-book" in html.lower()
    profile = PositionProfile.load(tmp_path / "profile.json")
    assert profile.model == "dead-zone-fake" and profile.metadata["probe"]["settings"]["mode"] == "cold"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["needle"]["dead_zone"]["depths"] == [0.5]


def test_results_log_skips_duplicate_keys(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "r.jsonl")
    log.append({"key": "a", "v": 1})
    log.append({"key": "a", "v": 2})
    assert [r["v"] for r in read_rows(tmp_path / "r.jsonl")] == [1]
    assert len(ResultsLog(tmp_path / "r.jsonl").rows) == 1


def test_lengths_longer_than_the_corpus_are_inexact_not_wrong(tmp_path: Path) -> None:
    from litm.probe._corpus import Corpus

    tiny = Corpus.from_texts(["The sun rose over the quiet hills. Birds sang in the tall old trees."], name="tiny")
    cfg = ProbeConfig(lengths=(200,), depths=(0.5,), trials=1, closed_book=False, layouts=("plain",))
    run = run_probe(DeadZoneModel(), cfg, tmp_path, corpus=tiny, progress=False)
    row = run.rows[0]
    assert not row["exact_length"] and row["prompt_tokens"] < 200


def test_rescoring_stored_outputs_reproduces_the_scores_and_repairs_old_ones(tmp_path: Path) -> None:
    tasks = ("needle", "paraphrase", "chain", "multi", "kv", "docqa")
    cfg = ProbeConfig(tasks=tasks, lengths=(400,), depths=(0.0, 0.5, 1.0), trials=2)
    run = run_probe(DeadZoneModel(), cfg, tmp_path, progress=False)
    fields = ("hit", "score", "miss", "copied_position", "observations", "first_line")
    again = rescore_rows(run.rows, run.settings["config"])
    assert [{f: r[f] for f in fields} for r in again] == [{f: r[f] for f in fields} for r in run.rows]
    stale = [{**r, "miss": "bogus", "hit": not r["hit"]} for r in run.rows]
    assert rescore_rows(stale, run.settings["config"]) == again
    changed = [{**run.rows[0], "question": "Question: something else?"}]
    with pytest.raises(ProbeError, match="no longer regenerates"):
        rescore_rows(changed, run.settings["config"])
