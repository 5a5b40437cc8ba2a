"""Where :func:`~litm.budget.fit` takes its ranking and placement from: its own options, or the builder's.

Ranking decides what the budget drops (the lowest-ranked documents first), placement where the survivors
go; both must come from one place, or the gate can drop the best document while the prompt ranks by
score. ``fit`` takes the options itself. A :class:`~litm.prompt.PromptBuilder` that still carries the
deprecated ``strategy=`` / ``placement={...}`` settings is read as the source when ``fit`` is given none of
its own; giving both is an :class:`~litm.errors.InvalidOptionError`.

Example:
    >>> resolve_placement(None, rank_by="score").rank_by
    'score'
    >>> resolve_placement(None).strategy
    'auto'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from litm.errors import InvalidOptionError
from litm.placement import DEFAULT_STRATEGY, PositionProfile, Strategy
from litm.placement._ranking import Dedup, RankBy

__all__ = ["PLACEMENT_OPTIONS", "Placement", "resolve_placement"]

#: The ranking and placement options ``fit`` accepts (and reads from a builder's deprecated ``placement``).
PLACEMENT_OPTIONS = ("strategy", "rank_by", "higher_is_better", "dedup", "top_k", "min_docs", "profile")


@dataclass(frozen=True)
class Placement:
    """The resolved options (``min_docs=None``: the strategy's own threshold, as in :func:`~litm.placement.place`)."""

    strategy: str | Strategy = DEFAULT_STRATEGY
    rank_by: RankBy = "input"
    higher_is_better: bool = True
    dedup: Dedup | None = None
    top_k: int | None = None
    min_docs: int | None = None
    profile: PositionProfile | None = None


def builder_placement(builder: Any) -> dict[str, Any]:
    """The deprecated placement settings a builder carries (``strategy`` and ``placement``), or ``{}``."""
    settings: dict[str, Any] = {}
    strategy = getattr(builder, "strategy", None)
    if strategy is not None:
        settings["strategy"] = strategy
    extra = getattr(builder, "placement", None)
    if isinstance(extra, Mapping):
        settings.update(extra)
    return settings


def resolve_placement(builder: Any, **given: Any) -> Placement:
    """The ranking and placement to use; ``given`` holds ``fit``'s own options (``None`` = not given)."""
    unknown = sorted(set(given) - set(PLACEMENT_OPTIONS))
    if unknown:
        raise InvalidOptionError(f"unknown placement option(s): {', '.join(unknown)}")
    own = {k: v for k, v in given.items() if v is not None}
    carried = builder_placement(builder)
    if own and carried:
        raise InvalidOptionError(
            f"placement is set twice: on the builder ({_describe(carried)}) and on fit ({_describe(own)}); "
            "set it in one place (on fit; the builder's strategy= and placement= are deprecated)"
        )
    if carried:
        # The builder's deprecated settings, applied by fit; "no strategy" there meant input order kept.
        return Placement(
            strategy=carried.get("strategy", "none"),
            rank_by=carried.get("rank_by", "input"),
            higher_is_better=carried.get("higher_is_better", True),
            dedup=carried.get("dedup"),
            top_k=carried.get("top_k"),
            min_docs=carried.get("min_docs"),
            profile=carried.get("profile"),
        )
    return Placement(**own)


def _describe(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in options.items())
