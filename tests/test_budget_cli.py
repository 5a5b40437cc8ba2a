"""``litm fit`` end to end with the embedded model's own tokenizer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from litm.models import load_model

pytestmark = pytest.mark.model

DOCS = "".join(
    json.dumps({"id": f"d{i}", "text": f"Passage {i} is about harbours and ships. " * 12, "score": 1 - i / 10}) + "\n"
    for i in range(8)
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "litm", "fit", *args], input=DOCS, capture_output=True, text=True,
                          timeout=120)


def test_fit_prints_prompt_within_budget_and_drop_list() -> None:
    proc = run("--budget", "500", "--model", "local", "-q", "Which harbour?", "--rank-by", "score")
    assert proc.returncode == 0, proc.stderr
    tokens = load_model("local").count_tokens(proc.stdout[:-1])  # stdout ends with one newline
    assert tokens <= 500
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"litm fit: {tokens}/500 tokens")
    dropped = [x.split()[1] for x in lines[1:]]
    assert dropped and dropped == [f"d{i}" for i in range(8 - len(dropped), 8)]
    assert all(f'id="{d}"' not in proc.stdout for d in dropped)


def test_impossible_budget_exits_2_with_numbers() -> None:
    proc = run("--budget", "20", "--model", "local", "-q", "Which harbour is the oldest in the whole of Europe?")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "budget 20 tokens < floor" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_budget_errors_name_the_flags_not_the_python_parameters() -> None:
    # Issue 40, defect 10: a CLI user was told to "raise max_input_tokens", a name the command line does not have.
    floor = run("--budget", "20", "--model", "openai:gpt-4o", "-q", "Which harbour is the oldest in Europe?")
    assert floor.returncode == 2 and "raise --budget, lower --reserve" in floor.stderr
    reserve = run("--budget", "50", "--reserve", "60", "--model", "openai:gpt-4o", "-q", "Which harbour?")
    assert reserve.returncode == 2 and reserve.stdout == ""
    assert reserve.stderr == (
        "litm: error: --reserve 60 leaves no input budget of --budget 50 (lower --reserve or raise --budget)\n"
    )
    for proc in (floor, reserve):
        assert "max_input_tokens" not in proc.stderr and "reserve_output_tokens" not in proc.stderr
