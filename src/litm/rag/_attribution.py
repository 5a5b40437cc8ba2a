"""litm's attribution: which placed documents contain the answer, for a model that writes no citations.

A base model (the embedded Gemma 3 270M) completes "Answer:" with a phrase and never writes ``[id]``. To
still say where an answer came from, litm looks for the answer's text in each placed document, compared
after a light normalisation (case folded, punctuation dropped, whitespace collapsed), and reports the
documents that contain it with the span's character offsets, in the document and in its source file.

This is litm's grounding of the answer, not the model's citation: it shows which documents *contain* the
answer string, not which one the model read it from. A span of fewer than :data:`MIN_CHARS` characters
(``"1"``, ``"a"``) is not looked up, since it would match almost anywhere, and a word-like answer must match
whole words (``1901`` does not match inside ``19012``).

An answer that restates a passage in other words ("it is aged for nine months" against "the wheels mature for
nine months") is no copy, so when no document contains the answer verbatim, it is matched at the level of
content words and numbers: both sides are normalised (NFKC, case folded, number words as digits, thousands
separators dropped, a light English stemming, function words dropped; Chinese, Japanese and Korean text as
character bigrams, since no segmenter ships with litm), each document is cut into sentences by the package's
one splitter (:mod:`litm.util._sentences`), and the score of a span (one sentence or two adjacent ones) is the
share of the answer's content words it holds. The best-scoring documents are reported, with that span, when
the score is at least :data:`MIN_SCORE` and every number of the answer is in the span: "ten months" is not
grounded by "nine months". A verbatim match scores 1. The limit: a content word swapped for another (a
"cow's milk" answer against "sheep's milk") lowers the score but is not detected as a contradiction.

Example:
    >>> from litm.placement import place
    >>> plan = place([{"id": "a", "text": "Paris is the capital of France."},
    ...               {"id": "b", "text": "Lyon is in France."}], "none")
    >>> [(g.id, g.start, g.end) for g in ground(" paris.", plan)]
    [('a', 0, 5)]
    >>> ground("Berlin", plan), [g.id for g in ground("1. Lyon", plan)]
    ((), ['b'])
    >>> [(g.id, g.start, g.end, g.score) for g in ground("France's capital is Paris", plan)]
    [('a', 0, 31, 1.0)]
    >>> ground("Lyon lies in France", plan, question="Where does Lyon lie?")[0].score
    1.0
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from litm.compress import original_offset
from litm.placement import PlacementPlan
from litm.placement._plan import SlotInfo
from litm.util._sentences import sentence_spans

__all__ = ["MIN_CHARS", "MIN_SCORE", "Grounding", "content_tokens", "ground"]

#: The shortest normalised answer litm looks up.
MIN_CHARS = 2
#: The least share of an answer's content words a span must hold to ground it (2 of 3, 3 of 5; both of 2).
MIN_SCORE = 0.6
_LIST_MARKER = re.compile(r"^(?:\d{1,3}[.)]\s+|\d{1,3}\u3001\s*|[-*\u2022]\s+)")


@dataclass(frozen=True, slots=True)
class Grounding:
    """A placed document that supports the answer: ``text[start:end]`` is the supporting span in the document
    (the answer itself when it is there verbatim, else the sentence or two that hold most of its content
    words); ``source_start`` / ``source_end`` place it in the source file when the document carries its
    chunk's offsets (documents from :mod:`litm.retrieve` do), else None. ``score`` is the share of the answer's
    content words in the span: 1.0 for a verbatim match."""

    id: str
    slot: int
    rank: int
    start: int
    end: int
    source_start: int | None = None
    source_end: int | None = None
    score: float = 1.0

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "slot": self.slot, "rank": self.rank, "start": self.start, "end": self.end,
            "source_start": self.source_start, "source_end": self.source_end, "score": self.score,
        }  # fmt: skip


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded, without punctuation, whitespace runs as one space; and, for each character
    kept, its index in ``text`` (so a match maps back to the original span)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            continue
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for folded in ch.casefold():
            out.append(folded)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def _wordlike(ch: str) -> bool:
    # Letters and digits of scripts written with spaces; CJK characters are words on their own.
    return ch.isalnum() and unicodedata.east_asian_width(ch) not in ("W", "F")


def _find(needle: str, hay: str) -> int:
    """The first index of ``needle`` in ``hay`` that starts and ends on a word boundary, or -1."""
    at = hay.find(needle)
    while at >= 0:
        end = at + len(needle)
        before_ok = at == 0 or not (_wordlike(needle[0]) and _wordlike(hay[at - 1]))
        after_ok = end == len(hay) or not (_wordlike(needle[-1]) and _wordlike(hay[end]))
        if before_ok and after_ok:
            return at
        at = hay.find(needle, at + 1)
    return -1


def _grounding(slot: SlotInfo, start: int, end: int, score: float) -> Grounding:
    squeezed = slot.doc.metadata.get("compressed")
    if isinstance(squeezed, dict) and isinstance(squeezed.get("spans"), list) and squeezed["spans"]:
        # A compressed chunk: its text is kept sentences of the original, so the span is mapped back first.
        spans = squeezed["spans"]
        start, end = original_offset(spans, start), original_offset(spans, end)
    offset = slot.doc.metadata.get("start")
    base = offset if isinstance(offset, int) and not isinstance(offset, bool) else None
    source_start = None if base is None else base + start
    source_end = None if base is None else base + end
    return Grounding(slot.doc.id, slot.slot, slot.rank, start, end, source_start, source_end, score)


def ground(answer: str, plan: PlacementPlan, *, question: str | None = None) -> tuple[Grounding, ...]:
    """The placed documents of ``plan`` that support ``answer``, in slot order (see the module docstring).

    Every document that contains the answer verbatim (normalised) when one does; else the documents whose best
    span holds the largest share of the answer's content words, when that share is at least :data:`MIN_SCORE`
    and the span holds every number of the answer. Given the ``question``, its words are left out of that
    share: they are what was asked, not what the answer adds ("the tea garden lies by the sea" is not grounded
    by "the tea garden lies on a hillside" because both say "tea garden lies"). A leading list marker (``1.``,
    ``2)``, ``-``), which a base model often writes before its answer, and bracketed citations (``[fr#0]``) are
    not part of the answer.
    """
    text = _LIST_MARKER.sub("", answer.strip())
    stripped = _CITATIONS.sub(" ", text)
    text = stripped if stripped.strip() else text
    needle, _ = _normalised(text)
    if len(needle.replace(" ", "")) < MIN_CHARS:
        return ()
    found: list[Grounding] = []
    for slot in plan.slots:
        hay, where = _normalised(slot.doc.text)
        at = _find(needle, hay)
        if at >= 0:
            found.append(_grounding(slot, where[at], where[at + len(needle) - 1] + 1, 1.0))
    return tuple(found) if found else _by_content(text, plan, question)


# -- matching by content words ---------------------------------------------------------------------------------

# A citation the model wrote after its answer: its id's words are no part of the answer.
_CITATIONS = re.compile(r"[\[\u3010\uff3b][^\[\]\u3010\u3011\uff3b\uff3d\n]{1,200}[\]\u3011\uff3d]")
# A number (thousands separators and a decimal part kept together) or a run of letters.
_TOKEN = re.compile(r"\d+(?:[,\u00a0 ]\d{3}(?!\d))*(?:\.\d+)?|[^\W\d_]+")
# fmt: off
_STOPWORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "this", "that", "these",
    "those", "of", "in", "on", "at", "for", "to", "from", "by", "with", "and", "or", "but", "as", "into", "about",
    "than", "then", "there", "their", "they", "them", "he", "she", "him", "his", "her", "hers", "we", "our", "you",
    "your", "i", "me", "my", "do", "does", "did", "has", "have", "had", "so", "which", "who", "whom", "whose",
    "what", "when", "where", "how", "why", "can", "will", "would", "shall", "should", "could", "may", "might",
    "must", "also", "very", "each", "some", "any", "just", "only", "here", "over", "after", "before", "answer",
    "s", "t",
    # Light verbs of place and name: "is located in Paris" and "stands in Paris" say the same.
    "located", "situated", "lies", "lie", "stands", "stand", "called", "named", "known",
))
_NUMBER_WORDS = {
    w: str(n) for n, w in enumerate((
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
    ))
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90"}
# Chinese function characters: dropped before the bigrams, so "春茶在四月采摘" and "四月采摘春茶" share more.
_CJK_FUNCTION = frozenset("的了在是和与及也都就而被把着过吗呢吧啊之其或为于以")
_SUFFIXES = ("ing", "ed", "es", "s", "e")
# fmt: on


def _cjk(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _stem(word: str) -> str:
    """A light English stemming: "matures", "matured", "maturing" and "mature" all give "matur"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_tokens(text: str) -> tuple[list[str], set[str]]:
    """The content tokens of ``text`` (words stemmed, numbers as digits, CJK as character bigrams), and which of
    them are numbers.

    >>> tokens, numbers = content_tokens("It is aged for nine months, 85,000 of them.")
    >>> tokens, sorted(numbers)
    (['aged', '9', 'month', '85000'], ['85000', '9'])
    >>> content_tokens("春茶在四月采摘, 一千八百米")[0]
    ['春茶', '4', '月采', '采摘', '1800', '米']
    """
    tokens: list[str] = []
    numbers: set[str] = set()
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        word = m.group(0)
        if word[0].isdigit():
            number = re.sub(r"[,\u00a0 ]", "", word)
            tokens.append(number)
            numbers.add(number)
            continue
        # A run of letters may mix scripts ("kestrel茶园"): CJK characters become bigrams, the rest words.
        for w in "".join(c if not _cjk(c) else " " for c in word).split():
            if w in _NUMBER_WORDS:
                tokens.append(_NUMBER_WORDS[w])
                numbers.add(_NUMBER_WORDS[w])
            elif w not in _STOPWORDS and len(w) > 1:
                tokens.append(_stem(w))
        for chars in "".join(c if _cjk(c) else " " for c in word).split():
            # Chinese numerals are numbers ("四月" against "五月" must not match), the rest bigrams.
            for part in _CJK_NUMERAL.split(chars):
                if not part:
                    continue
                if _CJK_NUMERAL.fullmatch(part):
                    number = _cjk_number(part)
                    tokens.append(number)
                    numbers.add(number)
                    continue
                kept = [c for c in part if c not in _CJK_FUNCTION]
                tokens.extend(kept if len(kept) == 1 else ["".join(p) for p in itertools.pairwise(kept)])
    return tokens, numbers


_CJK_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"\u3007": 0, "两": 2}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}
_CJK_NUMERAL = re.compile("([零\u3007一二两三四五六七八九十百千万]+)")


def _cjk_number(text: str) -> str:
    """A Chinese numeral as digits: "一千八百" -> "1800", "十二" -> "12", "四" -> "4"."""
    total = section = digit = 0
    for ch in text:
        if ch in _CJK_DIGITS:
            digit = _CJK_DIGITS[ch]
        elif ch in _CJK_UNITS:
            section += (digit or 1) * _CJK_UNITS[ch]
            digit = 0
        else:  # 万
            total += (section + digit) * 10_000
            section = digit = 0
    return str(total + section + digit)


def _windows(text: str) -> list[tuple[int, int]]:
    """The spans a passage is matched by: each sentence, and each two adjacent sentences."""
    spans = sentence_spans(text)
    return spans + [(a[0], b[1]) for a, b in itertools.pairwise(spans)]


def _best(wanted: set[str], every: set[str], numbers: set[str], text: str) -> tuple[float, int, int]:
    """The best span of ``text`` for the answer's tokens ``wanted`` (``every``: with the question's words too):
    ``(score, start, end)``, score 0 when none qualifies."""
    best: tuple[float, int, int, int] = (0.0, 0, 0, 0)  # score, tokens of ``every`` held, -length, start
    where = (0, 0)
    for start, end in _windows(text):
        have = set(content_tokens(text[start:end])[0])
        if not numbers <= have:
            continue
        # Ties go to the span that also holds the question's words, then to the shorter one (one sentence
        # before two): it points closest to the support.
        key = (len(wanted & have) / len(wanted), len(every & have), start - end, -start)
        if key[0] > 0 and key > best:
            best, where = key, (start, end)
    return best[0], where[0], where[1]


def _by_content(answer: str, plan: PlacementPlan, question: str | None) -> tuple[Grounding, ...]:
    tokens, numbers = content_tokens(answer)
    asked = set(content_tokens(question)[0]) if question else set()
    wanted = set(tokens) - asked
    # One short token ("1. 1. 1." is {"1"}) would be in almost any document: like a verbatim answer under
    # MIN_CHARS, it is not looked up.
    if not wanted or (len(wanted) == 1 and len(next(iter(wanted))) < 3):
        return ()
    scored: list[tuple[float, SlotInfo, int, int]] = []
    for slot in plan.slots:
        score, start, end = _best(wanted, set(tokens), numbers, slot.doc.text)
        if score >= MIN_SCORE:
            scored.append((score, slot, start, end))
    if not scored:
        return ()
    top = max(s[0] for s in scored)
    return tuple(_grounding(slot, start, end, round(score, 3)) for score, slot, start, end in scored if score == top)
