"""Replies the answer cap cut off: a warning that the benchmark measured the cap, not the model.

The benchmark scores the first line of a reply and stops each call at its end or at ``max_tokens``. A chat model
that answers in a sentence ("According to Document [1], the Lakers won their last title in 2010.") often needs
20-40 tokens before the answer appears; at the default cap of 16 most of its replies end before the answer, and
they are scored as misses the model would not make. Qwen2.5-Coder 1.5B on NQ k = 20: 108 of its first 112
replies reached a cap of 16 (90 of them missed); at 64 the first 31 of the same prompts gave 20 hits against 6.
"""

from __future__ import annotations

from dataclasses import dataclass

from litm.bench._design import QUOTE_ARM
from litm.bench._rows import Rows

__all__ = ["CUTOFF_SHARE", "CutOff", "cut_off", "cutoff_note"]

#: The share of missed, cut-off replies from which a run is warned: a few long replies are normal (a model that
#: rambles on a question it cannot answer); a tenth of the run changes its accuracy by up to ten points.
CUTOFF_SHARE = 0.10


@dataclass(frozen=True)
class CutOff:
    """How many of a run's scored replies there are, reached the answer cap, and reached it and missed."""

    replies: int
    at_cap: int
    missed: int


def cut_off(rows: Rows) -> CutOff:
    """Count the scored replies of ``rows`` that reached the answer cap (``finish_reason == "length"``), and those
    of them that missed. The quote-first arm's replies have a cap of their own and are not counted.

    >>> cut_off([{"arm": "plain", "finish_reason": "length", "hit": True},
    ...          {"arm": "plain", "finish_reason": "length", "hit": False},
    ...          {"arm": "plain", "finish_reason": "stop", "hit": False}])
    CutOff(replies=3, at_cap=2, missed=1)
    """
    scored = [r for r in rows if r.get("arm") != QUOTE_ARM and r.get("finish_reason") is not None]
    at_cap = [r for r in scored if r.get("finish_reason") == "length"]
    return CutOff(len(scored), len(at_cap), sum(1 for r in at_cap if not r.get("hit")))


def cutoff_note(rows: Rows, max_tokens: int) -> str | None:
    """A warning when at least :data:`CUTOFF_SHARE` of the scored replies reached ``max_tokens`` before their first
    line ended and missed, else None.

    >>> cut = {"phase": "slot", "arm": "plain", "finish_reason": "length", "hit": False}
    >>> ok = {"phase": "slot", "arm": "plain", "finish_reason": "stop", "hit": True}
    >>> print(cutoff_note([cut, cut, ok, ok], 16).split(":")[0])
    2 of 4 replies (50%) were cut off at max_tokens 16 (--max-tokens) before their first line ended, and missed
    >>> cutoff_note([cut] + [ok] * 10, 16) is None  # under a tenth
    True
    """
    counts = cut_off(rows)
    if not counts.replies or counts.missed / counts.replies < CUTOFF_SHARE:
        return None
    cut, scored = counts.missed, counts.replies
    return (
        f"{cut} of {scored} replies ({cut / scored:.0%}) were cut off at max_tokens {max_tokens}"
        " (--max-tokens) before their first line ended, and missed: only the first line is scored, so they may be"
        " misses the model would not make; rerun into a new folder with a higher cap (64 suits a chat model that"
        " answers in a sentence)"
    )
