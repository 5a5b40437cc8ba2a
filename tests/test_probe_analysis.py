"""Dead zone, effective length, artefact checks, profile export and diff, on constructed results."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from litm.placement import PlacementOptions, place
from litm.placement._profile import PositionProfile
from litm.probe._analysis import Cell, DeadZone, analyze, dead_zone, effective_length
from litm.probe._export import accuracy_table, diff_profiles, recommended_max_input_tokens, to_profile

DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


def rows_from(
    acc: dict[tuple[int, float], float],
    n: int = 20,
    *,
    task: str = "needle",
    layout: str = "plain",
    miss: str = "other",
) -> list[dict[str, Any]]:
    """n trials per cell with round(acc * n) hits, as result rows."""
    out = []
    for (length, depth), a in acc.items():
        hits = round(a * n)
        for t in range(n):
            hit = t < hits
            out.append(
                {
                    "key": f"trial|{task}|{length}|{depth:g}|{t}|{layout}",
                    "kind": "trial",
                    "task": task,
                    "length": length,
                    "depth": depth,
                    "trial": t,
                    "layout": layout,
                    "hit": hit,
                    "miss": None if hit else miss,
                    "observations": [[depth, hit]],
                    "copied_position": None,
                }
            )
    return out


def curve(length: int, values: Sequence[float]) -> dict[tuple[int, float], float]:
    return {(length, d): v for d, v in zip(DEPTHS, values, strict=True)}


def test_u_shape_has_a_dead_zone_in_the_middle() -> None:
    rows = rows_from(curve(1024, [0.95, 0.6, 0.4, 0.55, 1.0]))
    a = analyze(rows)["needle"]
    zone = a.dead_zones[1024]
    assert zone.edge_depth == 1.0
    assert zone.depths == (0.25, 0.5, 0.75)
    assert all(zone.p_values[d] < 0.05 for d in zone.depths)
    assert "dead zone" in a.findings[0] and "0.5" in a.findings[0]


def test_flat_curve_has_no_dead_zone() -> None:
    a = analyze(rows_from(curve(1024, [0.8, 0.75, 0.8, 0.75, 0.8])))["needle"]
    assert not a.dead_zone_pooled.found
    assert a.dead_zone_pooled.describe() == "none detected"


def test_small_dips_within_noise_are_not_a_dead_zone() -> None:
    a = analyze(rows_from(curve(1024, [0.8, 0.7, 0.6, 0.7, 0.8]), n=10))["needle"]
    assert not a.dead_zone_pooled.found  # 6/10 vs 8/10 is not significant


def test_dead_zone_uses_the_better_edge() -> None:
    zone = dead_zone({0.0: Cell(20, 20), 0.5: Cell(12, 20), 1.0: Cell(11, 20)})
    assert zone.edge_depth == 0.0 and zone.depths == (0.5,)
    assert not dead_zone({0.0: Cell(3, 3), 1.0: Cell(3, 3)}).found  # no inner depth


def test_effective_length_walks_up_until_mid_depth_falls_below_ratio() -> None:
    acc = {
        **curve(512, [1.0, 1.0, 1.0, 1.0, 1.0]),
        **curve(1024, [1.0, 0.9, 0.9, 0.9, 1.0]),
        **curve(2048, [1.0, 0.7, 0.6, 0.7, 1.0]),
        **curve(4096, [1.0, 1.0, 1.0, 1.0, 1.0]),  # a lucky recovery must not extend it
    }
    a = analyze(rows_from(acc))["needle"]
    assert a.baseline == pytest.approx(1.0)
    assert a.effective_length == 1024
    assert a.mid[2048].acc == pytest.approx((0.7 + 0.6 + 0.7) / 3)
    assert recommended_max_input_tokens(a) == (1024, "effective context length")


def test_effective_length_is_relative_to_the_models_own_short_accuracy() -> None:
    # A weak model: 50% everywhere at 512, and 45% mid-depth at 2048 (> 0.85 x 0.5) -> still effective.
    acc = {**curve(512, [0.5] * 5), **curve(2048, [0.5, 0.45, 0.45, 0.45, 0.5])}
    table = {k: Cell(round(v * 20), 20) for k, v in acc.items()}
    eff, base, _ = effective_length(table, ratio=0.85)
    assert (eff, base) == (2048, 0.5)
    eff_strict, _, _ = effective_length(table, ratio=0.95)
    assert eff_strict == 512


def test_effective_length_when_the_model_fails_everywhere_or_already_short() -> None:
    none = analyze(rows_from({**curve(512, [0.0] * 5), **curve(1024, [0.0] * 5)}))["needle"]
    assert none.effective_length is None and none.baseline == 0
    assert "fails even at the shortest length" in " ".join(none.findings)
    short = analyze(rows_from(curve(512, [1.0, 0.2, 0.1, 0.2, 1.0])))["needle"]
    assert short.effective_length is None
    rec, why = recommended_max_input_tokens(short)
    assert rec == 512 and "shortest length" in why
    assert recommended_max_input_tokens(analyze(rows_from(curve(4096, [1.0] * 5)))["needle"], 2048)[0] == 2048


def test_edge_dip_that_recovers_in_the_buffered_layout_is_called_an_artefact() -> None:
    plain = rows_from(curve(1024, [0.2, 0.9, 0.9, 0.9, 0.25]), layout="plain", miss="echo")
    buffered = rows_from(curve(1024, [0.9, 0.9, 0.9, 0.9, 0.9]), layout="buffered")
    a = analyze(plain + buffered)["needle"]
    assert a.edge_check.dip_edges == (0.0, 1.0)
    assert "layout artefact" in a.edge_check.verdict and "'buffered'" in a.edge_check.verdict
    assert a.edge_check.echo_share_edges == pytest.approx(31 / 35)  # plain edge misses echo; buffered ones do not
    assert not a.dead_zone_pooled.found  # the middle is not below the (worse) edges


def test_a_layout_that_fails_everywhere_is_reported_as_a_layout_effect() -> None:
    good = rows_from(curve(1024, [1.0, 0.95, 1.0, 0.95, 1.0]), layout="plain")
    bad = rows_from(curve(1024, [0.2, 0.1, 0.1, 0.2, 0.2]), layout="buffered", miss="empty")
    a = analyze(good + bad)["needle"]
    assert a.layout_effect is not None and a.layout_effect[0] == "plain" and a.layout_effect[4] < 1e-6
    assert any("the prompt layout matters: 'plain'" in f for f in a.findings)
    same = analyze(rows_from(curve(1024, [0.8] * 5)) + rows_from(curve(1024, [0.8] * 5), layout="buffered"))
    assert not any("layout matters" in f for f in same["needle"].findings)


def test_edge_dip_explained_by_echoes_when_only_one_layout_ran() -> None:
    a = analyze(rows_from(curve(1024, [0.2, 0.9, 0.95, 0.9, 0.2]), miss="echo"))["needle"]
    assert "probably a layout artefact" in a.edge_check.verdict


def test_edge_dip_without_evidence_of_artefact_is_reported_as_real() -> None:
    a = analyze(rows_from(curve(1024, [0.2, 0.9, 0.95, 0.9, 0.2]), miss="other"))["needle"]
    assert "holds across layouts" in a.edge_check.verdict


def test_copies_of_the_first_item_are_flagged() -> None:
    rows = rows_from(curve(512, [1.0, 0.0, 0.0, 0.0, 0.0]), task="kv", miss="wrong_item")
    for r in rows:
        if not r["hit"]:
            r["copied_position"] = 0.0
    a = analyze(rows)["kv"]
    assert a.copy_first_rate == 1.0
    assert any("returned the first item" in f for f in a.findings)


def test_multi_needle_observations_count_per_fact_at_their_depths() -> None:
    rows = [
        {
            "key": f"k{i}",
            "kind": "trial",
            "task": "multi",
            "length": 512,
            "depth": depth,
            "layout": "plain",
            "hit": False,
            "miss": "other",
            "observations": [[0.0, True], [0.5, False], [1.0, True]],
        }
        for i in range(4)
        for depth in (0.0, 0.5, 1.0)
    ]
    a = analyze(rows)["multi"]
    assert a.table[(512, 0.5)] == Cell(0, 12)
    assert a.table[(512, 1.0)] == Cell(12, 12)


def test_closed_book_rows_are_the_control_not_the_curve() -> None:
    rows = rows_from(curve(512, [1.0] * 5))
    rows.append({"key": "cb", "kind": "closed_book", "task": "needle", "length": 0, "depth": None, "hit": True})
    a = analyze(rows)["needle"]
    assert a.closed_book == Cell(1, 1)
    assert a.lengths == (512,)


def test_profile_export_is_a_versioned_position_profile(tmp_path: Path) -> None:
    acc = {**curve(512, [0.9, 0.5, 0.3, 0.6, 1.0]), **curve(1024, [0.9, 0.5, 0.3, 0.6, 1.0])}
    a = analyze(rows_from(acc))["needle"]
    p = to_profile(a, model="m", settings={"mode": "aligned"})
    path = tmp_path / "profile.json"
    p.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "litm-position-profile" and data["version"] == 1
    assert data["model"] == "m" and data["name"] == "probe:needle"
    assert [pt["position"] for pt in data["points"]] == list(DEPTHS)
    meta = data["metadata"]
    assert meta["recommended_max_input_tokens"] == recommended_max_input_tokens(a)[0]
    assert meta["probe"]["dead_zone"]["depths"] == [0.25, 0.5, 0.75]
    assert {c["depth"]: c["n"] for c in meta["probe"]["profile_cells"]} == dict.fromkeys(DEPTHS, 40)
    loaded = PositionProfile.load(path)
    assert loaded.weight_at(0.5) == pytest.approx(0.3)
    # Placement consumes it: the best document goes to the best measured depth (the end).
    by_profile = PlacementOptions(strategy="profile", profile=loaded)
    assert place(["d1", "d2", "d3", "d4", "d5"], placement=by_profile).items[-1] == "d1"


def test_flat_profile_ties_break_toward_the_edges() -> None:
    a = analyze(rows_from(curve(512, [1.0] * 5)))["needle"]
    p = to_profile(a)
    order = place([f"d{i}" for i in range(1, 9)], "profile", placement=PlacementOptions(profile=p)).items
    assert order[-1] == "d1" and order[0] == "d2"  # pyramid-like, not rank 1 in a tied middle slot


def test_diff_compares_depth_by_depth_with_exact_tests() -> None:
    a = to_profile(analyze(rows_from(curve(1024, [1.0, 0.9, 0.9, 0.9, 1.0])))["needle"], model="A")
    b = to_profile(analyze(rows_from(curve(1024, [1.0, 0.3, 0.2, 0.3, 1.0])))["needle"], model="B")
    d = diff_profiles(a, b)
    by_depth = {row[0]: row for row in d.rows}
    assert by_depth[0.5][3] is not None and by_depth[0.5][3] < 0.001
    assert by_depth[0.0][3] == pytest.approx(1.0)
    text = d.to_text()
    assert "A = A (needle)" in text and "-0.70" in text and "*" in text
    plain = diff_profiles(PositionProfile.pyramid(), a)
    assert all(row[3] is None for row in plain.rows)  # no counts in a built-in profile: no p-values


def test_accuracy_table_lists_every_length_and_a_pooled_row() -> None:
    a = analyze(rows_from({**curve(512, [1.0] * 5), **curve(1024, [0.5] * 5)}, n=10))["needle"]
    table = accuracy_table(a).splitlines()
    assert len(table) == 4 and table[-1].split()[0] == "all"
    assert "1.00 [0.72,1.00]" in table[1] and "0.50 [0.24,0.76]" in table[2]


def test_dead_zone_export_keeps_a_strong_p_value() -> None:
    # Five fixed decimals turned a p of 2e-9 into 0.0 in the exported profile.
    zone = DeadZone(edge_depth=0.0, depths=(0.5,), p_values={0.5: 2.1e-9, 0.25: 0.0312})
    assert zone.to_dict()["p_values"] == {"0.5": 2.1e-9, "0.25": 0.0312}
