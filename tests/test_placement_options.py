"""PlacementOptions: the placement options as one validated, frozen value that every entry point takes."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

import litm
from litm.budget import fit
from litm.errors import InvalidOptionError, InvalidOptionTypeError, UnknownStrategyError
from litm.placement import PlacementOptions, PositionProfile, place
from litm.prompt import PromptBuilder, build_prompt

SCORED = [{"id": f"d{i}", "text": f"passage {i}", "score": s} for i, s in enumerate([0.2, 0.9, 0.5, 0.7, 0.1])]
FLAT = {"rank_by", "higher_is_better", "dedup", "top_k", "min_docs", "profile", "model"}


def test_the_value_is_frozen_and_validated_where_it_is_made() -> None:
    opts = PlacementOptions(strategy="pyramid", rank_by="score", top_k=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.top_k = 4  # type: ignore[misc]
    with pytest.raises(UnknownStrategyError, match="unknown placement strategy 'middle'"):
        PlacementOptions(strategy="middle")
    with pytest.raises(InvalidOptionTypeError, match="higher_is_better must be True or False"):
        PlacementOptions(higher_is_better="no")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"unknown placement option\(s\) topk"):
        opts.replace(topk=2)
    with pytest.raises(InvalidOptionError, match="top_k must be a non-negative integer"):
        opts.replace(top_k=-1)


def test_the_shorthands_override_the_fields_of_the_value() -> None:
    opts = PlacementOptions(strategy="pyramid", rank_by="score", min_docs=0)
    assert place(SCORED, placement=opts).ranks == [2, 4, 5, 3, 1]
    assert place(SCORED, "edges", placement=opts) == place(SCORED, placement=opts.replace(strategy="edges"))
    assert place(SCORED, rank_by="input", placement=opts).ranks == place(SCORED, "pyramid").ranks
    with pytest.raises(InvalidOptionTypeError, match="placement must be a PlacementOptions, got dict"):
        place(SCORED, placement={"rank_by": "score"})  # type: ignore[arg-type]


def test_rank_by_auto_ranks_by_score_only_when_every_item_has_one() -> None:
    auto = PlacementOptions("none", rank_by="auto")
    assert [d["id"] for d in place(SCORED, placement=auto).items] == ["d1", "d3", "d2", "d0", "d4"]
    mixed = [*SCORED, {"id": "x", "text": "no score"}]
    assert [d["id"] for d in place(mixed, placement=auto).items] == [d["id"] for d in mixed]


def test_the_json_form_round_trips_and_a_strategy_object_is_refused() -> None:
    opts = PlacementOptions("profile", rank_by="score", dedup="id", profile=PositionProfile.recency(), model="local")
    assert PlacementOptions.from_dict(json.loads(json.dumps(opts.to_dict()))) == opts
    with pytest.raises(InvalidOptionTypeError, match="cannot be saved"):
        PlacementOptions(strategy=litm.Strategy()).to_dict()
    with pytest.raises(InvalidOptionError, match=r"unknown placement option\(s\) rankby"):
        PlacementOptions.from_dict({"rankby": "score"})


@pytest.mark.parametrize("function", [place, fit, build_prompt, PromptBuilder.build, PlacementOptions.of])
def test_no_entry_point_restates_the_options_flat(function: object) -> None:
    # Before: place took 9 parameters, fit 16 (seven of them the placement options), build_prompt a Mapping.
    params = set(inspect.signature(function).parameters)  # type: ignore[arg-type]
    assert not params & (FLAT - {"rank_by"}), params & FLAT
    assert len(params) <= 12


def test_fit_and_build_prompt_place_as_place_does() -> None:
    opts = PlacementOptions("pyramid", rank_by="score", top_k=4)
    kept = fit(SCORED, "Which?", PromptBuilder(), "openai:gpt-4o", max_input_tokens=10_000, placement=opts)
    assert kept.prompt.ids == [d["id"] for d in place(SCORED, placement=opts).items]
    assert build_prompt(SCORED, "Which?", placement=opts).ids == kept.prompt.ids
