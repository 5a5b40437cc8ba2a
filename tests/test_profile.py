"""Position profiles: interpolation, validation, persistence, and their use from the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import litm
from litm.placement import PlacementOptions
from litm.placement._profile import PositionProfile


def test_interpolation_and_exact_ties() -> None:
    p = PositionProfile(points=((0.0, 0.8), (0.5, 0.2), (1.0, 0.9)))
    assert p.weight_at(0.25) == pytest.approx(0.5)
    assert p.slot_weights(3) == pytest.approx([0.8, 0.2, 0.9])
    v = PositionProfile.pyramid().exact_slot_weights(1001)
    assert all(v[i] == v[1000 - i] for i in range(1001))  # mirrored slots tie exactly, even for large n


def test_measured_profile_drives_placement() -> None:
    # A profile like Gemma 270M's needle curve (worst at the edges): the best document goes mid-context.
    p = PositionProfile.from_weights([0.35, 0.75, 0.70, 0.75, 0.35], name="gemma-needle")
    plan = litm.place([f"r{i}" for i in range(1, 6)], "profile", placement=PlacementOptions(profile=p))
    assert plan.ranks[1] in (1, 2) and plan.ranks[3] in (1, 2)
    assert plan.ranks[0] in (4, 5) and plan.ranks[4] in (4, 5)
    assert "gemma-needle" in plan.slots[0].reason


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"points": []}, "at least one point"),
        ({"points": [{"position": 1.5, "weight": 1}]}, "outside [0, 1]"),
        ({"points": [{"position": 0.5, "weight": float("nan")}]}, "must be finite"),
        ({"points": [{"position": 0.5}]}, "malformed"),
        ({"points": [{"position": 0.5, "weight": 1}, {"position": 0.5, "weight": 2}]}, "distinct"),
        ({"format": "other", "points": []}, "not a litm position profile"),
        ({"version": 99, "points": [{"position": 0, "weight": 1}]}, "newer"),
        ({"points": [{"position": 0, "weight": 1}], "tie_break": "middle"}, "tie_break"),
        ([1, 2], "JSON object"),
    ],
)
def test_invalid_profiles(data: object, fragment: str) -> None:
    with pytest.raises(litm.InvalidProfileError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        PositionProfile.from_dict(data)  # type: ignore[arg-type]


def test_round_trip_and_cli(tmp_path: Path) -> None:
    p = PositionProfile.from_weights([0.9, 0.4, 0.95], name="m", model="local", metadata={"task": "needle"})
    path = tmp_path / "profile.json"
    p.save(path)
    assert PositionProfile.load(path) == p
    docs = "".join(json.dumps({"id": f"r{i}", "text": f"t{i}"}) + "\n" for i in range(1, 7))
    plan_file = tmp_path / "plan.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "litm",
            "place",
            "--strategy",
            "profile",
            "--profile",
            str(path),
            "--plan-json",
            str(plan_file),
        ],
        input=docs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out_ids = [json.loads(x)["id"] for x in proc.stdout.splitlines()]
    expected = list(litm.place([f"r{i}" for i in range(1, 7)], "profile", placement=PlacementOptions(profile=p)).items)
    assert out_ids == expected
    plan = json.loads(plan_file.read_text())
    assert plan["strategy"] == "profile" and [s["id"] for s in plan["slots"]] == out_ids


def test_cli_missing_profile_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "place", "--strategy", "profile", "--profile", str(tmp_path / "nope.json")],
        input='"a"\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "profile file not found" in proc.stderr


def test_version_and_help() -> None:
    v = subprocess.run([sys.executable, "-m", "litm", "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.strip() == f"litm {litm.__version__}"
    for cmd in (["--help"], ["place", "--help"], ["demo", "--help"]):
        h = subprocess.run([sys.executable, "-m", "litm", *cmd], capture_output=True, text=True, timeout=60)
        assert h.returncode == 0 and "Usage:" in h.stdout, cmd


def test_plan_is_json_serialisable_and_explains() -> None:
    docs = [{"id": f"d{i}", "text": f"t{i}", "score": s} for i, s in enumerate([0.1, 0.9, 0.5, 0.7, 0.3])]
    plan = litm.place(
        [*docs, {"id": "d1", "text": "dup", "score": 0.0}],
        "pyramid",
        rank_by="score",
        placement=PlacementOptions(dedup="id"),
    )
    data = json.loads(plan.to_json())
    assert [s["rank"] for s in data["slots"]] == [2, 4, 5, 3, 1]
    assert data["dropped"] == [{"id": "d1", "input_index": 5, "reason": "duplicate id of item 1"}]
    text = plan.explain()
    assert "best document last, next to the question" in text and "dropped d1" in text
    # Raw scores and their relevance (the best placed document 1.0, the worst 0.0) side by side.
    assert [(s["id"], s["score"]) for s in data["slots"]] == [
        ("d3", 0.7),
        ("d4", 0.3),
        ("d0", 0.1),
        ("d2", 0.5),
        ("d1", 0.9),
    ]
    assert [s["relevance"] for s in data["slots"]] == pytest.approx([0.75, 0.25, 0.0, 0.5, 1.0], abs=1e-12)
    assert text.splitlines()[1].split()[:5] == ["slot", "rank", "id", "score", "relevance"]
    assert text.splitlines()[-2].split()[:5] == ["5", "1", "d1", "0.9", "1.000"]


points_st = st.lists(
    st.tuples(st.floats(0.0, 1.0), st.floats(-5.0, 5.0)), min_size=1, max_size=7, unique_by=lambda p: p[0]
)


@given(points=points_st, n=st.integers(0, 40))
def test_exact_slot_weights_equal_exact_interpolation(points: list[tuple[float, float]], n: int) -> None:
    # The integer walk over segments must give exactly the values of interpolating at Fraction(i, n - 1).
    p = PositionProfile(points=tuple(sorted(points)))
    expected = [p._exact_weight(Fraction(1))] if n == 1 else [p._exact_weight(Fraction(i, n - 1)) for i in range(n)]
    assert p.exact_slot_weights(n) == expected
