"""Exact-length haystacks: whole sentences only, needles at sentence boundaries, length exact in tokens.

The probe states a context length in the model's own tokens, so the prompt must be exactly that long.
:func:`build_exact` takes whole filler sentences from a stream until the budget is nearly spent, then
looks a little further down the stream for one to three sentences whose token costs add up to exactly
what is left, inserts the needles at the sentence boundaries nearest their depths, counts the rendered
prompt with the model's tokenizer and corrects the budget until the count is exact (a merge across a
boundary can move it by a token). The filler does not depend on the depths, so prompts that differ only
in where the needle sits share their prefix up to the needle: the runner exploits that for KV reuse.

Example:
    >>> from litm.probe._corpus import Unit
    >>> units = [Unit(" One two.", 0), Unit(" Three four.", 1)]
    >>> placed, depths = insert_units(units, [2, 2], [(1.0, Unit(" Needle."))])
    >>> text_of(placed), depths
    ('One two. Three four. Needle.', (1.0,))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from litm.errors import ProbeError
from litm.probe._corpus import Unit

__all__ = [
    "BuiltHaystack",
    "TokenCounter",
    "UnitCoster",
    "build_exact",
    "fill_exact",
    "filler_budget",
    "insert_units",
    "text_of",
]

TokenCounter = Callable[[str], int]

# Greedy filling stops this many tokens short of the budget; the rest is matched exactly from the pool.
_SLACK = 96
_POOL = 400
_MAX_FIXUPS = 12


class UnitCoster:
    """Token cost of a unit in the model's tokenizer, cached; ``count("")`` (a BOS token, say) is subtracted."""

    def __init__(self, count: TokenCounter) -> None:
        self.count = count
        self._base = count("")
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        c = self._cache.get(text)
        if c is None:
            c = max(self.count(text) - self._base, 0)
            self._cache[text] = c
        return c


def text_of(units: Sequence[Unit]) -> str:
    """The haystack text: units joined, the first unit's leading separator dropped."""
    return "".join(u.text for u in units).lstrip()


def _combinations(costs: Sequence[int], target: int) -> Iterator[tuple[int, ...]]:
    """Index sets of 1 to 3 pool units whose costs sum to ``target`` exactly, fewest and earliest first."""
    first: dict[int, int] = {}
    for i, c in enumerate(costs):
        first.setdefault(c, i)
    for i, c in enumerate(costs):
        if c == target:
            yield (i,)
    for i, c in enumerate(costs):
        j = first.get(target - c)
        if j is not None and j > i:
            yield (i, j)
    for i, j in itertools.combinations(range(min(len(costs), 120)), 2):
        k = first.get(target - costs[i] - costs[j])
        if k is not None and k > j:
            yield (i, j, k)


def fill_exact(
    stream: Iterator[Unit],
    budget: int,
    cost: Callable[[str], int],
    variant: int = 0,
    base: Sequence[Unit] = (),
) -> tuple[list[Unit], bool]:
    """Whole units from ``stream`` whose costs sum to exactly ``budget`` (second value: whether exact).

    The greedy part is a prefix of the stream (the same for every budget that reaches it), so two lengths
    of one trial share their filler up to the shorter one's end. ``variant`` picks another exact
    combination for the tail (the caller's way out when a token merge makes one choice oscillate).
    ``base`` (units of this same stream) comes first, whole; the stream then continues without them, so
    the result extends ``base`` (a ``base`` that costs more than ``budget`` is ignored).
    """
    if budget <= 0:
        return [], budget == 0
    used = sum(cost(u.text) for u in base)
    if used > budget:
        base, used = (), 0
    out: list[Unit] = list(base)
    taken = {u.ref for u in base}
    pool: list[Unit] = []
    for unit in stream:
        if unit.ref in taken:
            continue
        c = cost(unit.text)
        if not pool and budget - used - c >= _SLACK:
            out.append(unit)
            used += c
            continue
        pool.append(unit)
        if len(pool) >= _POOL:
            break
    remaining = budget - used
    costs = [cost(u.text) for u in pool]
    combo = next(itertools.islice(_combinations(costs, remaining), variant, None), None)
    if combo is None and variant:
        combo = next(_combinations(costs, remaining), None)
    if combo is not None:
        return out + [pool[i] for i in combo], True
    # Not enough material to match exactly: take what fits, in stream order (the caller reports inexact).
    for u, c in zip(pool, costs, strict=True):
        if c <= remaining:
            out.append(u)
            remaining -= c
    return out, remaining == 0


def insert_units(
    filler: Sequence[Unit], costs: Sequence[int], insertions: Sequence[tuple[float, Unit]]
) -> tuple[list[Unit], tuple[float, ...]]:
    """Insert units at the sentence boundaries nearest their depths (0 = before the first, 1 = after the last).

    Returns the units and each insertion's actual depth (its boundary's token offset over the filler's
    tokens), in the order of ``insertions``. Insertions at the same boundary keep their given order.
    """
    total = sum(costs)
    offsets = [0, *itertools.accumulate(costs)]
    slots: list[int] = []
    for depth, _ in insertions:
        if not 0.0 <= depth <= 1.0:
            raise ProbeError(f"depth {depth!r} is outside [0, 1]")
        want = depth * total
        # Nearest boundary by token offset; ties go to the earlier boundary.
        slots.append(min(range(len(offsets)), key=lambda b: (abs(offsets[b] - want), b)))
    placed: list[Unit] = []
    order = sorted(range(len(insertions)), key=lambda i: (slots[i], i))
    k = 0
    for b in range(len(filler) + 1):
        while k < len(order) and slots[order[k]] == b:
            placed.append(insertions[order[k]][1])
            k += 1
        if b < len(filler):
            placed.append(filler[b])
    actual = tuple(offsets[s] / total if total else depth for s, (depth, _) in zip(slots, insertions, strict=True))
    return placed, actual


@dataclass(frozen=True)
class BuiltHaystack:
    """A rendered prompt and how it was made: units (for the recipe), needle depths, token count."""

    prompt: str
    units: tuple[Unit, ...]
    actual_depths: tuple[float, ...]
    prompt_tokens: int
    exact: bool


def filler_budget(
    render: Callable[[str], str], count: TokenCounter, insertions: Sequence[tuple[float, Unit]], target: int
) -> int:
    """Tokens left for filler in a ``target``-token prompt once the layout and the insertions are in.

    It does not depend on where the insertions go, so every depth of a trial fills the same budget.
    """
    needles_only = [u for _, u in sorted(insertions, key=lambda x: x[0])]
    overhead = count(render(text_of(needles_only)))
    if overhead > target:
        raise ProbeError(f"length {target} is too short for this prompt: it needs {overhead} tokens without filler")
    return target - overhead


def build_exact(
    render: Callable[[str], str],
    count: TokenCounter,
    stream: Callable[[], Iterator[Unit]],
    insertions: Sequence[tuple[float, Unit]],
    target: int,
    coster: UnitCoster | None = None,
    base: Sequence[Unit] = (),
) -> BuiltHaystack:
    """Render a prompt of exactly ``target`` tokens: filler from ``stream()``, ``insertions`` at their depths.

    ``render`` turns haystack text into the full prompt (layout, question, answer cue); ``count`` is the
    model's token counter; ``base`` is the filler to extend (see :func:`fill_exact`). Raises
    :class:`ProbeError` when the prompt without filler is already too long.
    """
    cost = coster or UnitCoster(count)
    budget = filler_budget(render, count, insertions, target)
    best: BuiltHaystack | None = None
    tried: set[int] = set()
    variant = 0
    for _ in range(_MAX_FIXUPS):
        if budget in tried:
            variant += 1  # the error oscillates between two budgets: try other tail sentences
        tried.add(budget)
        filler, _exact = fill_exact(stream(), budget, cost, variant, base)
        units, depths = insert_units(filler, [cost(u.text) for u in filler], insertions)
        prompt = render(text_of(units))
        n = count(prompt)
        built = BuiltHaystack(prompt, tuple(units), depths, n, n == target)
        if n == target:
            return built
        if n < target and (best is None or n > best.prompt_tokens):
            best = built
        # A token merged or split across a boundary: move the budget by the error and refill.
        budget += target - n
        if budget < 0:
            break
    if best is None:
        raise ProbeError(f"cannot fit a prompt into {target} tokens")
    return best
