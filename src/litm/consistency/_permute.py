"""The orders of the documents across the calls: seeded, distinct while distinct ones remain.

Call 0 keeps the documents in the order given (``keep_first=True``, the default): the caller's order is usually
the retriever's or a placement's, so the first call is exactly the prompt one would have sent without
self-consistency, and a tie in the vote goes to it. The other calls draw uniformly random permutations from
``random.Random(seed)``, skipping any order already used, so the same seed gives the same orders on every
machine. ``n`` documents have only ``n!`` orders: asking for more calls than that gives each order once.

Example:
    >>> permutations(3, 4, seed=1)
    ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1))
    >>> len(permutations(2, 5, seed=0))   # only 2! = 2 orders exist
    2
"""

from __future__ import annotations

import math
import random

from litm.errors import InvalidOptionError, InvalidOptionTypeError

__all__ = ["DEFAULT_CALLS", "MAX_CALLS", "check_calls", "permutations"]

#: Calls when none are given: Tang et al. report most of the gain by 5 to 10 permutations.
DEFAULT_CALLS = 5
#: The most calls one question may make: each call is a full prompt, so a typo (500 for 5) would be costly.
MAX_CALLS = 32


def check_calls(calls: object) -> int:
    """``calls`` as an int in 1..:data:`MAX_CALLS`, else a typed error."""
    if isinstance(calls, bool) or not isinstance(calls, int):
        raise InvalidOptionTypeError(f"calls must be an integer, got {type(calls).__name__}")
    if not 1 <= calls <= MAX_CALLS:
        raise InvalidOptionError(f"calls must be between 1 and {MAX_CALLS}, got {calls}")
    return calls


def _orders(n: int) -> float:
    # n! grows past any call count quickly; above 12 documents there are always enough orders.
    return float(math.factorial(n)) if n <= 12 else math.inf


def permutations(n: int, calls: int, *, seed: int = 0, keep_first: bool = True) -> tuple[tuple[int, ...], ...]:
    """``min(calls, n!)`` distinct orders of ``range(n)``: the identity first (``keep_first``), then seeded shuffles.

    Raises :class:`~litm.errors.InvalidOptionError` for ``n < 1`` or ``calls`` outside 1..:data:`MAX_CALLS`.

    >>> permutations(4, 2, seed=7, keep_first=False) == permutations(4, 2, seed=7, keep_first=False)
    True
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise InvalidOptionTypeError(f"n must be an integer, got {type(n).__name__}")
    if n < 1:
        raise InvalidOptionError(f"permuting needs at least one document, got {n}")
    check_calls(calls)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidOptionTypeError(f"seed must be an integer, got {type(seed).__name__}")
    if not isinstance(keep_first, bool):
        raise InvalidOptionTypeError(f"keep_first must be True or False, got {keep_first!r}")
    want = int(min(calls, _orders(n)))
    rng = random.Random(seed)
    out: list[tuple[int, ...]] = [tuple(range(n))] if keep_first else []
    seen = set(out)
    while len(out) < want:
        order = list(range(n))
        rng.shuffle(order)
        drawn = tuple(order)
        if drawn not in seen:
            seen.add(drawn)
            out.append(drawn)
    return tuple(out)
