"""Sequential sampling: stop a cell once finishing it would, in all likelihood, not change the verdicts.

The fixed grid runs ``trials`` (N) trials in every (length, depth) cell. ``adaptive=True`` runs the same
grid trial by trial (round ``t`` runs trial ``t`` of every cell still active, its prompts sharing
prefixes as in the fixed grid) and stops cells early by this rule, checked per task after every round:

1. **Budget**: a cell runs at most N trials (the fixed grid's), and at least ``min_trials``.
2. **Precise**: a cell whose Wilson 95% interval is narrow enough (half-width at most
   ``target_half_width``) stops.
3. **Settled**: the verdicts are the pooled dead zone (which inner depths are significantly below the
   better edge, one-sided Fisher test at ``alpha``) and the effective length (mid-depth accuracy at least
   ``ratio`` of the short-context accuracy), exactly as the report computes them. Each cell's accuracy
   gets a Jeffreys posterior, Beta(hits + 1/2, misses + 1/2); ``draws`` posterior-predictive draws finish
   every cell to N trials (the fixed grid's outcome) and, beside it, finish only the cells still running
   (the adaptive outcome). The **risk** of a set of stopped cells is the share of draws in which the two
   outcomes' verdicts differ. Cells are stopped greedily, the least risky first, while the risk of
   everything stopped stays below ``flip_risk`` (default 0.05).

So a cell far inside the dead zone (0/4 against an edge at 4/4) or plainly outside it (4/4 against 4/4
on a flat curve) stops at ``min_trials``, and a cell near a decision runs on. Draws are seeded by the
counts, so the same rows always give the same decisions (a resumed run replays them exactly).

How often the adaptive verdicts differ from the fixed grid's, and from the truth, is measured by
:func:`simulate` (``benchmarks/bench_probe_cost.py --simulate``; the table is in ``docs/probe.md``).

Example:
    >>> rule = StoppingRule(trials=10, min_trials=4)
    >>> counts = {(512, 0.0): (4, 4), (512, 0.5): (0, 4), (512, 1.0): (4, 4)}
    >>> sorted(rule.settled(counts, frozen=set()))   # clearly inside and clearly at the edges: all stop
    [(512, 0.0), (512, 0.5), (512, 1.0)]
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from litm.errors import ProbeError
from litm.eval._stats import Cell, fisher_less, wilson_half_width
from litm.probe._analysis import DEFAULT_ALPHA, DEFAULT_RATIO, dead_zone, effective_length
from litm.probe._grid import ProbeConfig, TrialSpec
from litm.probe._rows import ProbeRow, depth_of

__all__ = ["Counts", "Sequential", "SimulationResult", "StoppingRule", "simulate", "verdicts"]

#: Hits and trials per (length, depth) cell of one task.
Counts = Mapping[tuple[int, float], tuple[int, int]]
Verdict = tuple[tuple[float, ...], int | None]

_fisher = lru_cache(maxsize=1 << 16)(fisher_less)


def verdicts(counts: Counts, alpha: float = DEFAULT_ALPHA, ratio: float = DEFAULT_RATIO) -> Verdict:
    """(dead-zone depths pooled over lengths, effective length): the report's two verdicts, from counts.

    >>> verdicts({(512, 0.0): (10, 10), (512, 0.5): (2, 10), (512, 1.0): (10, 10)})
    ((0.5,), None)
    """
    return _verdicts(tuple(counts.items()), alpha, ratio)


@lru_cache(maxsize=1 << 15)
def _verdicts(items: tuple[tuple[tuple[int, float], tuple[int, int]], ...], alpha: float, ratio: float) -> Verdict:
    # Draws repeat the same completed grids often, so the report's analysis runs once per distinct grid.
    counts = dict(items)
    table = {cell: Cell(h, n) for cell, (h, n) in counts.items()}
    sums: dict[float, list[int]] = {}
    for (_, d), (h, n) in counts.items():
        acc = sums.setdefault(d, [0, 0])
        acc[0] += h
        acc[1] += n
    zone = dead_zone({d: Cell(h, n) for d, (h, n) in sums.items()}, alpha, test=_fisher)
    return zone.depths, effective_length(table, ratio)[0]


@dataclass(frozen=True)
class StoppingRule:
    """The stopping rule of the module docstring, with its settings."""

    trials: int
    min_trials: int = 4
    target_half_width: float = 0.15
    flip_risk: float = 0.05
    prior_trials: float = 4.0
    draws: int = 200
    alpha: float = DEFAULT_ALPHA
    ratio: float = DEFAULT_RATIO

    def __post_init__(self) -> None:
        if self.min_trials < 1:
            raise ProbeError(f"min_trials must be at least 1, got {self.min_trials}")
        if not 0.0 <= self.flip_risk < 1.0:
            raise ProbeError(f"flip_risk must be in [0, 1), got {self.flip_risk}")
        if self.prior_trials < 0:
            raise ProbeError(f"prior_trials must be at least 0, got {self.prior_trials}")
        if self.draws < 1:
            raise ProbeError(f"draws must be at least 1, got {self.draws}")

    @classmethod
    def from_config(cls, config: ProbeConfig) -> StoppingRule:
        return cls(
            trials=config.trials,
            min_trials=config.min_trials,
            target_half_width=config.target_half_width,
            flip_risk=config.flip_risk,
        )

    def settled(self, counts: Counts, frozen: set[tuple[int, float]]) -> set[tuple[int, float]]:
        """The cells (beyond ``frozen``) that stop now: at the budget, precise enough, or settled."""
        stop = {c for c, (h, n) in counts.items() if c not in frozen and self._done(h, n)}
        held = frozen | stop
        candidates = [c for c, (_, n) in counts.items() if c not in held and n >= self.min_trials]
        if not candidates or self.flip_risk <= 0:
            return stop
        draws = self._draws(counts)
        if self._risk(draws, held) >= self.flip_risk:
            return stop
        if self._risk(draws, held | set(candidates)) < self.flip_risk:
            return stop | set(candidates)  # the common case on a settled grid: one check stops them all
        # Least risky first; each addition is checked against everything stopped so far.
        alone = sorted(candidates, key=lambda c: (self._risk(draws, held | {c}), c))
        for cell in alone:
            if self._risk(draws, held | {cell}) < self.flip_risk:
                held.add(cell)
                stop.add(cell)
        return stop

    def _done(self, hits: int, n: int) -> bool:
        return n >= self.trials or (n >= self.min_trials and wilson_half_width(hits, n) <= self.target_half_width)

    def _draws(self, counts: Counts) -> list[_Draw]:
        """``draws`` posterior-predictive completions of the grid to N trials (seeded by the counts)."""
        rng = random.Random(repr(sorted(counts.items())))
        priors = self._priors(counts)
        out = []
        for _ in range(self.draws):
            full: dict[tuple[int, float], tuple[int, int]] = {}
            for cell, (h, n) in counts.items():
                left = self.trials - n
                if left > 0:
                    a, b = priors[cell]
                    p = rng.betavariate(h + a, n - h + b)
                    full[cell] = (h + sum(rng.random() < p for _ in range(left)), self.trials)
                else:
                    full[cell] = (h, n)
            out.append(_Draw(counts, full, verdicts(full, self.alpha, self.ratio)))
        return out

    def _priors(self, counts: Counts) -> dict[tuple[int, float], tuple[float, float]]:
        """Each cell's Beta prior: worth ``prior_trials`` trials at the accuracy a two-way fit of the task
        predicts for it (its length's mean + its depth's mean - the task's mean), so a cell borrows what
        the rest of its row and column say; ``prior_trials=0``: Jeffreys, Beta(1/2, 1/2), cells alone."""
        if self.prior_trials == 0:
            return dict.fromkeys(counts, (0.5, 0.5))

        def mean(cells: Iterable[tuple[int, int]]) -> float:
            cs = list(cells)
            return (sum(h for h, _ in cs) + 0.5) / (sum(n for _, n in cs) + 1)

        grand = mean(counts.values())
        rows = {length: mean(v for (ln, _), v in counts.items() if ln == length) for length, _ in counts}
        cols = {d: mean(v for (_, dd), v in counts.items() if dd == d) for _, d in counts}
        out = {}
        for length, d in counts:
            mu = min(max(rows[length] + cols[d] - grand, 0.01), 0.99)
            out[(length, d)] = (self.prior_trials * mu, self.prior_trials * (1 - mu))
        return out

    def _risk(self, draws: Sequence[_Draw], held: set[tuple[int, float]]) -> float:
        """Share of draws whose adaptive verdicts (``held`` cells stopped) differ from the fixed grid's."""
        flips = 0
        for d in draws:
            early = [c for c in held if d.full[c] != d.now[c]]
            if not early:
                continue  # nothing stopped early differs in this draw: both outcomes are the same
            part = {**d.full, **{c: d.now[c] for c in early}}
            flips += verdicts(part, self.alpha, self.ratio) != d.fixed
        return flips / len(draws)


@dataclass(frozen=True)
class _Draw:
    """One predictive completion: the counts now, finished to N trials, and the fixed grid's verdicts."""

    now: Counts
    full: Mapping[tuple[int, float], tuple[int, int]]
    fixed: Verdict


class Sequential:
    """The rule applied to a run: counts per task and cell, the cells stopped, and which specs still run.

    Rows already in the results file are replayed round by round, so a resumed run makes the decisions
    the interrupted one made (a grid grown on resume replays until its first round without rows).
    """

    def __init__(
        self, config: ProbeConfig, rows: Iterable[ProbeRow] = (), rule: StoppingRule | None = None
    ) -> None:
        self.rule = rule if rule is not None else StoppingRule.from_config(config)
        self.cells = {t: [(length, d) for length in config.lengths for d in config.depths] for t in config.tasks}
        self.counts: dict[str, dict[tuple[int, float], tuple[int, int]]] = {t: {} for t in config.tasks}
        self.frozen: dict[str, dict[tuple[int, float], int]] = {t: {} for t in config.tasks}
        self._replay([r for r in rows if r.get("kind") == "trial" and r.get("task") in self.counts])

    def _replay(self, rows: Sequence[ProbeRow]) -> None:
        by_round: dict[tuple[str, int], dict[tuple[int, float], ProbeRow]] = {}
        for r in rows:
            by_round.setdefault((str(r["task"]), int(r["trial"])), {})[(int(r["length"]), depth_of(r))] = r
        for task, cells in self.cells.items():
            for t in range(self.rule.trials):
                due = [c for c in cells if c not in self.frozen[task]]
                got = by_round.get((task, t), {})
                if not due or any(c not in got for c in due):
                    break  # this round was interrupted (or never ran): its missing cells run next
                for c in due:
                    self.observe(got[c])
                self.close_round(task, t)

    def observe(self, row: ProbeRow) -> None:
        """Count one finished trial row (the fact at the cell's own depth, for multi-fact tasks)."""
        if row.get("kind") != "trial" or row.get("task") not in self.counts:
            return
        obs = row.get("observations") or [[depth_of(row), row["hit"]]]
        cell = (int(row["length"]), depth_of(row))
        h, n = self.counts[str(row["task"])].get(cell, (0, 0))
        self.counts[str(row["task"])][cell] = (h + bool(obs[0][1]), n + 1)

    def close_round(self, task: str, trial: int) -> None:
        """After trial ``trial`` of ``task``: stop the cells the rule settles."""
        counts = self.counts[task]
        for cell in self.rule.settled(counts, set(self.frozen[task])):
            self.frozen[task][cell] = trial

    def active(self, spec: TrialSpec) -> bool:
        """Whether ``spec`` still runs (closed-book controls always do)."""
        if spec.kind != "trial" or spec.depth is None or spec.task not in self.frozen:
            return True
        return (spec.length, spec.depth) not in self.frozen[spec.task] and spec.trial < self.rule.trials

    def summary(self) -> dict[str, object]:
        """Per task: trials run per cell, and the round after which each stopped cell stopped."""
        return {
            task: {
                "trials": {f"{length}|{d:g}": n for (length, d), (_, n) in sorted(self.counts[task].items())},
                "stopped_after_round": {f"{length}|{d:g}": r for (length, d), r in sorted(self.frozen[task].items())},
            }
            for task in self.counts
        }


@dataclass(frozen=True)
class SimulationResult:
    """How the adaptive verdicts compare with the fixed grid's and with the truth, over ``runs`` grids."""

    runs: int
    trials_share: float
    dead_zone_differs: float
    effective_length_differs: float
    fixed_dead_zone_wrong: float
    adaptive_dead_zone_wrong: float
    fixed_effective_length_wrong: float
    adaptive_effective_length_wrong: float

    def to_dict(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in self.__dict__.items()}


def simulate(
    truth: Mapping[tuple[int, float], float], rule: StoppingRule, runs: int = 100, seed: int = 0
) -> SimulationResult:
    """Run the fixed grid and the rule on the same simulated outcomes, ``runs`` times.

    ``truth`` maps each (length, depth) cell to its true accuracy. Each run draws N outcomes per cell;
    the fixed grid sees all of them, the adaptive run the first ones, up to where the rule stops the
    cell (as a real run sees the first trials). The true verdicts are those of the true accuracies with
    a very large sample (the verdicts' definitions, not a test, decide what "true" means: a dead zone is a
    depth whose true accuracy is below the better edge's).
    """
    rng = random.Random(seed)
    true_zone = _true_verdicts(truth, rule.ratio)
    tally = dict.fromkeys(("trials", "dz", "el", "fdz", "adz", "fel", "ael"), 0.0)
    for _ in range(runs):
        outcomes = {c: [rng.random() < p for _ in range(rule.trials)] for c, p in truth.items()}
        fixed = verdicts({c: (sum(o), len(o)) for c, o in outcomes.items()}, rule.alpha, rule.ratio)
        frozen: set[tuple[int, float]] = set()
        counts = {c: (0, 0) for c in truth}
        for t in range(rule.trials):
            for c in truth:
                if c not in frozen:
                    h, n = counts[c]
                    counts[c] = (h + outcomes[c][t], n + 1)
            frozen |= rule.settled(counts, frozen)
            if len(frozen) == len(truth):
                break
        adaptive = verdicts(counts, rule.alpha, rule.ratio)
        tally["trials"] += sum(n for _, n in counts.values()) / (rule.trials * len(truth))
        tally["dz"] += adaptive[0] != fixed[0]
        tally["el"] += adaptive[1] != fixed[1]
        tally["fdz"] += fixed[0] != true_zone[0]
        tally["adz"] += adaptive[0] != true_zone[0]
        tally["fel"] += fixed[1] != true_zone[1]
        tally["ael"] += adaptive[1] != true_zone[1]
    share = {k: v / runs for k, v in tally.items()}
    return SimulationResult(
        runs, share["trials"], share["dz"], share["el"], share["fdz"], share["adz"], share["fel"], share["ael"]
    )


def _true_verdicts(truth: Mapping[tuple[int, float], float], ratio: float) -> Verdict:
    """The verdicts of the true accuracies: below the better edge at all; effective length by ``ratio``."""
    depths = sorted({d for _, d in truth})
    lengths = sorted({length for length, _ in truth})
    pooled = {d: sum(truth[(length, d)] for length in lengths) / len(lengths) for d in depths}
    edge = depths[0] if pooled[depths[0]] > pooled[depths[-1]] else depths[-1]
    zone = tuple(d for d in depths[1:-1] if pooled[d] < pooled[edge] - 1e-9) if len(depths) >= 3 else ()
    big = 1_000_000  # as counts: the effective-length walk of the report, on (nearly) exact accuracies
    exact = {c: (round(p * big), big) for c, p in truth.items()}
    table = {c: Cell(h, n) for c, (h, n) in exact.items()}
    return zone, effective_length(table, ratio)[0]
