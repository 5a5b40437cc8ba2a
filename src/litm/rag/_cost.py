"""What an answer cost: the model call priced by litm's price table (:mod:`litm.spend`), or None with the reason.

Only the providers the table covers are priced; a local model (llama.cpp) or a server of your own has no
price, and an unknown model is reported as unknown, never as free.
"""

from __future__ import annotations

from litm.errors import PriceUnknownError
from litm.models import Completion
from litm.spend import price_completion

__all__ = ["price"]

# Providers whose models litm's price table knows; other backends (llama.cpp, servers) have no price.
_PRICED = ("openai", "anthropic")


def price(completion: Completion, spec: str) -> tuple[int | None, str]:
    """What ``completion`` cost in micro-dollars by litm's price table, or None, with a note saying why.

    >>> price(Completion("Paris", 1000, 10, 0.1, "stop", model="gpt-4o-mini"), "openai:gpt-4o-mini")
    (156, 'priced by the litm.spend price table')
    >>> price(Completion("Paris", 1000, 10, 0.1, "stop", model="gemma3-270m"), "local")
    (None, 'no price for local models: they run on your machine')
    """
    scheme = spec.partition(":")[0]
    if scheme not in _PRICED:
        why = ": they run on your machine" if scheme == "local" else ""
        return None, f"no price for {scheme} models{why}"
    try:
        return price_completion(completion, provider=scheme), "priced by the litm.spend price table"
    except PriceUnknownError as exc:
        return None, str(exc)
