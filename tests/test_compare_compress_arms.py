"""scripts/compare_compress_arms.py: two compressors of one bench run paired question by question."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pairs_two_arms_by_question_at_each_ratio_and_slot(tmp_path: Path) -> None:
    rows = []
    for q in range(8):
        for arm, hit in (("static", q < 6), ("embed", q < 2)):
            rows.append({"phase": "compress", "qid": f"q{q}", "arm": arm, "ratio": 4.0, "slot": 1, "hit": hit,
                         "likelihood": -1.0 if arm == "static" else -2.0})  # fmt: skip
    rows.append({"phase": "slot", "qid": "q0", "slot": 1, "hit": True})  # not a compression row: ignored
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    script = str(ROOT / "scripts" / "compare_compress_arms.py")
    out = subprocess.run([sys.executable, script, str(tmp_path), "static:embed", "static:lead"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    table = [line for line in out.splitlines() if line.startswith("| static")]
    # 4 of 8 questions better, none worse; likelihood +1 on every question. "lead" is not in the run: no row.
    assert len(table) == 1 and table[0].startswith("| static | embed | 1/4 | 1 | 8 | +0.500 [+0.1")
    assert table[0].endswith("| +1.000 [+1.000, +1.000] |")
