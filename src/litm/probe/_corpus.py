"""Filler corpora: real prose, split into whole sentences, streamed in a seeded order.

A haystack is built from whole sentences so that a needle always sits at a sentence boundary. The
default corpus is the Wikipedia text of the bundled NaturalQuestions-Open passages (Liu et al.'s
release; Wikipedia text is CC BY-SA 3.0): real, varied encyclopaedic prose, never lorem ipsum. Users
probe with their own material instead: a directory of ``.txt`` / ``.md`` / ``.rst`` files, one such
file, or a JSON Lines file with a ``text`` field per line.

Example:
    >>> c = Corpus.from_texts(["Alpha comes first here. Beta follows it closely.", "Gamma ends the list."], name="tiny")
    >>> c.sentences
    ('Alpha comes first here.', 'Beta follows it closely.', 'Gamma ends the list.')
    >>> sorted(u.text for u in c.stream(seed=0))  # each unit carries the separator before it
    ['\\n\\nAlpha comes first here.', '\\n\\nGamma ends the list.', ' Beta follows it closely.']
    >>> Corpus.from_texts(["Too short. Is dropped."], name="x")
    Traceback (most recent call last):
    ...
    litm.errors.ProbeError: corpus 'x' has no usable sentences (need whole sentences of 4-80 words)
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from litm.errors import InputFormatError, ProbeError
from litm.eval._datasets import nq_rows
from litm.util._records import parse_json
from litm.util._sentences import split_sentences as _split

__all__ = ["DEFAULT_CORPUS_NAME", "Corpus", "Unit", "default_corpus", "load_corpus", "split_sentences"]

DEFAULT_CORPUS_NAME = "nq-wikipedia"
TEXT_SUFFIXES = (".txt", ".md", ".rst")
# A separator is part of the unit that follows it, so a unit's token cost is (nearly) context-free.
SENTENCE_SEP = " "
PARAGRAPH_SEP = "\n\n"

_TERMINAL = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+:.])\1{2,}\s*$")


@dataclass(frozen=True, slots=True)
class Unit:
    """One piece of a haystack: its text with the separator that precedes it, and its corpus sentence id.

    ``ref`` is the sentence index in the corpus (``None`` for needles and other inserted text), which is
    what a result row's recipe stores to rebuild the exact prompt.
    """

    text: str
    ref: int | None = None


def split_sentences(paragraph: str) -> list[str]:
    """Prose split into sentences by :func:`litm.util._sentences.split_sentences`, whitespace collapsed.

    The filler corpus and the budget's truncation share one splitter; collapsing first makes every corpus
    sentence single-spaced, which is what the recipes of stored probe rows rebuild.

    Example:
        >>> split_sentences("Dr. Who met Mr. Smith in St. Ives.\\n\\nThey talked. It rained!")
        ['Dr. Who met Mr. Smith in St. Ives.', 'They talked.', 'It rained!']
    """
    return _split(" ".join(paragraph.split()))


def _usable(sentence: str) -> bool:
    """Whole, prose-like sentences only: a table row or a cut-off fragment would not read as filler."""
    words = sentence.split()
    if not 4 <= len(words) <= 80 or not _TERMINAL.search(sentence):
        return False
    if not (sentence[0].isupper() or sentence[0] in "\"'\u201c(" or sentence[0].isdigit()):
        return False
    if "|" in sentence or "http" in sentence or "\t" in sentence:
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    return letters >= 0.6 * len(sentence)


class Corpus:
    """Sentences grouped in passages; :meth:`stream` yields them as :class:`Unit` values in a seeded order.

    Passages are shuffled by the seed (so each trial reads different prose) and each passage keeps its
    own sentence order, so the filler reads as paragraphs of real text.
    """

    def __init__(self, passages: Sequence[Sequence[str]], *, name: str) -> None:
        sentences: list[str] = []
        starts: list[bool] = []
        spans: list[tuple[int, int]] = []
        seen: set[str] = set()
        for passage in passages:
            begin = len(sentences)
            for s in passage:
                if s in seen:
                    continue
                seen.add(s)
                starts.append(len(sentences) == begin)
                sentences.append(s)
            if len(sentences) > begin:
                spans.append((begin, len(sentences)))
        if not sentences:
            raise ProbeError(f"corpus {name!r} has no usable sentences (need whole sentences of 4-80 words)")
        self.name = name
        self.sentences: tuple[str, ...] = tuple(sentences)
        self._starts = tuple(starts)
        self._spans = tuple(spans)

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, name: str) -> Corpus:
        """A corpus from raw passages (each split into sentences; unusable fragments dropped)."""
        return cls([[s for s in split_sentences(t) if _usable(s)] for t in texts], name=name)

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the sentence list: a recipe names it so a rebuild uses the same corpus."""
        h = hashlib.sha256()
        for s, st in zip(self.sentences, self._starts, strict=True):
            h.update(b"\x01" if st else b"\x00")
            h.update(s.encode("utf-8"))
            h.update(b"\n")
        return h.hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.sentences)

    def unit(self, ref: int) -> Unit:
        """Sentence ``ref`` as a unit, with the separator it carries in a stream."""
        return Unit((PARAGRAPH_SEP if self._starts[ref] else SENTENCE_SEP) + self.sentences[ref], ref)

    def stream(self, seed: int, exclude: Sequence[str] = ()) -> Iterator[Unit]:
        """Every sentence once, passages in a seeded order; sentences containing an ``exclude`` term skipped.

        The terms are a task's key words and answers, so the filler can neither answer nor contradict it.
        """
        order = list(range(len(self._spans)))
        random.Random(seed).shuffle(order)
        terms = [t.lower() for t in exclude if t]
        for p in order:
            begin, end = self._spans[p]
            for ref in range(begin, end):
                if terms and any(t in self.sentences[ref].lower() for t in terms):
                    continue
                yield self.unit(ref)


def _read_markup(text: str) -> list[str]:
    """Paragraphs of a .txt/.md/.rst file: code blocks, headings, rst underlines and directives dropped."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        stripped = line.strip()
        skip = in_fence or stripped.startswith(("#", ".. ", ":", ">>>", "    ")) or _RST_UNDERLINE.match(line)
        if not stripped or skip or line.startswith(("    ", "\t")):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped))
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _read_jsonl(path: Path) -> list[str]:
    texts: list[str] = []
    # Split on "\n" only: str.splitlines() also breaks on U+2028, which a JSON string may hold raw.
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, source=f"{path}:{i}")
        except InputFormatError as exc:  # bad JSON, too deep, an integer too long, an unpaired surrogate
            raise ProbeError(str(exc)) from None
        text = obj
        if isinstance(obj, dict):
            text = next((obj[k] for k in ("text", "content", "page_content", "contents") if k in obj), None)
        if not isinstance(text, str):
            raise ProbeError(f"{path}:{i}: expected a string or an object with a 'text' field")
        texts.extend(p for p in re.split(r"\n\s*\n", text) if p.strip())
    return texts


def load_corpus(path: str | Path) -> Corpus:
    """A corpus from a directory of ``.txt``/``.md``/``.rst`` files (recursive), one such file, or JSONL.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "notes.md").write_text("# Notes\\n\\nRivers flood every spring. Farmers plant after it.\\n")
        >>> load_corpus(folder).sentences
        ('Rivers flood every spring.', 'Farmers plant after it.')
    """
    p = Path(path)
    if not p.exists():
        raise ProbeError(f"corpus path not found: {p}")
    files = sorted(f for f in p.rglob("*") if f.suffix.lower() in (*TEXT_SUFFIXES, ".jsonl")) if p.is_dir() else [p]
    if not files:
        raise ProbeError(f"no .txt, .md, .rst or .jsonl files under {p}")
    texts: list[str] = []
    for f in files:
        try:
            is_jsonl = f.suffix.lower() == ".jsonl"
            texts.extend(_read_jsonl(f) if is_jsonl else _read_markup(f.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            raise ProbeError(f"{f} is not UTF-8 text") from None
    return Corpus.from_texts(texts, name=f"{p.name or p}")


_DEFAULT: Corpus | None = None


def default_corpus() -> Corpus:
    """The bundled default: Wikipedia passages of NQ-Open (CC BY-SA 3.0), split into whole sentences."""
    global _DEFAULT
    if _DEFAULT is None:
        texts = [str(ctx["text"]) for row in nq_rows() for ctx in row["ctxs"]]
        _DEFAULT = Corpus.from_texts(texts, name=DEFAULT_CORPUS_NAME)
    return _DEFAULT
