"""What permutation self-consistency returns: every call, the vote, and the cost in calls and tokens."""

from __future__ import annotations

from dataclasses import dataclass, field

from litm.consistency._vote import Vote
from litm.models import Completion
from litm.prompt import Prompt

__all__ = ["PscAnswer", "PscCall"]


@dataclass(frozen=True)
class PscCall:
    """One call: the documents' ``order`` (indices into the caller's list, in prompt order) and their ``ids``,
    the ``answer`` read from the reply (its first line), its ``normalized`` vote, the model's ``completion``, and
    the built ``prompt`` it was sent."""

    order: tuple[int, ...]
    ids: tuple[str, ...]
    answer: str
    normalized: str
    completion: Completion
    prompt: Prompt = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, the completion's usage included."""
        return {
            "order": list(self.order),
            "ids": list(self.ids),
            "answer": self.answer,
            "normalized": self.normalized,
            "completion": self.completion.to_dict(),
        }


@dataclass(frozen=True)
class PscAnswer:
    """The aggregated answer of :func:`~litm.consistency.psc` and every call behind it.

    ``answer`` is the winning call's answer as the model wrote it (``""`` when every call gave an empty answer),
    ``normalized`` the form it won with, ``votes`` each normalised answer's count (first appearance first),
    ``winner`` the index of the call whose text is ``answer`` (-1: none), ``calls`` each call in call order.
    The cost: :attr:`n_calls`, :attr:`input_tokens` (every prompt token the backend billed or evaluated, cache
    reads included), :attr:`cached_tokens` (of those, read from a cache: llama.cpp's prefix reuse, a provider's
    prompt cache), :attr:`output_tokens`, all from the backend's own usage.
    """

    answer: str
    normalized: str
    votes: dict[str, int] = field(hash=False)
    winner: int
    calls: tuple[PscCall, ...]
    seed: int

    @classmethod
    def of(cls, calls: tuple[PscCall, ...], outcome: Vote, seed: int) -> PscAnswer:
        return cls(outcome.answer, outcome.normalized, dict(outcome.votes), outcome.winner, calls, seed)

    @property
    def n_calls(self) -> int:
        """Model calls made (``min(calls, n!)`` for ``n`` documents)."""
        return len(self.calls)

    @property
    def agreement(self) -> float:
        """Share of the calls that gave the winning answer (0.0 when none answered)."""
        if self.winner < 0 or not self.calls:
            return 0.0
        return self.votes.get(self.normalized, 0) / len(self.calls)

    @property
    def input_tokens(self) -> int:
        return sum(c.completion.input_tokens for c in self.calls)

    @property
    def cached_tokens(self) -> int:
        return sum(c.completion.cached_tokens for c in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.completion.output_tokens for c in self.calls)

    @property
    def latency_s(self) -> float:
        """The calls' latencies added up (remote calls overlap, so the wall time is shorter)."""
        return sum(c.completion.latency_s for c in self.calls)

    @property
    def orders(self) -> tuple[tuple[int, ...], ...]:
        """Each call's document order."""
        return tuple(c.order for c in self.calls)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the answer, the vote, the cost and every call."""
        return {
            "answer": self.answer,
            "normalized": self.normalized,
            "votes": dict(self.votes),
            "winner": self.winner,
            "agreement": round(self.agreement, 4),
            "n_calls": self.n_calls,
            "seed": self.seed,
            "input_tokens": self.input_tokens,
            "cached_tokens": self.cached_tokens,
            "output_tokens": self.output_tokens,
            "calls": [c.to_dict() for c in self.calls],
        }
