"""Deterministic scoring, and a class for every miss so a curve's shape can be explained.

A hit is Liu et al.'s rule: some accepted answer, normalised (lower-case, punctuation and the articles
a/an/the removed, whitespace collapsed), is a substring of the normalised first line of the output.
``multi`` is scored by recall: each target value found anywhere in the output. No LLM judge.

A miss is classed, in this order of precedence:

================ =====================================================================================
``empty``        nothing but whitespace or punctuation
``partial``      ``multi`` only: some of the facts recalled, not all
``truncated``    ``max_tokens`` ran out inside the answer: the first line ends with the start of an accepted
                 answer ("... vault is 93405" for 934053); raise ``--max-tokens``
``wrong_item``   returned the value of another item in the context (another key's value, another
                 vault's code, the intermediate hop of a chain, another passage's answer)
``echo``         repeated the question (starts with "question", or most of its content words)
``copied_context`` copied a span of the context (5+ words verbatim) that does not hold the answer
``other``        anything else: a wrong guess, a continuation, a refusal
================ =====================================================================================

Example:
    >>> normalize("The  Answer: Röntgen!")
    'answer röntgen'
    >>> s = score_output(" 482913.\\nQuestion: next", answers=["482913"], question="What is the code?")
    >>> s.hit, s.miss
    (True, None)
    >>> score_output("Question: What is the code?", answers=["482913"], question="What is the code?").miss
    'echo'
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MISS_CLASSES",
    "MissClass",
    "Score",
    "exact_match",
    "first_line",
    "normalize",
    "score_output",
    "token_f1",
]

MissClass = Literal["empty", "partial", "truncated", "wrong_item", "echo", "copied_context", "other"]
MISS_CLASSES: tuple[MissClass, ...] = ("empty", "partial", "truncated", "wrong_item", "echo", "copied_context", "other")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
# fmt: off
_STOP = frozenset((
        "a", "an", "the", "is", "are", "was", "were", "be", "of", "for", "to", "in", "on", "at", "by", "with",
        "and", "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "does", "do", "did", "or",
        "it", "its", "this", "that", "question", "answer",
))
# fmt: on
_ECHO_SHARE = 0.6
_MIN_CUT = 2  # characters of an answer a cut-off line must end with to count as truncated
_COPY_WORDS = 5


def normalize(text: str) -> str:
    """Liu et al. / SQuAD normalisation: lower-case, drop punctuation and articles, collapse whitespace."""
    text = text.lower()
    # Deleted, not replaced by a space (as in Liu et al.'s code): "482,913" matches "482913".
    text = "".join(ch for ch in text if not (ch in string.punctuation or unicodedata.category(ch).startswith("P")))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def first_line(output: str) -> str:
    """The first line of the stripped output (Liu et al. score only that line)."""
    return output.strip().split("\n", 1)[0].strip()


def _squad_tokens(text: str) -> list[str]:
    # The normalisation HotpotQA's and 2Wiki's official scripts use (SQuAD's), as a bag of tokens.
    return normalize(text).split()


def exact_match(prediction: str, answers: Sequence[str]) -> bool:
    """HotpotQA / 2Wiki exact match: the normalised prediction equals some normalised accepted answer.

    >>> exact_match("The Eiffel Tower.", ["eiffel tower"]), exact_match("It is the Eiffel Tower", ["Eiffel Tower"])
    (True, False)
    """
    pred = _squad_tokens(prediction)
    return any(pred == _squad_tokens(a) for a in answers)


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """HotpotQA / 2Wiki token F1: the best, over accepted answers, of the F1 of normalised token bags.

    ``yes`` / ``no`` / ``noanswer`` answers score only an exact match (as HotpotQA's official script does).

    >>> round(token_f1("It is the Eiffel Tower", ["Eiffel Tower"]), 3), token_f1("no", ["yes"])
    (0.667, 0.0)
    """
    pred = _squad_tokens(prediction)
    best = 0.0
    for answer in answers:
        gold = _squad_tokens(answer)
        if gold in (["yes"], ["no"], ["noanswer"]) or pred in (["yes"], ["no"], ["noanswer"]):
            best = max(best, float(pred == gold))
            continue
        common = sum((Counter(pred) & Counter(gold)).values())
        if common:
            precision, recall = common / len(pred), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


@dataclass(frozen=True)
class Score:
    """How one output scored: ``hit``, ``score`` (1/0, or recall for ``multi``), the miss class, details."""

    hit: bool
    score: float
    miss: MissClass | None
    first_line: str
    found: tuple[bool, ...] = ()
    copied_position: float | None = None


def _content_words(text: str) -> list[str]:
    return [w for w in normalize(text).split() if w not in _STOP]


def _is_echo(line: str, question: str) -> bool:
    norm = normalize(line)
    if norm.startswith("question"):
        return True
    q = set(_content_words(question))
    if not q:
        return False
    return len(q & set(_content_words(line))) / len(q) >= _ECHO_SHARE


def _cut_inside_answer(norm_line: str, answers: Sequence[str]) -> bool:
    """Whether the line ends with the start of an accepted answer ("... vault is 93405" for 934053)."""
    for a in answers:
        na = normalize(a)
        for k in range(min(len(na), len(norm_line)), 0, -1):
            if k >= min(_MIN_CUT, len(na)) and norm_line.endswith(na[:k]):
                return True
    return False


def _copied_span(line: str, document: str) -> float | None:
    """Relative position in ``document`` of a 5-word span of ``line`` copied verbatim, or None."""
    words = normalize(line).split()
    if len(words) < _COPY_WORDS or not document:
        return None
    doc = normalize(document)
    for i in range(len(words) - _COPY_WORDS + 1):
        at = doc.find(" ".join(words[i : i + _COPY_WORDS]))
        if at >= 0:
            return at / max(len(doc), 1)
    return None


def score_output(
    output: str,
    *,
    answers: Sequence[str],
    question: str,
    targets: Sequence[str] = (),
    distractors: Sequence[str] = (),
    distractor_positions: Mapping[str, float] | None = None,
    document: str = "",
    truncated: bool = False,
) -> Score:
    """Score one model output against the accepted ``answers`` (or all ``targets``, by recall).

    ``distractors`` are values of other items in the context; ``document`` is the context text, used to
    recognise copied spans. ``copied_position`` says where the copied item or span sat (0 = start).
    ``truncated`` says generation stopped at ``max_tokens`` (a first line still running is then its own class).
    """
    line = first_line(output)
    norm_line = normalize(line)
    if targets:
        norm_all = normalize(output)
        found = tuple(bool(normalize(t)) and normalize(t) in norm_all for t in targets)
        recall = sum(found) / len(found)
        hit = all(found)
    else:
        found = ()
        hit = any(normalize(a) and normalize(a) in norm_line for a in answers)
        recall = 1.0 if hit else 0.0
    if hit:
        return Score(True, recall, None, line, found)
    if targets and any(found):
        return Score(False, recall, "partial", line, found)
    if not norm_line:
        return Score(False, recall, "empty", line, found)
    if truncated and "\n" not in output.strip() and _cut_inside_answer(norm_line, [*answers, *targets]):
        return Score(False, recall, "truncated", line, found)
    positions = distractor_positions or {}
    for d in distractors:
        nd = normalize(d)
        if nd and nd in norm_line:
            return Score(False, recall, "wrong_item", line, found, positions.get(d))
    if _is_echo(line, question):
        return Score(False, recall, "echo", line, found)
    at = _copied_span(line, document)
    if at is not None:
        return Score(False, recall, "copied_context", line, found, at)
    return Score(False, recall, "other", line, found)
