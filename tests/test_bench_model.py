"""A small real run of the strategy benchmark on the embedded model, through to the HTML report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from litm.bench._data import load_items
from litm.bench._jobs import stage1_jobs
from litm.bench._outputs import write_outputs
from litm.bench._runner import BenchConfig, run_bench

pytest.importorskip("bm25s")
pytest.importorskip("matplotlib")


@pytest.mark.model
def test_small_real_run_and_report(tmp_path: Path) -> None:
    from litm.models import load_model

    config = BenchConfig(
        questions=2,
        ks=(3,),
        strategies=("none", "pyramid", "profile"),
        direct_questions=1,
        direct_ranks=(1,),
        ablation_questions=0,
        max_tokens=4,
    )
    model = load_model("local")
    run = run_bench(model, config, tmp_path, progress=False)
    slot_rows = [r for r in run.rows if r["phase"] == "slot"]
    assert len(slot_rows) == 6 and {r["mode"] for r in run.rows} == {"aligned"}
    assert all(r["input_tokens"] > 200 for r in slot_rows)
    assert {r["strategy"] for r in run.rows if r["phase"] == "direct"} == {"none", "pyramid", "profile"}
    assert sum(r["phase"] in ("closed", "oracle") for r in run.rows) == 4
    # Likelihood is on for a local model: each row's value is the model's own score of the answers on that prompt.
    assert run.settings["identity"]["likelihood"] is True
    job = next(j for j in stage1_jobs(load_items(2, k=3), config) if j.key == slot_rows[0]["key"])
    scores = model.continuation_logprobs(job.prompt, [f" {a}" for a in job.item.answers])  # type: ignore[attr-defined]
    assert slot_rows[0]["likelihood"] == pytest.approx(max(x.mean for x in scores), abs=1e-4)
    out = write_outputs(tmp_path, run.rows, run.settings)
    summary = json.loads(out.summary_path.read_text(encoding="utf-8"))["by_k"]["3"]
    dc = summary["direct_check"]
    assert summary["questions"] == 2 and sum(dc[s]["n"] for s in ("none", "pyramid", "profile")) == 3
    assert dc["none"]["agree"] == 1.0  # the same prompt as the slot run, answered once
    assert 1 <= dc["all reordered"]["n"] <= 2
    assert out.report is not None
    html = out.report.read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') >= 3
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "gemma" in html.lower()
