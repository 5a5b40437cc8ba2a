"""Placement: put ranked documents where the model looks, and say why.

The layer every other part of litm builds on. It reads the caller's documents (strings, dicts,
:class:`Doc`, LangChain / LlamaIndex / Haystack objects) as :class:`Doc` values, ranks them
(:func:`rank`), and maps ranks to slots with a :class:`Strategy`; :func:`place` returns a
:class:`PlacementPlan` with the caller's own objects in the new order and a per-slot explanation.
Position profiles (:class:`PositionProfile`) describe how much a model attends to each relative
position; the ``profile`` strategy places by a measured one. The default, ``auto``, places by the model's
measured profile when one is given or registered (:func:`register_profile`), else by ``edges``.

Example:
    >>> place(["d1", "d2", "d3", "d4", "d5", "d6"], strategy="pyramid").items
    ('d2', 'd4', 'd6', 'd5', 'd3', 'd1')
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
from litm.placement._auto import AutoOrder, profile_for, register_profile, registered_profiles, unregister_profile
from litm.placement._documents import Doc, to_doc, to_docs
from litm.placement._place import place
from litm.placement._plan import PlacementPlan, SlotInfo
from litm.placement._profile import PositionProfile
from litm.placement._ranking import Dropped, Ranked, Ranking, rank
from litm.placement._registry import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    get_strategy,
    register_strategy,
    strategy_names,
    unregister_strategy,
)
from litm.placement._strategies import Edges, LangChainOrder, ProfileOrder, Pyramid, RandomOrder, RankOrder, Reverse
from litm.placement._strategy import DEFAULT_MIN_DOCS, Strategy

__all__ = [
    "DEFAULT_MIN_DOCS",
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "AlreadyRegisteredError",
    "AutoOrder",
    "Doc",
    "Dropped",
    "DuplicateIdError",
    "Edges",
    "InvalidDocumentError",
    "InvalidProfileError",
    "InvalidScoreError",
    "InvalidStrategyError",
    "LangChainOrder",
    "PlacementPlan",
    "PositionProfile",
    "ProfileOrder",
    "Pyramid",
    "RandomOrder",
    "RankOrder",
    "Ranked",
    "Ranking",
    "Reverse",
    "SlotInfo",
    "Strategy",
    "UnknownStrategyError",
    "get_strategy",
    "place",
    "profile_for",
    "rank",
    "register_profile",
    "register_strategy",
    "registered_profiles",
    "strategy_names",
    "to_doc",
    "to_docs",
    "unregister_profile",
    "unregister_strategy",
]
