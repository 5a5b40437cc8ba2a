"""Small-sample statistics for accuracy cells: Wilson intervals and Fisher's exact test.

A probe cell holds tens of trials, not thousands, so a normal-approximation interval would be wrong
near 0 and 1; the Wilson score interval is not. "Significantly below" is a one-sided Fisher exact test
on the 2x2 table of hits and misses, which is exact at any sample size. Pure Python (no SciPy).

Example:
    >>> lo, hi = wilson(7, 20)
    >>> round(lo, 3), round(hi, 3)
    (0.181, 0.567)
    >>> round(fisher_less(2, 10, 9, 10), 4)
    0.0027
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from litm.errors import InvalidOptionError

__all__ = [
    "Z95",
    "Cell",
    "bootstrap_mean_ci",
    "fisher_greater",
    "fisher_less",
    "fisher_two_sided",
    "mcnemar_exact",
    "mean_ci",
    "round_p",
    "wilson",
    "wilson_half_width",
]

Z95 = 1.959963984540054


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``hits`` successes in ``n`` trials (``(0, 1)`` when ``n`` is 0)."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= hits <= n:
        raise InvalidOptionError(f"hits must be in [0, {n}], got {hits}")
    p = hits / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Clamp rounding noise so that 0/n gives exactly 0 and n/n exactly 1.
    return max(0.0, centre - half) if hits else 0.0, min(1.0, centre + half) if hits < n else 1.0


def wilson_half_width(hits: int, n: int, z: float = Z95) -> float:
    """Half the width of the Wilson interval (the adaptive sampler stops a cell once this is small)."""
    lo, hi = wilson(hits, n, z)
    return (hi - lo) / 2


def _hypergeom_pmf(k: int, k1: int, n1: int, n2: int) -> float:
    """P(X = k): k hits land in group 1 when ``k1`` hits are spread over ``n1 + n2`` trials."""
    return math.comb(n1, k) * math.comb(n2, k1 - k) / math.comb(n1 + n2, k1)


def _support(k1: int, n1: int, n2: int) -> range:
    return range(max(0, k1 - n2), min(n1, k1) + 1)


def fisher_less(hits_a: int, n_a: int, hits_b: int, n_b: int) -> float:
    """One-sided Fisher p-value for "group a has a lower hit rate than group b"."""
    if n_a <= 0 or n_b <= 0:
        return 1.0
    total = hits_a + hits_b
    return min(1.0, sum(_hypergeom_pmf(k, total, n_a, n_b) for k in _support(total, n_a, n_b) if k <= hits_a))


def fisher_greater(hits_a: int, n_a: int, hits_b: int, n_b: int) -> float:
    """One-sided Fisher p-value for "group a has a higher hit rate than group b"."""
    return fisher_less(hits_b, n_b, hits_a, n_a)


def fisher_two_sided(hits_a: int, n_a: int, hits_b: int, n_b: int) -> float:
    """Two-sided Fisher p-value: tables as or less likely than the observed one (used by ``probe diff``)."""
    if n_a <= 0 or n_b <= 0:
        return 1.0
    total = hits_a + hits_b
    observed = _hypergeom_pmf(hits_a, total, n_a, n_b)
    probs = [_hypergeom_pmf(k, total, n_a, n_b) for k in _support(total, n_a, n_b)]
    return min(1.0, sum(p for p in probs if p <= observed * (1 + 1e-9)))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs of a paired comparison.

    ``only_a``: pairs where only condition a hit; ``only_b``: only b. Under no difference each discordant pair
    is a fair coin, so the p-value is a two-sided binomial test on them.

    >>> round(mcnemar_exact(15, 4), 3)
    0.019
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def round_p(p: float, decimals: int = 5) -> float:
    """A p-value rounded for a summary: to ``decimals`` places while that keeps 3 significant figures, else to
    3 significant figures, so a strong result never reads as "p = 0".

    >>> round_p(0.0078125), round_p(6.0275e-08)
    (0.00781, 6.03e-08)
    """
    fixed = round(p, decimals)
    return fixed if fixed >= 10.0 ** (2 - decimals) else float(f"{p:.3g}")


def bootstrap_mean_ci(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (seeded: the same draws for equal inputs).

    Paired comparisons pass per-question differences, so the interval is the paired one.

    >>> bootstrap_mean_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    if not values:
        raise InvalidOptionError("a bootstrap interval needs at least one value")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    lo, hi = means[int(tail * resamples)], means[min(int((1 - tail) * resamples), resamples - 1)]
    return round(lo, 4) + 0.0, round(hi, 4) + 0.0  # + 0.0 turns -0.0 into 0.0


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean with a normal-approximation 95% interval (``z`` standard errors).

    For means of continuous per-question values (log-probabilities) over tens of questions or more.

    >>> mean_ci([1.0, 2.0, 3.0])
    (2.0, 0.8684, 3.1316)
    """
    n = len(values)
    if n == 0:
        raise InvalidOptionError("a mean needs at least one value")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = z * sd / math.sqrt(n)
    return round(mean, 4), round(mean - half, 4), round(mean + half, 4)


@dataclass(frozen=True)
class Cell:
    """Hits out of trials, with the accuracy and its Wilson 95% interval."""

    hits: int
    n: int

    @property
    def acc(self) -> float:
        return self.hits / self.n if self.n else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.hits, self.n)

    def __add__(self, other: Cell) -> Cell:
        return Cell(self.hits + other.hits, self.n + other.n)

    def to_dict(self) -> dict[str, float]:
        lo, hi = self.ci
        return {"hits": self.hits, "n": self.n, "acc": round(self.acc, 4), "lo": round(lo, 4), "hi": round(hi, 4)}

    def __str__(self) -> str:
        lo, hi = self.ci
        return f"{self.acc:.2f} [{lo:.2f}, {hi:.2f}] ({self.hits}/{self.n})"
