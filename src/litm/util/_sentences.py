"""The one sentence splitter of the package, for Latin and CJK punctuation alike.

Used to trim documents to a budget (``fit(truncate=True)``), to summarise history turns, and to build
the probe's filler corpus, so all three agree on what a sentence is.

Rules:

- A Latin sentence ends at ``.``, ``!`` or ``?`` (plus any closing quotes or brackets) when whitespace
  follows and the next word starts with a capital, a digit or a letter of a script without case, possibly
  after an opening quote or bracket. "the end. and more" is one sentence: a lower-case word after a
  period is far likelier an abbreviation than a new sentence.
- ``.``, ``!`` or ``?`` does not end a sentence after a known abbreviation ("Dr.", "e.g.", "etc."), a
  single letter ("J. R. R. Tolkien", "E! News") or a word that itself holds a period (an initialism
  "U.S.", a decimal "8.7", a domain "example.com"): cutting there is more often wrong than right, and a
  missed boundary only makes one sentence longer. A period inside a token ("3.14", "a.html?q=1") has no
  whitespace after it and never splits.
- A CJK sentence ends at a run of ``。``, ``！``, ``？`` or ``｡`` (plus closing brackets such as ``」``) whether or not
  whitespace follows: Chinese and Japanese put no space between sentences. Inside a Japanese quotation
  (``「...」``, ``『...』``) it does not: "「行くよ。」と彼は言った。" is one sentence.

Contract: :func:`sentence_spans` gives each sentence as ``(start, end)`` offsets into the text, in order,
without surrounding whitespace; what lies between two spans is whitespace only. So
``text[:spans[k][1]]`` is an exact prefix of whole sentences, and :func:`split_sentences` (the span
texts) rejoined with single spaces equals the text up to whitespace.

Example:
    >>> split_sentences("Dr. Smith arrived at 3.30 p.m. on Friday. He left, e.g. at noon. Done!")
    ['Dr. Smith arrived at 3.30 p.m. on Friday.', 'He left, e.g. at noon.', 'Done!']
    >>> split_sentences("我们今天去北京。明天去上海！你呢？")
    ['我们今天去北京。', '明天去上海！', '你呢？']
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["ABBREVIATIONS", "first_sentence", "sentence_spans", "split_sentences"]

#: Lower-case words that a period follows without ending the sentence (compared without the period).
# fmt: off
ABBREVIATIONS = frozenset((
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "no", "vs", "etc", "fig", "e.g", "i.e", "al", "approx",
    "dept", "est", "gen", "gov", "inc", "ltd", "co", "corp", "mt", "ft", "sgt", "col", "lt",
))
# fmt: on

_CLOSE = "\"'\u201d\u2019)\\]"
_OPEN = "\"'\u201c\u2018(\\["
_CJK_CLOSE = "\u300d\u300f\uff09\u3011\u201d\u2019\"'"
# Group "latin": the end punctuation of a Latin sentence, then whitespace, then (looked at, not consumed)
# an optional opening quote and a word character; the code checks that word's case.
# Group "cjk": a run of CJK full stops, exclamation or question marks ("？！" is one end), then optional
# whitespace before more text.
_BOUNDARY = re.compile(
    rf"(?P<latin>[.!?][{_CLOSE}]*)\s+(?=[{_OPEN}]?(?P<next>\w))"
    rf"|(?P<cjk>[\u3002\uff01\uff1f\uff61]+[{_CJK_CLOSE}]*)\s*(?=\S)"
)


def _ends_sentence(text: str, start: int, match: re.Match[str]) -> bool:
    """Whether a Latin candidate boundary really ends a sentence (see the module rules)."""
    if match["next"].islower():
        return False
    # The word the punctuation ends, found by walking back to whitespace: splitting everything since
    # ``start`` instead would make a long text full of abbreviations quadratic.
    end = match.start() + 1
    begin = end - 1
    while begin > start and not text[begin - 1].isspace():
        begin -= 1
    last = text[begin:end].rstrip(".!?").lower()
    if last in ABBREVIATIONS or "." in last:
        return False
    return not (len(last) == 1 and last.isalpha())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each sentence of ``text``, in order, without surrounding whitespace.

    >>> text = "One. Two!  三。四"
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['One.', 'Two!', '三。', '四']
    """
    return list(_spans(text))


def _spans(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    depth, seen = 0, 0  # open Japanese quotes 「『 before ``seen``, counted as the scan goes (never rescanned)
    for m in _BOUNDARY.finditer(text):
        if m["latin"] is not None:
            if not _ends_sentence(text, start, m):
                continue
        else:
            gap = text[seen : m.start()]
            depth = max(depth + sum(map(gap.count, "\u300c\u300e")) - sum(map(gap.count, "\u300d\u300f")), 0)
            seen = m.start()
            if depth:
                continue  # 「行くよ。」と言った: a full stop inside a quotation does not end the sentence
        yield from _trimmed(text, start, m.end("latin") if m["latin"] is not None else m.end("cjk"))
        start = m.end()
    yield from _trimmed(text, start, len(text))


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` narrowed to the non-whitespace inside it; nothing when it is all whitespace."""
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        lead = start + len(piece) - len(piece.lstrip())
        yield lead, lead + len(stripped)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see :func:`sentence_spans`); ``" ".join`` restores it up to whitespace.

    >>> split_sentences("One. Two! Three")
    ['One.', 'Two!', 'Three']
    """
    return [text[a:b] for a, b in sentence_spans(text)]


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of ``text`` with whitespace collapsed, cut to ``limit`` characters.

    >>> first_sentence("Call Dr. Lee at 9. She knows.")
    'Call Dr. Lee at 9.'
    """
    text = " ".join(text.split())
    first = text[: next(_spans(text), (0, 0))[1]]
    return first if len(first) <= limit else first[: limit - 1] + "…"
