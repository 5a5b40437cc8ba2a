"""The token gate: fit documents to a budget, compact agent history, guard SDK clients."""

from litm.budget.counting import Counter, as_counter
from litm.budget.fit import FitResult, fit
from litm.budget.guard import GuardedClient, guard
from litm.budget.history import Compaction, compact_history, extractive_summary
from litm.budget.limits import max_input_tokens_from

__all__ = [
    "Compaction",
    "Counter",
    "FitResult",
    "GuardedClient",
    "as_counter",
    "compact_history",
    "extractive_summary",
    "fit",
    "guard",
    "max_input_tokens_from",
]
