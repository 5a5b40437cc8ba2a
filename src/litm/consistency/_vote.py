"""Aggregating the answers of several calls: a majority over normalised answers, ties to the earliest call.

An answer votes with its normalised form (:func:`litm.eval._scoring.normalize`, the benchmark's own: lower-case,
no punctuation or articles, whitespace collapsed), so ``"The Eiffel Tower."`` and ``"eiffel tower"`` are one
vote. An answer that normalises to nothing (an empty reply, punctuation only) abstains. The winner is the
normalised answer with the most votes; a tie goes to the one given first (by the earliest call, which keeps the
documents in the caller's order when ``keep_first`` is on), so the result never depends on thread timing. The
answer returned is the winning call's own text, not the normalised key.

Example:
    >>> v = vote(["Paris.", "Lyon", "paris", ""])
    >>> v.answer, v.normalized, v.votes, v.winner, v.agreement
    ('Paris.', 'paris', {'paris': 2, 'lyon': 1}, 0, 0.5)
    >>> vote(["Lyon", "Paris"]).answer    # a tie: the earliest call's answer
    'Lyon'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from litm.errors import InvalidOptionTypeError
from litm.eval._scoring import normalize

__all__ = ["Vote", "vote"]


@dataclass(frozen=True)
class Vote:
    """The outcome of :func:`vote`.

    ``answer`` is the text of call ``winner`` (``""`` and ``-1`` when every answer abstained); ``normalized`` its
    normalised form; ``votes`` each normalised answer's count, in the order the answers first appeared;
    ``agreement`` the share of all calls (abstentions included) that gave the winning answer.
    """

    answer: str
    normalized: str
    votes: dict[str, int] = field(hash=False)
    winner: int
    calls: int

    @property
    def agreement(self) -> float:
        """Calls that gave the winning answer over all calls (0.0 when every call abstained)."""
        return self.votes.get(self.normalized, 0) / self.calls if self.winner >= 0 and self.calls else 0.0


def vote(answers: Sequence[str]) -> Vote:
    """The majority of ``answers`` by normalised form; a tie goes to the answer that appeared first.

    >>> vote(["no", "yes", "Yes!"]).normalized
    'yes'
    >>> vote(["", "  "]).winner
    -1
    """
    if isinstance(answers, str) or not all(isinstance(a, str) for a in answers):
        raise InvalidOptionTypeError("answers must be a list of strings")
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, text in enumerate(answers):
        key = normalize(text)
        if not key:
            continue  # an empty reply abstains rather than voting for "nothing"
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, i)
    if not counts:
        return Vote("", "", {}, -1, len(answers))
    best = max(counts, key=lambda k: (counts[k], -first[k]))
    return Vote(answers[first[best]], best, counts, first[best], len(answers))
