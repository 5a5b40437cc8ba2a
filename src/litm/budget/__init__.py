"""The token gate: fit documents to a budget, compact agent history, guard SDK clients.

Every count goes through :func:`~litm.models.tokenizers.count_request` (or the tokenizer's own text count)
and says whether it is exact; an approximate count carries a safety margin (:mod:`litm.budget._margin`),
and what the gate promises is that the bound ``ceil(count x (1 + margin))`` fits the budget.
"""

from litm.budget._counting import Counter, FunctionTokenizer, as_counter, as_tokenizer
from litm.budget._fit import FitResult, fit
from litm.budget._guard import Attempt, Call, GuardedClient, Pipeline, SpendStep, Step, TokenGate, guard, spend_key
from litm.budget._history import Compaction, compact_history, compact_request, extractive_summary
from litm.budget._limits import max_input_tokens_from
from litm.budget._margin import margin_of, upper_of

__all__ = [
    "Attempt",
    "Call",
    "Compaction",
    "Counter",
    "FitResult",
    "FunctionTokenizer",
    "GuardedClient",
    "Pipeline",
    "SpendStep",
    "Step",
    "TokenGate",
    "as_counter",
    "as_tokenizer",
    "compact_history",
    "compact_request",
    "extractive_summary",
    "fit",
    "guard",
    "margin_of",
    "max_input_tokens_from",
    "spend_key",
    "upper_of",
]
