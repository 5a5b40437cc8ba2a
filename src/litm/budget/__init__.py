"""The token gate: fit documents to a budget, compact agent history, guard SDK clients.

Every count goes through :func:`~litm.models.tokenizers.count_request` (or the tokenizer's own text count)
and says whether it is exact; an approximate count carries a safety margin (:mod:`litm.budget._margin`),
and what the gate promises is that the bound ``ceil(count x (1 + margin))`` fits the budget.
"""

from litm.budget._counting import Counter, as_counter, as_tokenizer
from litm.budget._fit import FitResult, fit
from litm.budget._guard import Call, GuardedClient, SpendStep, Step, TokenGate, guard, spend_key
from litm.budget._history import Compaction, compact_history, compact_request, extractive_summary
from litm.budget._limits import max_input_tokens_from
from litm.errors import ContextBudgetExceeded, UngatedRequestError

__all__ = [
    "Call",
    "Compaction",
    "ContextBudgetExceeded",
    "Counter",
    "FitResult",
    "GuardedClient",
    "SpendStep",
    "Step",
    "TokenGate",
    "UngatedRequestError",
    "as_counter",
    "as_tokenizer",
    "compact_history",
    "compact_request",
    "extractive_summary",
    "fit",
    "guard",
    "max_input_tokens_from",
    "spend_key",
]
