"""``auto``, the default strategy: a measured profile (given or registered for the model spec), else ``edges``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import litm
from litm.errors import InvalidOptionError, InvalidOptionTypeError, InvalidProfileError
from litm.placement import PlacementOptions, PositionProfile, register_profile
from litm.placement._auto import AutoOrder, profile_for, registered_profiles, unregister_profile
from litm.placement._strategies import Edges, ProfileOrder

# Best slot first, worst in the middle, a weak end: neither the edges nor the pyramid order.
QWEN_LIKE = PositionProfile.from_weights([0.39, 0.28, 0.24, 0.19, 0.18, 0.23, 0.25], name="qwen-like")
DOCS = [f"r{i}" for i in range(1, 8)]


@pytest.fixture
def spec() -> Iterator[str]:
    name = "local:test-auto-model"
    yield name
    unregister_profile(name)


def test_a_registered_profile_drives_auto_for_its_model_only(spec: str) -> None:
    assert profile_for(spec) is None
    assert register_profile(spec, QWEN_LIKE) is QWEN_LIKE and registered_profiles()[spec] is QWEN_LIKE
    plan = litm.place(DOCS, placement=PlacementOptions(model=spec))
    assert plan.strategy == "auto"
    assert (
        plan.ranks
        == litm.place(DOCS, "profile", placement=PlacementOptions(profile=QWEN_LIKE)).ranks
        != litm.place(DOCS, "edges").ranks
    )
    assert plan.note == f"auto: measured profile 'qwen-like' (registered for model {spec!r}): best rank to its " + (
        "highest-weight slot"
    )
    assert plan.profile_name == "qwen-like" and "1st-highest weight slot in the qwen-like profile" in plan.explain()
    # Another model (or none) has no measured profile: edges.
    other = litm.place(DOCS, placement=PlacementOptions(model="local:another"))
    assert other.ranks == litm.place(DOCS, "edges").ranks and other.note is not None and "edges" in other.note


def test_a_given_profile_wins_over_a_registered_one(spec: str) -> None:
    register_profile(spec, QWEN_LIKE)
    recency = PositionProfile.recency()
    plan = litm.place(DOCS, placement=PlacementOptions(profile=recency, model=spec))
    assert plan.ranks == [7, 6, 5, 4, 3, 2, 1] and plan.note is not None and "'recency' (given)" in plan.note


def test_a_profile_file_from_probe_or_bench_registers(spec: str, tmp_path: Path) -> None:
    path = tmp_path / "bench-profile-k10-fold0.json"
    QWEN_LIKE.save(path)
    assert register_profile(spec, path) == QWEN_LIKE
    assert AutoOrder(model=spec).arrange(7) == ProfileOrder(QWEN_LIKE).arrange(7)
    assert register_profile(spec, str(path)) == QWEN_LIKE
    committed = Path(__file__).resolve().parent.parent / "docs/results/bench-qwen05-nq-k10"
    measured = register_profile(spec, committed / "bench-profile-k10-fold0.json")
    # Qwen 0.5B's best measured slot is the first: auto puts rank 1 there, where pyramid puts it last.
    assert AutoOrder(model=spec).arrange(10)[0] == 0 and measured.slot_preference(10)[0] == 0


def test_below_min_docs_auto_keeps_rank_order_and_says_only_that() -> None:
    plan = litm.place(["a", "b", "c"])
    assert plan.ranks == [1, 2, 3] and plan.note == "3 document(s) is below min_docs=4: rank order kept"


def test_bad_registrations_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionTypeError, match="model spec must be a string"):
        register_profile(3, QWEN_LIKE)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="non-empty"):
        register_profile("  ", QWEN_LIKE)
    with pytest.raises(InvalidOptionTypeError, match="PositionProfile or a profile file"):
        register_profile("local:x", [0.9, 0.1])  # type: ignore[arg-type]
    with pytest.raises(InvalidProfileError, match="not found"):
        register_profile("local:x", tmp_path / "missing.json")
    with pytest.raises(InvalidOptionTypeError, match="profile must be a PositionProfile"):
        AutoOrder([0.9, 0.1])  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionTypeError):
        litm.place(DOCS, placement=PlacementOptions(model=5))  # type: ignore[arg-type]
    assert profile_for("local:x") is None


def test_auto_orders_like_its_inner_strategy_for_every_n() -> None:
    for n in range(0, 25):
        assert AutoOrder().arrange(n) == Edges().arrange(n)
        assert AutoOrder(QWEN_LIKE).arrange(n) == ProfileOrder(QWEN_LIKE).arrange(n)
    assert repr(AutoOrder()) == "AutoOrder(edges)" and repr(AutoOrder(QWEN_LIKE)) == "AutoOrder(profile='qwen-like')"
