"""litm: make LLM and RAG applications robust to the Lost-in-the-Middle effect.

Quick start:
    >>> import litm
    >>> litm.place(["best", "2nd", "3rd", "4th", "5th"], strategy="pyramid").items
    ['2nd', '4th', '5th', '3rd', 'best']
"""

from litm._version import __version__
from litm.budget import compact_history, fit, guard
from litm.errors import (
    AlreadyRegisteredError,
    ContextBudgetExceeded,
    ContextWindowExceededError,
    DuplicateIdError,
    InputFormatError,
    InvalidDocumentError,
    InvalidProfileError,
    InvalidScoreError,
    LitmError,
    MissingDependencyError,
    ModelError,
    ModelNotFoundError,
    PromptError,
    UnknownModelSpecError,
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
from litm.placement.documents import Doc, to_doc, to_docs
from litm.placement.plan import PlacementPlan, SlotInfo
from litm.placement.profile import PositionProfile
from litm.placement.ranking import rank
from litm.prompt import Prompt, PromptBuilder, build_prompt, parse_citations

__all__ = [
    "STRATEGIES",
    "AlreadyRegisteredError",
    "ContextBudgetExceeded",
    "ContextWindowExceededError",
    "Doc",
    "DuplicateIdError",
    "Edges",
    "InputFormatError",
    "InvalidDocumentError",
    "InvalidProfileError",
    "InvalidScoreError",
    "LangChainOrder",
    "LitmError",
    "MissingDependencyError",
    "ModelError",
    "ModelNotFoundError",
    "PlacementPlan",
    "PositionProfile",
    "ProfileOrder",
    "Prompt",
    "PromptBuilder",
    "PromptError",
    "Pyramid",
    "RandomOrder",
    "RankOrder",
    "Reverse",
    "SlotInfo",
    "Strategy",
    "UnknownModelSpecError",
    "UnknownStrategyError",
    "__version__",
    "build_prompt",
    "compact_history",
    "fit",
    "get_strategy",
    "guard",
    "parse_citations",
    "place",
    "rank",
    "register_strategy",
    "to_doc",
    "to_docs",
]
