"""The settings every framework component shares: how to rank and place (:func:`placing`), and a budget.

The LangChain, LlamaIndex and Haystack components are thin shells over these two values: each shell reads
its framework's conventions into them, and the steps in :mod:`litm.integrations._steps` do the work. Both are
frozen, validated on construction (a bad value raises a one-line typed error naming it) and JSON-ready
(``to_dict`` / ``from_dict``), which is what a saved Haystack pipeline or a LlamaIndex ``to_dict`` stores.

``rank_by`` adds ``"auto"`` to litm's two rankings: by score when every document has one, by the given order
(the retriever's) otherwise. A missing score is never read as 0.

Example:
    >>> p = placing({"strategy": "edges", "rank_by": "score", "higher_is_better": False})
    >>> placing(placing_dict(p)) == p
    True
    >>> placing({}).ranking([("a", 0.3), "b"]), placing({}).ranking([("a", 0.3), ("b", 0.1)])
    ('input', 'score')
    >>> placing({"top_k": -1})
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: top_k must be a non-negative integer, got -1
    >>> Budget("openai:gpt-4o", max_input_tokens=0)
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: max_input_tokens must be a positive integer, got 0
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from litm.budget._counting import as_tokenizer
from litm.errors import InvalidOptionError, InvalidOptionTypeError, UnsupportedTypeError
from litm.models.tokenizers import Tokenizer
from litm.placement import PlacementOptions, PositionProfile
from litm.placement._options import RankByOption
from litm.placement._ranking import check_count
from litm.placement._registry import DEFAULT_STRATEGY

__all__ = [
    "COUNT_AS",
    "PLACING_FIELDS",
    "RANK_BY",
    "Budget",
    "CountAs",
    "RankByOption",
    "as_profile",
    "component_placement",
    "known_options",
    "no_budget",
    "optional_budget",
    "placing",
    "placing_dict",
]

#: ``auto``: by score when every document has one, else by the given order; ``input``; ``score``.
RANK_BY: tuple[str, ...] = ("auto", "input", "score")
CountAs = Literal["openai", "anthropic", "text"]
#: What a budget counts: the OpenAI chat request the prompt's messages make (chat overhead included), the
#: Anthropic request, or the plain-text prompt (a completion model).
COUNT_AS: tuple[str, ...] = ("openai", "anthropic", "text")

#: What a component's ``profile=`` takes: a measured profile, its JSON form (a mapping) or a profile file's path.
ProfileLike = PositionProfile | Mapping[str, object] | str | Path


def as_profile(value: object) -> PositionProfile | None:
    """A profile from a :class:`PositionProfile`, its JSON form (a mapping) or the path of a profile file.

    >>> as_profile({"weights": [0.9, 0.4, 0.8]}).slot_weights(3)
    [0.9, 0.4, 0.8]
    >>> as_profile(3)
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionTypeError: profile must be a PositionProfile, a profile dict or a path, got int
    """
    if value is None or isinstance(value, PositionProfile):
        return value
    if isinstance(value, Mapping):
        return PositionProfile.from_dict(value)
    if isinstance(value, (str, Path)):
        return PositionProfile.load(value)
    raise InvalidOptionTypeError(
        f"profile must be a PositionProfile, a profile dict or a path, got {type(value).__name__}"
    )


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidOptionTypeError(f"{name} must be True or False, got {value!r}")
    return value


def _check_choice(name: str, value: object, choices: Sequence[str | None]) -> None:
    if value not in choices:
        shown = ", ".join(repr(c) for c in choices)
        raise InvalidOptionError(f"{name} must be one of {shown}, got {value!r}")


#: The placement settings a component takes and saves (those of :class:`~litm.placement.PlacementOptions` but
#: ``model``: a component is not bound to one model).
PLACING_FIELDS: tuple[str, ...] = ("strategy", "rank_by", "higher_is_better", "dedup", "top_k", "min_docs", "profile")


def placing(settings: Mapping[str, object], owner: str = "placement") -> PlacementOptions:
    """A component's placement settings as a validated :class:`~litm.placement.PlacementOptions`.

    ``rank_by`` defaults to ``"auto"`` (by score when every document has one); ``strategy`` must be a registered
    name, so that the setting can be saved; ``profile`` may be a profile, its dict or a file path.

    >>> placing({"strategy": "edges", "rank_by": "score"}).rank_by
    'score'
    >>> placing({"stratgy": "edges"}, "LitmReorder")
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: LitmReorder: unknown option(s) stratgy; known: dedup, higher_is_better, ...
    """
    values = dict(known_options(PLACING_FIELDS, settings, owner))
    strategy = values.get("strategy", DEFAULT_STRATEGY)
    if not isinstance(strategy, str):
        raise InvalidOptionTypeError(
            f"strategy must be a registered strategy name, got {type(strategy).__name__} "
            "(register a custom Strategy with litm.placement.register_strategy)"
        )
    values.setdefault("rank_by", "auto")
    values["profile"] = as_profile(values.get("profile"))
    return PlacementOptions.from_dict(values)


def component_placement(
    owner: str, placement: object, strategy: object = None, default: PlacementOptions | None = None
) -> PlacementOptions:
    """A component's placement: ``placement`` (``default`` when None) with the ``strategy`` shorthand applied.

    ``placement`` must be a :class:`~litm.placement.PlacementOptions` (anything else is an
    :class:`~litm.errors.UnsupportedTypeError`); the strategy must be a registered name, so that the component
    can be saved. ``default`` is the component's own (its framework's score convention), used only when no
    ``placement`` is given: a given one is taken as it is.

    >>> component_placement("LitmReorder", PlacementOptions(top_k=2), "edges").strategy
    'edges'
    >>> component_placement("LitmReorder", {"strategy": "edges"})
    Traceback (most recent call last):
    ...
    litm.errors.UnsupportedTypeError: LitmReorder: placement must be a litm.placement.PlacementOptions, got dict
    """
    if placement is not None and not isinstance(placement, PlacementOptions):
        raise UnsupportedTypeError(
            f"{owner}: placement must be a litm.placement.PlacementOptions, got {type(placement).__name__}"
        )
    if strategy is not None and not isinstance(strategy, str):
        raise InvalidOptionTypeError(
            f"{owner}: strategy must be a registered strategy name, got {type(strategy).__name__} "
            "(register a custom Strategy with litm.placement.register_strategy)"
        )
    given = placement if placement is not None else default
    options = PlacementOptions.of(given, strategy=strategy)
    if not isinstance(options.strategy, str):
        raise InvalidOptionTypeError(
            f"{owner}: the placement's strategy must be a registered strategy name, got "
            f"{type(options.strategy).__name__}, which cannot be saved (register it with "
            "litm.placement.register_strategy)"
        )
    return options


def placing_dict(options: PlacementOptions) -> dict[str, Any]:
    """The saved form of a component's placement settings (JSON values, the profile in its own form)."""
    saved = options.to_dict()
    return {name: saved[name] for name in PLACING_FIELDS}


@dataclass(frozen=True)
class Budget:
    """A token budget: the tokenizer (a model spec), the model's input limit, and what is counted.

    ``tokenizer`` is a spec string, so that it can be saved: ``"openai:gpt-4o"`` counts exactly and
    offline (o200k), ``"local"`` with the embedded model's own tokenizer, ``"local:/path/model.gguf"`` with
    that GGUF's. The budget is ``max_input_tokens - reserve_output_tokens``; ``count_as`` says what is
    counted (:data:`COUNT_AS`).
    """

    tokenizer: str
    max_input_tokens: int
    reserve_output_tokens: int = 0
    count_as: CountAs = "openai"

    def __post_init__(self) -> None:
        if not isinstance(self.tokenizer, str) or not self.tokenizer.strip():
            raise InvalidOptionTypeError(
                f"tokenizer must be a model spec string such as 'openai:gpt-4o', got {self.tokenizer!r}"
            )
        limit = self.max_input_tokens
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise InvalidOptionError(f"max_input_tokens must be a positive integer, got {limit!r}")
        check_count("reserve_output_tokens", self.reserve_output_tokens)
        _check_choice("count_as", self.count_as, COUNT_AS)

    @property
    def format(self) -> str:
        """The ``format=`` :func:`litm.budget.fit` counts in."""
        return self.count_as

    def load_tokenizer(self) -> Tokenizer:
        """The tokenizer, loaded once per process and spec (a local GGUF is not read again per call)."""
        return _tokenizer(self.tokenizer)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Budget:
        return cls(**known_options(cls, data, "Budget"))


def optional_budget(
    owner: str,
    tokenizer: object = None,
    max_input_tokens: object = None,
    reserve_output_tokens: object = 0,
    count_as: object = "openai",
) -> Budget | None:
    """A :class:`Budget` when ``tokenizer`` and ``max_input_tokens`` are given, None when neither is.

    >>> optional_budget("LitmPrompt") is None, optional_budget("LitmPrompt", "openai:gpt-4o", 8000).tokenizer
    (True, 'openai:gpt-4o')
    >>> optional_budget("LitmPrompt", max_input_tokens=8000)
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: LitmPrompt: a token budget needs both tokenizer= and max_input_tokens=; ...
    """
    if tokenizer is None and max_input_tokens is None:
        return None
    if tokenizer is None or max_input_tokens is None:
        missing = "tokenizer" if tokenizer is None else "max_input_tokens"
        raise InvalidOptionError(
            f"{owner}: a token budget needs both tokenizer= and max_input_tokens=; {missing} is missing"
        )
    return Budget(tokenizer, max_input_tokens, reserve_output_tokens, count_as)  # type: ignore[arg-type]


def no_budget(owner: str) -> InvalidOptionError:
    """The error of a component that cannot work without a budget (a trimmer) and was given none."""
    return InvalidOptionError(
        f"{owner} needs a token budget: tokenizer= (a model spec such as 'openai:gpt-4o') and max_input_tokens="
    )


@functools.lru_cache(maxsize=8)
def _tokenizer(spec: str) -> Tokenizer:
    return as_tokenizer(spec)


def known_options(cls: type | tuple[str, ...], data: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """``data`` as keyword arguments of the dataclass ``cls`` (or of these names), refusing names it does not have.

    >>> known_options(PLACING_FIELDS, {"stratgy": "edges"}, "LitmReorder")
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: LitmReorder: unknown option(s) stratgy; known: dedup, higher_is_better, ...
    """
    if not isinstance(data, Mapping):
        raise InvalidOptionTypeError(f"{owner}: settings must be a mapping, got {type(data).__name__}")
    names = set(cls) if isinstance(cls, tuple) else {f.name for f in fields(cls)}
    unknown = sorted(set(map(str, data)) - names)
    if unknown:
        raise InvalidOptionError(f"{owner}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    return dict(data)
