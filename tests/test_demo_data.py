"""The demo's package data: copied from the committed results, with provenance, and the question pick."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from litm.probe._demo import DEMO_THREADS, demo_rows
from script_support import load_script

ROOT = Path(__file__).resolve().parents[1]


def data(name: str) -> Any:
    return json.loads((resources.files("litm") / "data" / name).read_text(encoding="utf-8"))


def test_package_data_equals_the_committed_results() -> None:
    proc = subprocess.run(
        [sys.executable, "scripts/make_demo_data.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_pick_is_the_first_short_placed_only_answer_of_its_scan() -> None:
    pick = data("demo-question.json")
    rows = demo_rows()
    assert rows[pick["row"]]["question"] == pick["question"]
    scan = [json.loads(line) for line in (ROOT / pick["scan"]).read_text(encoding="utf-8").splitlines()]
    script = load_script("scripts/pick_demo_question.py")
    first = next(
        r
        for r in scan
        if r["outcome"] == "placed_only" and len(r["placed"].split()) <= script.MAX_WORDS and script.is_clear(r)
    )
    assert pick["margins"] == {"placed": first["margin_placed"], "rank_order": first["margin_rank_order"]}
    assert first["row"] == pick["row"] and pick["threads"] == DEMO_THREADS
    tally = pick["tally"]
    assert tally["scanned"] == len(scan)
    for outcome in ("placed_only", "rank_only", "both", "neither"):
        assert tally[outcome] == sum(r["outcome"] == outcome for r in scan)
    assert [r["row"] for r in scan] == sorted(r["row"] for r in scan)


def test_every_data_file_has_its_provenance_in_the_readme() -> None:
    readme = (ROOT / "src/litm/data/README.md").read_text(encoding="utf-8")
    for path in (ROOT / "src/litm/data").iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name
