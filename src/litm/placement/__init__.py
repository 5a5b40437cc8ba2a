"""Placement: put ranked documents where the model looks, and say why.

The layer every other part of litm builds on. It reads the caller's documents (strings, dicts,
:class:`Doc`, LangChain / LlamaIndex / Haystack objects) as :class:`Doc` values, ranks them, and maps ranks
to slots with a :class:`Strategy` named by string (``"auto"``, ``"edges"``, ``"pyramid"``, ``"none"``,
``"reverse"``, ``"langchain"``, ``"profile"``, ``"random"``, or one made with :func:`register_strategy`);
:func:`place` returns a :class:`PlacementPlan` with the caller's own objects in the new order and a per-slot
explanation (its ``slots`` and ``dropped``). How to rank and place is one validated value,
:class:`PlacementOptions`, that every entry point of litm takes as ``placement=``. Position profiles
(:class:`PositionProfile`) describe how much a model attends to each relative position; the ``profile``
strategy places by a measured one. The default, ``auto``, places by the model's measured profile when one is
given or registered (:func:`register_profile`), else by ``edges``.

Example:
    >>> place(["d1", "d2", "d3", "d4", "d5", "d6"], "pyramid").items
    ('d2', 'd4', 'd6', 'd5', 'd3', 'd1')
    >>> opts = PlacementOptions(rank_by="score", higher_is_better=False)   # distances: lower is closer
    >>> place([("far", 0.9), ("near", 0.1)], placement=opts.replace(min_docs=0)).items[0]
    ('near', 0.1)
"""

from litm.errors import (
    AlreadyRegisteredError,
    DuplicateIdError,
    InvalidDocumentError,
    InvalidProfileError,
    InvalidScoreError,
    InvalidStrategyError,
    UnknownStrategyError,
)
from litm.placement._auto import register_profile
from litm.placement._documents import Doc
from litm.placement._options import PlacementOptions
from litm.placement._place import place
from litm.placement._plan import PlacementPlan
from litm.placement._profile import PositionProfile
from litm.placement._registry import register_strategy, strategy_names
from litm.placement._strategy import Strategy

__all__ = [
    "AlreadyRegisteredError",
    "Doc",
    "DuplicateIdError",
    "InvalidDocumentError",
    "InvalidProfileError",
    "InvalidScoreError",
    "InvalidStrategyError",
    "PlacementOptions",
    "PlacementPlan",
    "PositionProfile",
    "Strategy",
    "UnknownStrategyError",
    "place",
    "register_profile",
    "register_strategy",
    "strategy_names",
]
