"""Reading a quote-first reply: the quote, the answer after the marker, and the document the quote came from.

A quote-first prompt (``Wording(quote_first=True)``, ``build_prompt(..., quote_first=True)``) asks the model to
copy the sentence of the documents that best answers the question, then to write the answer on its own line
after ``Answer:``. :func:`parse_quoted_answer` splits the reply there and looks the quote up in the prompt's
documents, which grounds the answer in a document by what the model copied, not by what it cited.

A quote is **found** in a document when at least ``threshold`` (default 0.8) of its characters lie in stretches
that the document also contains, each at least :data:`MIN_RUN` characters long (difflib's matching blocks:
the longest common substring, then the longest ones left of it and right of it, and so on). Both texts are
compared normalised: Unicode NFKC, case-folded, every run of characters other than letters and digits read as
one space. So a quote with other punctuation, capitals or line breaks is found, one with a word changed
in its middle keeps most of its characters in two long stretches (0.89 for a 66-character quote with one
word changed, see :func:`quote_match`), and words copied from here and there (stretches shorter than
:data:`MIN_RUN`) count for nothing.

Example:
    >>> from litm.prompt import build_prompt
    >>> docs = [{"id": "fr", "text": "Paris is the capital of France."}, {"id": "it", "text": "Rome is in Italy."}]
    >>> p = build_prompt(docs, "What is the capital of France?", quote_first=True)
    >>> q = parse_quoted_answer(' "paris is the capital of France"\\nAnswer: Paris', p)
    >>> q.answer, q.quote_found, q.doc_id
    ('Paris', True, 'fr')
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from litm.errors import PromptError
from litm.placement._documents import to_docs
from litm.prompt._parse import BuiltPrompt
from litm.prompt._templates import LANGS, PromptTemplate

__all__ = ["COPY_WORDS", "MIN_RUN", "QUOTE_THRESHOLD", "QuotedAnswer", "parse_quoted_answer", "quote_match"]

#: The share of a quote's characters that must lie in stretches a document contains for the quote to be found.
QUOTE_THRESHOLD = 0.8
#: The shortest common stretch (normalised characters) that counts towards a match; a quote shorter than
#: this must appear whole.
MIN_RUN = 8
#: The fewest words an unlabelled reply without the answer marker must have to be read as a quote when a document
#: holds it (as litm's miss classes count a copied span); a shorter one is an answer.
COPY_WORDS = 5

_NON_WORD = re.compile(r"[\W_]+")
# Quotation marks a model may wrap its quote in (ASCII, typographic, CJK corner brackets).
_QUOTE_MARKS = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb\u300c\u300d\u300e\u300f"


@dataclass(frozen=True)
class QuotedAnswer:
    """A quote-first reply, read.

    ``quote``: the quoted text (label and quotation marks removed; empty when there was none). ``answer``: the
    first non-empty line after the answer marker (empty when the reply began a quote and never reached the
    marker). ``quote_found``: the quote is in a document (see :func:`quote_match`); ``doc_id`` is then that
    document's own id (the best match, the earlier in the prompt on a tie), else None; ``score`` is the best
    match in [0, 1]. ``marker_found``: the reply had the answer marker.
    """

    quote: str
    answer: str
    quote_found: bool
    doc_id: str | None
    score: float
    marker_found: bool


def _normalised(text: str) -> str:
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def quote_match(quote: str, text: str) -> float:
    """The share of ``quote``'s characters that ``text`` also contains, in order, in stretches of at least
    :data:`MIN_RUN` characters (both normalised: NFKC, case-folded, non-word runs as one space); 0 for an empty
    quote.

    >>> quote_match("PARIS is the capital  of France!", "Paris is the capital of France.")
    1.0
    >>> doc = "The Eiffel Tower was finished in 1889 for the World Fair in Paris."
    >>> round(quote_match("The Eiffel tower was completed in 1889 for the World Fair in Paris", doc), 2)
    0.89
    >>> round(quote_match("Paris is the largest city of France", "Paris is the capital of France."), 2)
    0.66
    >>> quote_match("tower Paris 1889", doc)
    0.0
    """
    q, t = _normalised(quote), _normalised(text)
    if not q:
        return 0.0
    least = min(MIN_RUN, len(q))
    blocks = difflib.SequenceMatcher(None, q, t, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks if b.size >= least) / len(q)


def _docs(documents: BuiltPrompt | Sequence[object]) -> list[tuple[str, str]]:
    if isinstance(documents, BuiltPrompt):
        return [(b.id, b.doc.text) for b in documents.blocks]
    return [(d.id, d.text) for d in to_docs(documents)]


def _markers(documents: object, template: PromptTemplate | None) -> tuple[list[str], list[str]]:
    """The quote labels and answer markers to read: the given template's, the prompt's, else every built-in one."""
    if template is None and isinstance(documents, BuiltPrompt):
        template = documents.template
    templates = [template] if template is not None else [PromptTemplate.for_lang(lang) for lang in LANGS]
    cues = [t.quote_cue.strip() for t in templates if t.quote_cue.strip()]
    markers = [t.answer_marker.strip() for t in templates if t.answer_marker.strip()]
    return cues, markers


def _strip_label(text: str, labels: Sequence[str]) -> tuple[str, bool]:
    for label in labels:
        if text[: len(label)].casefold() == label.casefold():
            return text[len(label) :].strip(), True
    return text, False


def parse_quoted_answer(
    reply: str,
    documents: BuiltPrompt | Sequence[object],
    *,
    prefilled: bool = False,
    threshold: float = QUOTE_THRESHOLD,
    template: PromptTemplate | None = None,
) -> QuotedAnswer:
    """Read a quote-first ``reply``: the quote, the answer after the marker, and where the quote is from.

    ``documents``: the built :class:`~litm.prompt.Prompt` (its documents, its template's labels and marker,
    its own document ids) or the documents themselves (anything :func:`litm.placement.to_docs` reads; the
    English and Chinese labels are then both read). ``prefilled``: the reply continues a prompt that already
    ended with the quote label (the plain-text and Anthropic forms, :attr:`~litm.prompt.Prompt.prefill`).

    The reply is split at the first answer marker (``Answer:``, any case, anywhere): the quote is what comes
    before it, without a leading ``Quote:`` label and quotation marks; the answer is the first non-empty line
    after it. A reply without the marker is a quote with no answer when it began a quote (the label, or
    ``prefilled``: it stopped inside the quote or never gave the answer) or when its text is found in a
    document (an unlabelled quote, :data:`COPY_WORDS` words or more); otherwise its first line is an answer
    with no quote (the model ignored the request and answered). A quote is never read as the answer: text
    copied from the documents would otherwise score.
    ``threshold`` is the share of the quote a document must contain (see :func:`quote_match`).

    >>> docs = ["Rome is in Italy.", "Paris is the capital of France."]
    >>> q = parse_quoted_answer("Quote: Paris is the capital of France.\\nAnswer: Paris.", docs)
    >>> q.quote, q.answer, q.doc_id, q.score
    ('Paris is the capital of France.', 'Paris.', 'doc-2', 1.0)
    >>> parse_quoted_answer("Paris", docs).answer, parse_quoted_answer("Paris", docs, prefilled=True).answer
    ('Paris', '')
    >>> q = parse_quoted_answer("Paris is the capital of France.", docs)
    >>> q.answer, q.quote_found
    ('', True)
    """
    if not isinstance(reply, str):
        raise PromptError(f"the reply must be a string, got {type(reply).__name__}")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise PromptError(f"threshold must be a number in (0, 1], got {threshold!r}")
    if not isinstance(documents, BuiltPrompt) and (
        isinstance(documents, str | bytes) or not isinstance(documents, Sequence)
    ):
        raise PromptError(f"documents must be a Prompt or a list of documents, got {type(documents).__name__}")
    docs = _docs(documents)
    labels, markers = _markers(documents, template)
    text, labelled = _strip_label(reply.strip(), labels)
    pattern = re.compile("|".join(re.escape(m) for m in markers), re.IGNORECASE)
    hit = pattern.search(text)
    if hit is not None:
        quote = text[: hit.start()]
        answer = next((line.strip() for line in text[hit.end() :].splitlines() if line.strip()), "")
    elif labelled or prefilled or _copied(text, docs, threshold):
        quote, answer = text, ""
    else:
        quote, answer = "", next((line.strip() for line in text.splitlines() if line.strip()), "")
    quote = _unquoted(quote)
    best_id, best = _best(quote, docs)
    found = bool(quote) and best >= threshold
    return QuotedAnswer(quote, answer, found, best_id if found else None, round(best, 4), hit is not None)


def _copied(text: str, docs: Sequence[tuple[str, str]], threshold: float) -> bool:
    """An unlabelled reply is a quote when it is a stretch of a document of :data:`COPY_WORDS` words or more (a
    short answer is in some document too)."""
    text = _unquoted(text)
    return len(_normalised(text).split()) >= COPY_WORDS and _best(text, docs)[1] >= threshold


def _unquoted(text: str) -> str:
    return text.strip().strip(_QUOTE_MARKS).strip()


def _best(quote: str, docs: Sequence[tuple[str, str]]) -> tuple[str | None, float]:
    """The document that holds most of ``quote`` (the earlier one on a tie) and its :func:`quote_match`."""
    best_id, best = None, 0.0
    for doc_id, doc_text in docs:
        score = quote_match(quote, doc_text)
        if score > best:
            best_id, best = doc_id, score
    return best_id, best
