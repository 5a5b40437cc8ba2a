"""Readers that turn one file's bytes into the texts to index: plain text, Markdown, reStructuredText, HTML,
JSON Lines and (with the ``pdf`` extra) PDF.

Every reader takes the bytes already read (the index reads a file once, hashes and parses the same bytes)
and returns :class:`SourceText` values. Character offsets kept for citations refer to ``SourceText.text``:
the decoded file with newlines normalised to ``\\n`` for text formats, the extracted text for HTML and PDF.

A file of a text format whose bytes are not text (a program renamed ``notes.txt``, random bytes named
``data.md``) raises :class:`UnreadableFileError` instead of being indexed as garbage: see :func:`not_text`.

Example:
    >>> [t.title for t in read_bytes(b"# Install\\n\\nRun pip.", "docs/install.md")]
    ['Install']
    >>> [(t.key, t.text) for t in read_bytes(b'{"id": "q1", "text": "Paris."}\\n', "faq.jsonl")]
    [('faq.jsonl#q1', 'Paris.')]
    >>> try:
    ...     read_bytes(b"\\x7fELF\\x02\\x01\\x01\\x00\\x00", "notes.txt")
    ... except UnreadableFileError as exc:
    ...     print(exc)
    notes.txt: not text: it contains NUL bytes (a binary file, or UTF-16 text: save it as UTF-8)
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Any

from litm.errors import InputFormatError, InvalidDocumentError, UnreadableFileError
from litm.placement._documents import to_doc
from litm.retrieve._deps import PDF_INSTALL, require

__all__ = [
    "EXTENSIONS",
    "MAX_CONTROL",
    "MAX_UNDECODABLE",
    "SourceText",
    "UnreadableFileError",
    "not_text",
    "read_bytes",
]

#: Above this share of characters that are not valid UTF-8, bytes are not text: random bytes score about half,
#: Latin-1 prose (whose accented letters are the undecodable part) a few per cent.
MAX_UNDECODABLE = 0.3
#: Above this share of control characters, bytes are not text: random bytes score about 12%, text 0.
MAX_CONTROL = 0.02
# C0 and C1 control characters that no text file needs; tab, newlines, form feed and ESC (colour codes in
# logs) are allowed.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")


def not_text(data: bytes) -> str | None:
    """Why ``data`` is not UTF-8 text, or None when it is.

    Binary: any NUL byte, more than :data:`MAX_CONTROL` of the decoded characters control characters, or more
    than :data:`MAX_UNDECODABLE` not valid UTF-8. A few stray bytes (a Latin-1 ``café``) do not make a file
    binary: they are read as U+FFFD.

    >>> not_text("Grüße, 世界\\n".encode()) is None, not_text(b"caf\\xe9 au lait") is None
    (True, True)
    >>> not_text(bytes(range(128, 256)) * 4)
    '100% of its characters are not valid UTF-8'
    """
    if b"\x00" in data:
        return "it contains NUL bytes (a binary file, or UTF-16 text: save it as UTF-8)"
    text = data.decode("utf-8", errors="replace")
    if not text:
        return None
    controls = len(_CONTROL.findall(text)) / len(text)
    if controls > MAX_CONTROL:
        return f"{controls:.0%} of its characters are control characters"
    # U+FFFD that was in the file already is text, not a decoding failure.
    undecodable = (text.count("\ufffd") - data.count("\ufffd".encode())) / len(text)
    if undecodable > MAX_UNDECODABLE:
        return f"{undecodable:.0%} of its characters are not valid UTF-8"
    return None


@dataclass(frozen=True, slots=True)
class SourceText:
    """One text to chunk: a whole file, or one record of a JSON Lines file.

    ``key`` is unique within an index (``notes/a.md``, ``faq.jsonl#q1``); ``source`` is what a citation shows
    (the file's path relative to the indexed folder, or a record's own ``source`` field).
    """

    key: str
    source: str
    title: str | None
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _decode(data: bytes, rel: str) -> str:
    problem = not_text(data)
    if problem is not None:
        raise UnreadableFileError(f"{rel}: not text: {problem}")
    # The few undecodable bytes left become U+FFFD rather than failing a whole folder; BOMs and CRLF are
    # normalised so offsets count the same characters on every platform.
    return data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _plain(data: bytes, rel: str) -> list[SourceText]:
    return [SourceText(rel, rel, PurePosixPath(rel).stem, _decode(data, rel))]


_ATX = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_UNDERLINE = re.compile(r"^(\S.*)\n([=\-~^#*+])\2{2,}[ \t]*$", re.MULTILINE)


def _markdown(data: bytes, rel: str) -> list[SourceText]:
    text = _decode(data, rel)
    heading = _ATX.search(text)
    setext = _UNDERLINE.search(text)
    # The heading that comes first in the file is the title, whichever style it uses.
    best = min((m for m in (heading, setext) if m), key=lambda m: m.start(), default=None)
    return [SourceText(rel, rel, best.group(1).strip() if best else PurePosixPath(rel).stem, text)]


def _rst(data: bytes, rel: str) -> list[SourceText]:
    text = _decode(data, rel)
    match = _UNDERLINE.search(text)
    return [SourceText(rel, rel, match.group(1).strip() if match else PurePosixPath(rel).stem, text)]


class _HTMLText(HTMLParser):
    """Visible text of an HTML page; block elements become paragraph breaks, so chunking sees them."""

    _BLOCKS = frozenset(
        {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure"}
        | {"footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol"}
        | {"p", "pre", "section", "table", "td", "th", "tr", "ul"}
    )
    _HIDDEN = frozenset({"script", "style", "template", "noscript", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: str | None = None
        self.h1: str | None = None
        self._hidden = 0
        self._capture: str | None = None
        self._captured: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        if tag in ("title", "h1") and self._capture is None:
            self._capture, self._captured = tag, []
        if tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN and self._hidden:
            self._hidden -= 1
        if tag == self._capture:
            value = " ".join("".join(self._captured).split()) or None
            if tag == "title" and self.title is None:
                self.title = value
            elif tag == "h1" and self.h1 is None:
                self.h1 = value
            self._capture = None
        if tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._capture is not None:
            self._captured.append(data)
        if not self._hidden:
            self.parts.append(data)

    def text(self) -> str:
        # Collapse runs of spaces inside lines and runs of blank lines, as a browser would render them.
        raw = "".join(self.parts)
        paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", raw))
        return "\n\n".join(p for p in paragraphs if p)


def _html(data: bytes, rel: str) -> list[SourceText]:
    parser = _HTMLText()
    parser.feed(_decode(data, rel))
    parser.close()
    return [SourceText(rel, rel, parser.title or parser.h1 or PurePosixPath(rel).stem, parser.text())]


def _jsonl(data: bytes, rel: str) -> list[SourceText]:
    out: list[SourceText] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(_decode(data, rel).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            doc = to_doc(json.loads(line), index=len(out))
        except ValueError as exc:
            raise InputFormatError(f"{rel}:{number}: not a JSON object ({exc})") from exc
        except InvalidDocumentError as exc:
            raise InputFormatError(f"{rel}:{number}: {exc}") from exc
        if doc.id in seen:
            # Two records with one id would make two chunks that a citation cannot tell apart.
            raise InputFormatError(f"{rel}:{number}: id {doc.id!r} already used on line {seen[doc.id]}")
        seen[doc.id] = number
        meta = {k: v for k, v in doc.metadata.items() if _json_safe(v)}
        meta["line"] = number
        out.append(SourceText(f"{rel}#{doc.id}", doc.source or rel, doc.title, doc.text, meta))
    return out


def _json_safe(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _pdf(data: bytes, rel: str) -> list[SourceText]:
    pypdf = require("pypdf", "reading PDF files", PDF_INSTALL)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata or {}).get("/Title")
    except Exception as exc:  # pypdf raises many types for a damaged or encrypted file
        raise InputFormatError(f"{rel}: cannot read this PDF ({type(exc).__name__}: {exc})") from exc
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for page in pages:
        starts.append(offset)
        clean = page.replace("\r\n", "\n").strip()
        parts.append(clean)
        offset += len(clean) + 2  # the "\n\n" that joins pages
    text = "\n\n".join(parts)
    name = str(title).strip() if title else PurePosixPath(rel).stem
    return [SourceText(rel, rel, name, text, {"page_starts": starts})]


#: File suffix (lower case) -> reader. Anything else in a folder is skipped.
EXTENSIONS: dict[str, Callable[[bytes, str], list[SourceText]]] = {
    ".txt": _plain,
    ".text": _plain,
    ".md": _markdown,
    ".markdown": _markdown,
    ".rst": _rst,
    ".html": _html,
    ".htm": _html,
    ".jsonl": _jsonl,
    ".pdf": _pdf,
}


def read_bytes(data: bytes, rel: str) -> list[SourceText]:
    """The texts in a file's bytes; ``rel`` is its path relative to the indexed folder (POSIX separators)."""
    reader = EXTENSIONS.get(PurePosixPath(rel).suffix.lower())
    if reader is None:
        raise InputFormatError(f"{rel}: unsupported file type (supported: {', '.join(sorted(EXTENSIONS))})")
    return reader(data, rel)
