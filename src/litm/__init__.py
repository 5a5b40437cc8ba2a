"""litm: make LLM and RAG applications robust to the Lost-in-the-Middle effect.

Quick start:
    >>> import litm
    >>> litm.place(["best", "2nd", "3rd", "4th", "5th"], strategy="pyramid").items
    ['2nd', '4th', '5th', '3rd', 'best']
"""

from litm._version import __version__
from litm.documents import Doc, to_doc, to_docs
from litm.errors import (
    DuplicateIdError,
    InputFormatError,
    InvalidDocumentError,
    InvalidProfileError,
    InvalidScoreError,
    LitmError,
    UnknownStrategyError,
)
from litm.placement import (
    STRATEGIES,
    Edges,
    LangChainOrder,
    ProfileOrder,
    Pyramid,
    RandomOrder,
    RankOrder,
    Reverse,
    Strategy,
    get_strategy,
    place,
    register_strategy,
)
from litm.plan import PlacementPlan, SlotInfo
from litm.profile import PositionProfile
from litm.ranking import rank

__all__ = [
    "STRATEGIES",
    "Doc",
    "DuplicateIdError",
    "Edges",
    "InputFormatError",
    "InvalidDocumentError",
    "InvalidProfileError",
    "InvalidScoreError",
    "LangChainOrder",
    "LitmError",
    "PlacementPlan",
    "PositionProfile",
    "ProfileOrder",
    "Pyramid",
    "RandomOrder",
    "RankOrder",
    "Reverse",
    "SlotInfo",
    "Strategy",
    "UnknownStrategyError",
    "__version__",
    "get_strategy",
    "place",
    "rank",
    "register_strategy",
    "to_doc",
    "to_docs",
]
