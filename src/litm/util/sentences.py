"""Sentence boundaries for trimming text to a budget, in Latin and CJK punctuation alike."""

from __future__ import annotations

import re

__all__ = ["first_sentence", "split_sentences"]

# After ., !, ? (or the CJK full stop, exclamation and question marks) followed by whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` after sentence-ending punctuation; joining with spaces restores it up to whitespace.

    >>> split_sentences("One. Two! Three")
    ['One.', 'Two!', 'Three']
    """
    return [s for s in _SENTENCE_END.split(text) if s]


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of ``text`` with whitespace collapsed, cut to ``limit`` characters."""
    text = " ".join(text.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"
