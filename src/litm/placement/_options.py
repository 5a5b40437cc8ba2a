"""``PlacementOptions``: how to rank and place, as one validated value that every entry point takes.

``place``, ``rank``, ``Strategy.place``, ``litm.budget.fit``, ``litm.prompt.build_prompt``, ``litm.rag.Pipeline``
and the framework components all take the same options; they travel as this one frozen value
(``placement=``), so a setting is validated once, where it is made, and means the same everywhere. The common
calls stay short: ``place(docs, "edges")`` and ``rank_by="score"`` are shorthands for the two options most
calls set, and override the matching field of a ``placement=`` given beside them.

Example:
    >>> opts = PlacementOptions(rank_by="score", higher_is_better=False, top_k=3)
    >>> opts.replace(strategy="pyramid").strategy, opts.strategy
    ('pyramid', 'auto')
    >>> PlacementOptions.of(opts, rank_by="input").rank_by
    'input'
    >>> PlacementOptions(rank_by="best")
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: rank_by must be 'auto', 'input' or 'score', got 'best'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from litm.errors import InvalidOptionError, InvalidOptionTypeError, UnknownStrategyError
from litm.placement._documents import to_docs
from litm.placement._profile import PositionProfile
from litm.placement._ranking import Dedup, RankBy, check_count
from litm.placement._registry import DEFAULT_STRATEGY, get_strategy, is_strategy_name, strategy_names
from litm.placement._strategy import Strategy

__all__ = ["PlacementOptions", "RankByOption"]

#: ``rank_by`` as an option: ``"input"`` trusts the given order, ``"score"`` sorts by score, ``"auto"`` sorts by
#: score when every item has one and trusts the given order otherwise (a missing score is never read as 0).
RankByOption = Literal["auto", "input", "score"]
_RANK_BY = ("auto", "input", "score")
_T = TypeVar("_T")
_DEDUP = (None, "id", "content")


@dataclass(frozen=True, slots=True)
class PlacementOptions:
    """The ranking and placement options, validated on construction (a bad value is a typed error naming it).

    ``strategy``: a registered name (``"auto"``, ``"edges"``, ``"pyramid"``, ``"none"``, ... plugins
    included) or a :class:`~litm.placement.Strategy`. ``rank_by``: ``"input"`` (trust the given order),
    ``"score"`` (sort by score, ``higher_is_better=False`` for distances) or ``"auto"`` (by score when every
    item has one). ``dedup``: ``None`` (a repeated id is an error), ``"id"`` or ``"content"`` (keep the
    best-ranked copy). ``top_k``: keep the best ``k``. ``min_docs``: below it the rank order is kept (None: the
    strategy's own, 4 for the built-ins). ``profile``: a measured position profile, which drives ``profile`` and
    ``auto`` and the slot weights a plan reports. ``model``: a model spec, so ``auto`` finds a profile
    registered for it.

    Example:
        >>> PlacementOptions(top_k=-1)
        Traceback (most recent call last):
        ...
        litm.errors.InvalidOptionError: top_k must be a non-negative integer, got -1
    """

    strategy: str | Strategy = DEFAULT_STRATEGY
    rank_by: RankByOption = "input"
    higher_is_better: bool = True
    dedup: Dedup | None = None
    top_k: int | None = None
    min_docs: int | None = None
    profile: PositionProfile | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        strategy = self.strategy
        if isinstance(strategy, str):
            if not is_strategy_name(strategy):
                raise UnknownStrategyError(
                    f"unknown placement strategy {strategy!r}; choose from {', '.join(sorted(strategy_names()))}"
                )
        elif not isinstance(strategy, Strategy):
            raise UnknownStrategyError(
                f"unknown placement strategy {strategy!r}: give a strategy name or a Strategy, "
                f"not a {type(strategy).__name__}"
            )
        if self.rank_by not in _RANK_BY:
            raise InvalidOptionError(f"rank_by must be 'auto', 'input' or 'score', got {self.rank_by!r}")
        if not isinstance(self.higher_is_better, bool):
            raise InvalidOptionTypeError(f"higher_is_better must be True or False, got {self.higher_is_better!r}")
        if self.dedup not in _DEDUP:
            raise InvalidOptionError(f"dedup must be None, 'id' or 'content', got {self.dedup!r}")
        if self.top_k is not None:
            check_count("top_k", self.top_k)
        if self.min_docs is not None:
            check_count("min_docs", self.min_docs)
        if self.profile is not None and not isinstance(self.profile, PositionProfile):
            raise InvalidOptionTypeError(f"profile must be a PositionProfile, got {type(self.profile).__name__}")
        if self.model is not None and not isinstance(self.model, str):
            raise InvalidOptionTypeError(f"model must be a model spec string, got {type(self.model).__name__}")

    @classmethod
    def of(
        cls,
        placement: PlacementOptions | None = None,
        *,
        strategy: str | Strategy | None = None,
        rank_by: RankByOption | None = None,
    ) -> PlacementOptions:
        """``placement`` (default: the defaults) with the ``strategy`` / ``rank_by`` shorthands applied when given.

        What every entry point does with its ``placement=`` and shorthand arguments; a ``placement`` that is not
        a :class:`PlacementOptions` is an :class:`~litm.errors.InvalidOptionTypeError`.

        Example:
            >>> PlacementOptions.of(strategy="edges").strategy
            'edges'
        """
        if placement is None:
            placement = _DEFAULT if strategy is None and rank_by is None else cls()
        elif not isinstance(placement, PlacementOptions):
            raise InvalidOptionTypeError(
                f"placement must be a PlacementOptions, got {type(placement).__name__} "
                "(litm.placement.PlacementOptions(rank_by=..., ...))"
            )
        if strategy is None and rank_by is None:
            return placement
        return cls(
            strategy=placement.strategy if strategy is None else strategy,
            rank_by=placement.rank_by if rank_by is None else rank_by,
            higher_is_better=placement.higher_is_better,
            dedup=placement.dedup,
            top_k=placement.top_k,
            min_docs=placement.min_docs,
            profile=placement.profile,
            model=placement.model,
        )

    def replace(self, **changes: object) -> PlacementOptions:
        """A copy with ``changes`` applied and validated; an unknown option name is refused.

        Example:
            >>> PlacementOptions().replace(top_k=2).top_k
            2
        """
        unknown = sorted(set(changes) - set(_FIELDS))
        if unknown:
            raise InvalidOptionError(f"unknown placement option(s) {', '.join(unknown)}; known: {', '.join(_FIELDS)}")
        return _build({**{name: getattr(self, name) for name in _FIELDS}, **changes})

    def resolve(self) -> Strategy:
        """The :class:`~litm.placement.Strategy` these options name (``profile`` and ``model`` applied)."""
        return get_strategy(self.strategy, profile=self.profile, model=self.model)

    def ranking(self, items: Sequence[object]) -> RankBy:
        """The ranking ``items`` get: ``rank_by`` itself, or for ``"auto"`` the one their scores allow.

        Example:
            >>> PlacementOptions(rank_by="auto").ranking([("a", 0.3), "b"])
            'input'
        """
        if self.rank_by != "auto":
            return self.rank_by
        docs = to_docs(items)
        return "score" if docs and all(d.score is not None for d in docs) else "input"

    def to_dict(self) -> dict[str, object]:
        """The JSON form (the profile in its own form); a :class:`~litm.placement.Strategy` object cannot be saved.

        Example:
            >>> PlacementOptions.from_dict(PlacementOptions(rank_by="score").to_dict()).rank_by
            'score'
        """
        if not isinstance(self.strategy, str):
            raise InvalidOptionTypeError(
                f"a {type(self.strategy).__name__} strategy object cannot be saved; pass the strategy by name "
                "(register it with litm.placement.register_strategy)"
            )
        out: dict[str, object] = {name: getattr(self, name) for name in _FIELDS}
        out["profile"] = None if self.profile is None else self.profile.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: object) -> PlacementOptions:
        """The options :meth:`to_dict` wrote; an unknown key is refused (a misspelt one would silently default)."""
        if not isinstance(data, Mapping):
            raise InvalidOptionTypeError(f"placement options must be a JSON object, got {type(data).__name__}")
        unknown = sorted(set(map(str, data)) - set(_FIELDS))
        if unknown:
            raise InvalidOptionError(f"unknown placement option(s) {', '.join(unknown)}; known: {', '.join(_FIELDS)}")
        values = dict(data)
        if isinstance(values.get("profile"), Mapping):
            values["profile"] = PositionProfile.from_dict(values["profile"])
        return _build(values)


def _build(values: Mapping[str, object]) -> PlacementOptions:
    """``PlacementOptions(**values)``: the value validates each option itself, with a typed error."""
    return _construct(PlacementOptions, values)


def _construct(cls: type[_T], values: Mapping[str, object]) -> _T:
    return cls(**values)


_FIELDS = tuple(f.name for f in dataclasses.fields(PlacementOptions))
# Shared by every call that gives no options: the defaults are validated once.
_DEFAULT = PlacementOptions()
