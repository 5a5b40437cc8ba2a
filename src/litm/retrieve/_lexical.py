"""Words for lexical retrieval: lower case, English stopwords out, Snowball stems, CJK as character bigrams.

Chinese and Japanese are written without spaces, so a whitespace-and-punctuation tokenizer would read a whole
clause ("Python高级特性") as one word that no query ever matches. Runs of CJK characters are therefore cut
into overlapping character bigrams (高级 级特 特性), the usual choice of lexical engines for CJK (Lucene's
CJKAnalyzer), and a single CJK character stands as itself. Other text keeps bm25s's default rule: runs of
two or more word characters.

Example:
    >>> Analyzer()("The runners were running in Paris")
    ['runner', 'were', 'run', 'pari']
    >>> Analyzer()("Python高级特性")
    ['python', '高级', '级特', '特性']
"""

from __future__ import annotations

import re
from typing import Protocol

from litm.retrieve._deps import require

__all__ = ["Analyzer"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]{{2,}}")
_IS_CJK = re.compile(rf"[{_CJK}]")


class _Stemmer(Protocol):
    """The part of PyStemmer's ``Stemmer.Stemmer`` litm uses."""

    def stemWords(self, words: list[str]) -> list[str]: ...


class Analyzer:
    """Text to index terms. ``stemmer`` is a Snowball language (``None``: no stemming); ``stopwords``
    ``"en"`` uses bm25s's English list (``None``: keep every word)."""

    def __init__(self, stemmer: str | None = "english", stopwords: str | None = "en") -> None:
        self.stemmer_name = stemmer
        self._stemmer: _Stemmer | None = None
        if stemmer is not None:
            self._stemmer = require("Stemmer", "BM25 stemming (PyStemmer)").Stemmer(stemmer)
        self._stop: frozenset[str] = frozenset()
        if stopwords is not None:
            words = require("bm25s.stopwords", "BM25 stopwords")
            self._stop = frozenset(getattr(words, f"STOPWORDS_{stopwords.upper()}"))

    def __call__(self, text: str) -> list[str]:
        words: list[str] = []
        terms: list[str] = []
        for match in _TOKEN.finditer(text.lower()):
            token = match.group()
            if _IS_CJK.match(token):
                terms.extend([token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)])
            elif token not in self._stop:
                words.append(token)
                terms.append("")  # a slot the stemmed word fills, so terms keep text order
        if self._stemmer is not None and words:
            words = self._stemmer.stemWords(words)
        it = iter(words)
        return [t or next(it) for t in terms]
