"""The order a run's prompts go in, and what that order costs in prompt tokens a model evaluates.

All prompts of one trial of one task share their filler (see :mod:`litm.probe._insert`: with nested
filler, a shorter length's haystack is a prefix of a longer one's), so they form a prefix tree (a trie)
whose branches split at the needles. Sorting a trial's prompts as strings walks that trie depth first:
each prompt then shares with the one before it the longest prefix that *any* earlier prompt offers, so a
single KV cache (llama.cpp keeps the previous prompt's) evaluates every shared prefix once.
``order="grid"`` runs cell by cell instead (the naive order, kept for comparison).

What a run evaluates, in prompt tokens (:class:`PrefillCost`):

* ``naive``: every prompt token (one cold call per prompt, as needle-in-a-haystack harnesses make);
* ``floor``: the bound the schedule aims at: per trial and task, the longest prompt once plus, for every
  prompt, what follows its first needle: ``max_length + sum((1 - depth) x length)``. Needles at depth 0
  share even their continuation across lengths, so a run can come in a little under it;
* ``trie``: the exact minimum for these prompts (distinct token prefixes within each trial and task, plus
  one token per repeated prompt, since a model re-evaluates the last prompt token for fresh logits);
* ``scheduled``: what the run order costs under the model's reuse rule: ``full`` reuses every shared
  token, ``aligned`` only whole ``chunk``-token blocks (llama.cpp's ``n_batch``; the price of answers that
  equal a cold run's), ``cold`` nothing.

Example:
    >>> meter = PrefillMeter("full")
    >>> meter.add_batch([([1, 2, 3, 4, 5, 6], 1.0), ([1, 2, 3, 9, 9, 9], 0.5)])
    >>> c = meter.cost()
    >>> c.naive, c.floor, c.trie, c.scheduled
    (12, 9, 9, 9)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

from litm.errors import InvalidOptionError, LitmError
from litm.models._base import Model
from litm.probe._grid import TrialSpec
from litm.probe._prepare import Prepared

__all__ = ["PrefillCost", "PrefillMeter", "batches", "lcp", "run_order", "schedule", "token_encoder"]


def schedule(prepared: Sequence[Prepared], order: str) -> list[Prepared]:
    """``prefix``: sorted by prompt text, a depth-first walk of the shared-prefix tree; ``grid``: as given."""
    if order == "prefix":
        return sorted(prepared, key=lambda p: p.built.prompt)
    return list(prepared)


def run_order(prepared: Sequence[Prepared], order: str, remote: bool = False) -> list[Prepared]:
    """The order one trial's prompts are sent in.

    A local model walks the trie sorted (:func:`schedule`: its one KV cache holds the previous prompt). A
    provider's cache keeps every prefix it was asked to keep, so remote prompts go in order of where they
    leave the trial's longest prompt, shallowest first: each then reads the prefix the one before it
    wrote, and writes the one the next reads (see :mod:`litm.probe._caching`).
    """
    if order != "prefix" or not remote or not prepared:
        return schedule(prepared, order)
    ref = max(prepared, key=lambda p: (p.built.prompt_tokens, p.needle_depth or 0.0)).built.prompt
    return sorted(prepared, key=lambda p: (lcp(p.built.prompt, ref), p.built.prompt))


def batches(specs: Sequence[TrialSpec], order: str) -> Iterator[list[TrialSpec]]:
    """Groups that share filler (closed-book controls; then per trial and task), or one cell-major batch."""
    if order == "grid":
        yield sorted(specs, key=lambda s: (s.kind != "closed_book", s.task, s.length, s.depth or 0.0, s.trial))
        return
    groups: dict[tuple[int, int, str], list[TrialSpec]] = {}
    for s in specs:
        key = (0, 0, s.task) if s.kind == "closed_book" else (1, s.trial, s.task)
        groups.setdefault(key, []).append(s)
    for key in sorted(groups):
        yield groups[key]


def lcp(a: Sequence[int] | str, b: Sequence[int] | str) -> int:
    """Length of the longest common prefix of two token sequences (or strings).

    >>> lcp([1, 2, 3], [1, 2, 4]), lcp("abc", "abc")
    (2, 3)
    """
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]: bisect on slices, which compare in C
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def token_encoder(model: Model) -> Callable[[str], list[int]]:
    """The model's token ids, or for a counting-only tokenizer (an estimate), 4-character pseudo-tokens."""
    tok = model.tokenizer
    try:
        tok.encode("probe")
        return tok.encode
    except LitmError:

        def approx(text: str) -> list[int]:
            return [hash(text[i : i + 4]) for i in range(0, len(text), 4)]

        return approx


@dataclass(frozen=True)
class PrefillCost:
    """Prompt tokens of a run: all of them, the floor, the exact minimum and what its order evaluates."""

    prompts: int
    naive: int
    floor: int
    trie: int
    scheduled: int
    reuse: str

    def __add__(self, other: PrefillCost) -> PrefillCost:
        return PrefillCost(
            self.prompts + other.prompts,
            self.naive + other.naive,
            self.floor + other.floor,
            self.trie + other.trie,
            self.scheduled + other.scheduled,
            self.reuse,
        )

    def to_dict(self) -> dict[str, int | str]:
        return asdict(self)

    def describe(self, achieved: int | None = None) -> str:
        """One line: naive, floor, exact minimum, this order's cost and (if given) the measured prefill.

        >>> print(PrefillCost(2, 1000, 600, 580, 640, "aligned:64").describe(640))  # doctest: +NORMALIZE_WHITESPACE
        prefill tokens: naive 1,000; floor 600; minimum 580;
        scheduled 640 (aligned:64 reuse, 1.07x the floor); measured 640
        """
        ratio = f", {self.scheduled / self.floor:.2f}x the floor" if self.floor else ""
        line = (
            f"prefill tokens: naive {self.naive:,}; floor {self.floor:,}; minimum {self.trie:,}; "
            f"scheduled {self.scheduled:,} ({self.reuse} reuse{ratio})"
        )
        return line if achieved is None else f"{line}; measured {achieved:,}"


def _reuse_rule(reuse: str) -> tuple[str, int]:
    mode, _, chunk = reuse.partition(":")
    if mode not in ("aligned", "full", "cold"):
        raise InvalidOptionError(f"unknown reuse rule {reuse!r}: use 'aligned:N', 'full' or 'cold'")
    return mode, int(chunk) if chunk else 512


class PrefillMeter:
    """Adds up :class:`PrefillCost` batch by batch, in run order (the cache carries over between batches).

    ``reuse`` is ``"aligned:N"`` (whole ``N``-token chunks kept; ``"aligned"`` means 512, llama.cpp's
    default batch), ``"full"`` or ``"cold"``.
    """

    def __init__(self, reuse: str) -> None:
        self._mode, self._chunk = _reuse_rule(reuse)
        self.reuse = reuse if self._mode != "aligned" else f"aligned:{self._chunk}"
        self._total = PrefillCost(0, 0, 0, 0, 0, self.reuse)
        self._previous: Sequence[int] = ()

    def _reused(self, previous: Sequence[int], tokens: Sequence[int]) -> int:
        if self._mode == "cold" or not previous:
            return 0
        shared = min(lcp(previous, tokens), len(tokens) - 1)  # the last prompt token is always evaluated
        if self._mode == "full":
            return max(shared, 0)
        return max(shared, 0) // self._chunk * self._chunk

    def add_batch(self, items: Sequence[tuple[Sequence[int], float | None]]) -> None:
        """One trial's prompts (token ids and the first needle's depth, None for no needle) in run order."""
        if not items:
            return
        lengths = [len(t) for t, _ in items]
        trial = [(len(t), d) for t, d in items if d is not None]
        # Prompts without a needle (closed-book controls) share nothing by design: all of each counts.
        floor = sum(n for (_, d), n in zip(items, lengths, strict=True) if d is None)
        if trial:
            floor += max(n for n, _ in trial) + round(sum((1 - d) * n for n, d in trial))
        ordered = sorted(list(t) for t, _ in items)
        trie = sum(len(t) - min(lcp(p, t), len(t) - 1) for p, t in zip([(), *ordered], ordered, strict=False))
        scheduled = 0
        for tokens, _ in items:
            scheduled += len(tokens) - self._reused(self._previous, tokens)
            self._previous = tokens
        self._total = self._total + PrefillCost(len(items), sum(lengths), floor, trie, scheduled, self.reuse)

    def cost(self) -> PrefillCost:
        return self._total
