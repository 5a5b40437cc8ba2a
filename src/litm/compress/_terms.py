"""The question's rare terms: words and numbers of the question that few of the documents contain.

A sentence that contains one is *protected*: it is picked before any unprotected sentence of its document,
so the question's own names and numbers are never the reason a sentence is cut (``protect="terms"``).
"Rare" means found in at most half of the documents: a word every passage shares (the topic of a retrieval)
singles nothing out. Latin text is compared as lower-cased words of three or more letters, or numbers, minus
a short stop list; CJK text as character bigrams, since Chinese has no spaces to split words on.

Example:
    >>> docs = ["Paris is in France.", "Lyon is in France.", "Berlin is in Germany."]
    >>> sorted(rare_terms("Which country is Paris in?", docs))
    ['paris']
    >>> sorted(terms("Which country is Paris in?"))
    ['country', 'paris']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

__all__ = ["STOPWORDS", "rare_terms", "terms"]

# fmt: off
#: Function words and question words that never single out a sentence.
STOPWORDS = frozenset((
    "the", "and", "for", "are", "was", "were", "who", "whom", "whose", "what", "which", "when", "where", "why",
    "how", "did", "does", "has", "have", "had", "this", "that", "these", "those", "with", "from", "into", "its",
    "his", "her", "their", "they", "them", "she", "him", "you", "your", "our", "not", "but", "can", "could",
    "would", "should", "will", "shall", "may", "might", "been", "being", "there", "here", "then", "than", "also",
    "about", "after", "before", "over", "under", "between", "during", "name", "named", "many", "much", "first",
    "last", "one", "all", "any", "some", "each", "other", "same", "such", "only", "both", "more", "most",
    "is", "in", "of", "to", "a", "an", "on", "at", "by", "as", "or", "it", "be", "do", "so", "if", "no",
))
# fmt: on

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def terms(text: str) -> set[str]:
    """The content terms of ``text``: lower-case words of 3+ letters or numbers (no stop words), and CJK bigrams."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            chars = [c for c in word if _CJK.match(c)]
            out.update(a + b for a, b in pairwise(chars))
            if len(chars) == 1:
                out.add(chars[0])
        elif word.isdigit() or (len(word) >= 3 and word not in STOPWORDS):
            out.add(word)
    return out


def rare_terms(question: str, documents: Sequence[str]) -> set[str]:
    """The question's terms found in at most half of ``documents`` (and in at least one)."""
    wanted = terms(question)
    if not wanted or not documents:
        return set()
    seen = [terms(d) for d in documents]
    limit = len(documents) / 2
    return {t for t in wanted if 0 < sum(t in s for s in seen) <= limit}
