"""A script-aware estimate for models whose tokenizer is not available, calibrated as an upper bound.

The estimate counts a text's characters by script and shape (Latin letters and words, CJK characters,
letters of other scripts, digits, punctuation, whitespace, emoji and other rare symbols) and weighs each
class by tokens per character. The weights (:data:`SCRIPT_WEIGHTS`) were fitted by
``benchmarks/bench_estimate.py`` so that the estimate is at least the count of every large-vocabulary
tokenizer available offline (OpenAI's ``o200k_base`` and ``cl100k_base``, Gemma 3's llama.cpp tokenizer,
and the legacy Claude tokenizer Anthropic published) on every calibration text of a multilingual corpus
(English NQ passages, Chinese, Japanese, Korean, Russian, Greek, Arabic, Hebrew, Hindi, Thai, seven
Latin-script languages, code, JSON, numbers, emoji). Measured per script and tokenizer in
``docs/results/bench-estimate/README.md``: it counts 1.2 times the real tokens of English prose, 1.1 to
1.3 times of code, at least 1.17 times of Chinese; the flat 3.5 characters per token it replaces counts a
third of the real tokens of Chinese and a sixth of Thai.

Every estimate carries a margin, which a budget adds (see :class:`~litm.models.tokenizers._base.TokenCount`):
:data:`ESTIMATE_MARGIN` by default, :data:`ANY_MODEL_MARGIN` for a model that may have a small vocabulary.

>>> est = EstimateTokenizer()
>>> est.count("The capital of France is Paris."), est.count("法国的首都是巴黎。")
(8, 14)
>>> est.exact, est.margin
(False, 0.15)
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache

from litm.errors import InvalidOptionError, ModelError
from litm.prompt._messages import Message, check_messages

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "ANY_MODEL_MARGIN",
    "CLASSES",
    "ESTIMATE_MARGIN",
    "ESTIMATE_REPLY_TOKENS",
    "ESTIMATE_TOKENS_PER_MESSAGE",
    "SCRIPT_WEIGHTS",
    "EstimateTokenizer",
    "script_counts",
]

#: Anthropic's rule of thumb ("a token is approximately 3.5 English characters"). No longer litm's
#: estimate (it undercounts every non-Latin script); kept for callers that ask for a flat rule.
ANTHROPIC_CHARS_PER_TOKEN = 3.5

#: The character classes of :func:`script_counts`, in order. Letters are split by script and by their UTF-8
#: length, since a byte-level tokenizer that has no merge for a character falls back to its bytes: ``letter``
#: ASCII letters; ``word`` runs of Latin letters (a BPE token rarely spans two words); ``xword`` those runs
#: that hold an accented letter (words of other languages than English split more); ``letter2`` other
#: letters of 2 UTF-8 bytes (accented Latin, Greek, Cyrillic, Hebrew, Arabic); ``cjk`` Han, kana, CJK and
#: full-width punctuation; ``hangul``; ``letter3`` other letters of 3 bytes (Indic, Thai, Vietnamese's
#: precomposed vowels); ``digit``; ``punct`` ASCII and other punctuation and symbols; ``space``;
#: ``emoji`` emoji, joiners, variation selectors and every other 4-byte character.
CLASSES = ("letter", "word", "xword", "letter2", "cjk", "hangul", "letter3", "digit", "punct", "space", "emoji")

#: Tokens per character of each class (``word``: per run of Latin letters, on top of its letters), fitted
#: by ``python benchmarks/bench_estimate.py --fit`` as an upper bound of every tokenizer measured.
SCRIPT_WEIGHTS: Mapping[str, float] = {
    "letter": 0.19,
    "word": 0.0,
    "xword": 5.37,
    "letter2": 1.21,
    "cjk": 1.51,
    "hangul": 1.24,
    "letter3": 1.76,
    "digit": 1.17,
    "punct": 0.68,
    "space": 0.49,
    "emoji": 2.42,
}

#: The margin on an estimate: the estimate bounded every measured tokenizer on every calibration text; this
#: fraction covers texts and tokenizers it was not fitted on (docs/results/bench-estimate: the worst held-out
#: text needed less, and the unpublished Claude tokenizers could not be measured).
ESTIMATE_MARGIN = 0.15

#: The margin for a model that may have a small vocabulary (an OpenAI-compatible server whose model litm
#: cannot see): SmolLM2's 49k-token vocabulary needs up to this much more than the estimate on non-English
#: text (docs/results/bench-estimate), as byte-level tokenizers fall back to bytes for unknown characters.
ANY_MODEL_MARGIN = 1.0

#: Chat overhead an estimate allows per message and once per request (role headers, turn delimiters, the
#: reply header, a default system prompt some templates add): the largest measured, SmolLM2's template.
ESTIMATE_TOKENS_PER_MESSAGE = 8
ESTIMATE_REPLY_TOKENS = 40

_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]+")


@lru_cache(maxsize=65_536)
def _char_class(ch: str) -> str:
    """The class of one character (cached: a text has few distinct characters)."""
    code = ord(ch)
    if ch.isspace():
        return "space"
    if code < 0x80:
        return "letter" if ch.isalpha() else "digit" if ch.isdigit() else "punct"
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    if (
        0x2E80 <= code <= 0x9FFF  # CJK radicals, CJK symbols and punctuation, kana, Han
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
    ):
        return "cjk"
    category = unicodedata.category(ch)
    if code > 0xFFFF or category in ("So", "Cs", "Co", "Cn") or 0xFE00 <= code <= 0xFE0F or code == 0x200D:
        return "emoji"
    if category[0] in ("L", "M") or category == "Nd":
        return "letter2" if code < 0x800 else "letter3"
    return "punct"


_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())
_ASCII_LETTER = bytes(c for c in range(128) if chr(c).isalpha())
_ASCII_DIGIT = bytes(c for c in range(128) if chr(c).isdigit())
#: Maps every ASCII letter to itself and everything else to a space, so ``split()`` yields the letter runs.
_LETTER_RUNS = bytes(c if chr(c).isalpha() else 0x20 for c in range(256))


def _ascii_counts(text: str, counts: dict[str, int]) -> dict[str, int]:
    """:func:`script_counts` of an ASCII text with bytes operations that run in C: the gateway counts every
    request with this, and the per-character loop cost about 0.35 ms on a 1k-token prompt. Same result as
    the general path (tested)."""
    raw = text.encode("ascii")
    n = len(raw)
    counts["space"] = n - len(raw.translate(None, _ASCII_SPACE))
    counts["letter"] = n - len(raw.translate(None, _ASCII_LETTER))
    counts["digit"] = n - len(raw.translate(None, _ASCII_DIGIT))
    counts["punct"] = n - counts["space"] - counts["letter"] - counts["digit"]
    counts["word"] = len(raw.translate(_LETTER_RUNS).split()) if counts["letter"] else 0
    return counts


def script_counts(text: str) -> dict[str, int]:
    """How many characters of ``text`` fall in each class of :data:`CLASSES` (``word``: runs of letters).

    >>> counts = script_counts("Hi Ünal, 世界 42!")
    >>> {c: n for c, n in counts.items() if n}
    {'letter': 5, 'word': 2, 'xword': 1, 'letter2': 1, 'cjk': 2, 'digit': 2, 'punct': 2, 'space': 3}
    """
    counts = dict.fromkeys(CLASSES, 0)
    if text.isascii():
        return _ascii_counts(text, counts)
    return _any_counts(text, counts)


def _any_counts(text: str, counts: dict[str, int]) -> dict[str, int]:
    """:func:`script_counts` of any text, one class lookup per distinct character."""
    for ch, n in Counter(text).items():
        counts[_char_class(ch)] += n
    if counts["letter"] or counts["letter2"] or counts["letter3"]:
        for m in _LATIN_WORD.finditer(text):
            counts["word"] += 1
            counts["xword"] += not m.group().isascii()
    return counts


class EstimateTokenizer:
    """An upper-bound estimate for models whose tokenizer is not available; never exact, no token ids.

    By default counts are script-aware (:data:`SCRIPT_WEIGHTS`) with :data:`ESTIMATE_MARGIN`; messages add
    :data:`ESTIMATE_TOKENS_PER_MESSAGE` each and :data:`ESTIMATE_REPLY_TOKENS` once. ``chars_per_token``
    selects a flat rule of your own instead (``ceil(characters / chars_per_token)``); pass its ``margin``.

    >>> EstimateTokenizer(chars_per_token=3.5, margin=0.5).count("x" * 35)
    10
    """

    #: Roles :meth:`count_messages` accepts: any, since the overhead allowed does not depend on the role.
    roles: tuple[str, ...] | None = None

    def __init__(
        self,
        chars_per_token: float | None = None,
        *,
        label: str = "estimate",
        margin: float | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        if chars_per_token is not None and not (isinstance(chars_per_token, int | float) and chars_per_token > 0):
            raise InvalidOptionError(f"chars_per_token must be a number > 0, got {chars_per_token!r}")
        if margin is not None and not (isinstance(margin, int | float) and math.isfinite(margin) and margin >= 0):
            raise InvalidOptionError(f"margin must be a finite number >= 0, got {margin!r}")
        table = dict(SCRIPT_WEIGHTS if weights is None else weights)
        if set(table) != set(CLASSES) or any(not (isinstance(w, int | float) and w >= 0) for w in table.values()):
            raise InvalidOptionError(f"weights must give a number >= 0 for each of {', '.join(CLASSES)}")
        self.chars_per_token = chars_per_token
        self.weights = table
        self.label = label
        self.margin = float(ESTIMATE_MARGIN if margin is None else margin)
        #: Why counts are estimated, for messages and ``TokenCount.notes``.
        self.note = f"{self.name} is not the model's own tokenizer"

    @property
    def name(self) -> str:
        rule = f"{self.chars_per_token:g} characters per token" if self.chars_per_token else "script-aware"
        return f"{self.label} ({rule})"

    @property
    def exact(self) -> bool:
        return False

    def encode(self, text: str) -> list[int]:
        raise ModelError(f"{self.name} only estimates counts; it has no token ids")

    def count(self, text: str) -> int:
        if self.chars_per_token:
            return math.ceil(len(text) / self.chars_per_token)
        counts = script_counts(text)
        return math.ceil(round(sum(self.weights[c] * n for c, n in counts.items()), 6))

    def count_messages(self, messages: Sequence[Message]) -> int:
        checked = check_messages(messages, roles=None)
        text = sum(self.count(msg["content"]) + self.count(msg.get("name", "")) for msg in checked)
        return text + ESTIMATE_TOKENS_PER_MESSAGE * len(checked) + ESTIMATE_REPLY_TOKENS

    def __repr__(self) -> str:
        return f"EstimateTokenizer({self.name!r}, margin={self.margin:g})"
