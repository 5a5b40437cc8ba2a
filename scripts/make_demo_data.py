"""Copy the committed measurements `litm demo` shows into package data, with their provenance.

Writes, from the committed results under docs/results (nothing is re-measured here):

* src/litm/data/profile-gemma3-270m-nq-k10.json: the position profile of the committed Gemma 3 270M
  benchmark (docs/results/bench-nq-gemma3-270m): the accuracy with the gold passage in each of 10 slots,
  100 NQ-Open questions, with hits, n and Wilson 95% intervals per slot.
* src/litm/data/demo-evidence.json: the benchmark's headline (the measured profile's order vs rank order,
  expected accuracy under p(rank r) ~ 1/r, the paired bootstrap interval), its controls, and the input budget
  the committed needle probe measured for the same model (docs/results/probe-gemma3-270m).

Run from the repository root after re-running the benchmark or the probe; `--check` exits 1 when the
package data differs from what the committed results give (tests/test_demo_data.py runs it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BENCH = Path("docs/results/bench-nq-gemma3-270m")
PROBE = Path("docs/results/probe-gemma3-270m")
DATA = Path("src/litm/data")
PROFILE = DATA / "profile-gemma3-270m-nq-k10.json"
EVIDENCE = DATA / "demo-evidence.json"
K = "10"


def profile(summary: dict[str, Any]) -> dict[str, Any]:
    slots = summary["by_k"][K]["slot_accuracy"]
    step = len(slots) - 1
    return {
        "format": "litm-position-profile",
        "version": 1,
        "points": [{"position": i / step, "weight": s["acc"]} for i, s in enumerate(slots)],
        "tie_break": "end",
        "name": "gemma3-270m-nq-k10",
        "model": summary["model"]["name"],
        "metadata": {
            "source": f"litm bench slot accuracy, {BENCH.as_posix()}/bench-summary.json",
            "what": "accuracy (first-line normalised match) with the gold passage in each of 10 slots, NQ-Open",
            "k": int(K),
            "questions": summary["by_k"][K]["questions"],
            "command": summary["command"],
            "slot_hits": [s["hits"] for s in slots],
            "slot_n": [s["n"] for s in slots],
            "slot_intervals": [[s["lo"], s["hi"]] for s in slots],
            "interval": "Wilson 95%",
        },
    }


DEMO_STRATEGY = "profile"


def evidence(summary: dict[str, Any], probe: dict[str, Any]) -> dict[str, Any]:
    by_k = summary["by_k"][K]
    head = by_k["headline"]["decaying"]
    meta = probe["metadata"]
    return {
        # The demo places by the default, auto, with the committed profile given: the profile strategy's order, so
        # its evidence is the profile strategy's (cross-fitted) gain, significant or not.
        "gain": {
            "strategy": DEMO_STRATEGY,
            "baseline": "none",
            "gain": head[DEMO_STRATEGY]["gain_over_none"],
            "ci": head[DEMO_STRATEGY]["gain_ci"],
            "interval": "paired bootstrap 95%, the same questions resampled",
            "expected_accuracy": {
                "none": head["none"]["expected_acc"],
                DEMO_STRATEGY: head[DEMO_STRATEGY]["expected_acc"],
            },
            "weighting": by_k["rank_distributions"]["decaying"],
            "questions": by_k["questions"],
            "k": int(K),
            "model": summary["model"]["name"],
            "oracle": by_k["oracle"],
            "closed_book": by_k["closed_book"],
            "source": f"{BENCH.as_posix()}/bench-summary.json",
        },
        "budget": {
            "max_input_tokens": meta["recommended_max_input_tokens"],
            "what": "recommended_max_input_tokens of the committed needle probe: the longest tested length "
            f"({max(meta['probe']['lengths'])} tokens) at which mid-context accuracy held",
            "lengths": meta["probe"]["lengths"],
            "source": f"{PROBE.as_posix()}/profile.json",
        },
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    summary = json.loads((BENCH / "bench-summary.json").read_text(encoding="utf-8"))
    probe = json.loads((PROBE / "profile.json").read_text(encoding="utf-8"))
    wanted = {PROFILE: render(profile(summary)), EVIDENCE: render(evidence(summary, probe))}
    if "--check" in argv:
        stale = [str(p) for p, text in wanted.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        if stale:
            print(f"stale package data (run python scripts/make_demo_data.py): {', '.join(stale)}")
            return 1
        return 0
    for path, text in wanted.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
