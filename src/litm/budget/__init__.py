"""The token gate: fit documents to a budget, compact agent history, guard SDK clients.

Every count goes through :func:`~litm.models.tokenizers.count_request` (or the tokenizer's own text count)
and says whether it is exact; an approximate count carries a safety margin (:mod:`litm.budget._margin`),
and what the gate promises is that the bound ``ceil(count x (1 + margin))`` fits the budget.
"""

from litm.budget._fit import FitResult, fit
from litm.budget._guard import SpendStep, Step, TokenGate, guard, spend_key
from litm.budget._history import compact_history
from litm.errors import ContextBudgetExceeded, UngatedRequestError

__all__ = [
    "ContextBudgetExceeded",
    "FitResult",
    "SpendStep",
    "Step",
    "TokenGate",
    "UngatedRequestError",
    "compact_history",
    "fit",
    "guard",
    "spend_key",
]
