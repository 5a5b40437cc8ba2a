"""What litm knows about one source file, whatever its language, and the repository it lives in.

A :class:`FileIndex` is the language-neutral view every other module works on: the file's definitions
(functions, methods, classes, with exact line spans), its call sites (callee name and position), its
import statements (with the names they bind) and its identifier occurrences. Python files are indexed
with :mod:`ast` (:mod:`litm.code._pysource`), other languages with tree-sitter (:mod:`litm.code._treesitter`).
A :class:`Workspace` walks a repository once, caches file texts and indexes, and answers "which files
mention this word", the pre-filter both resolvers use before parsing anything.

Example:
    >>> language_of("src/app/main.go"), family_of("typescript"), language_of("notes.txt")
    ('go', 'javascript', None)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from litm.errors import CodeFileNotFoundError, UnsupportedLanguageError

__all__ = [
    "LANGUAGES",
    "CallSite",
    "Definition",
    "FileIndex",
    "ImportStmt",
    "Workspace",
    "family_of",
    "language_of",
]

#: File suffix -> language name (the tree-sitter grammar name, or "python").
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}  # fmt: skip

# Languages whose files call each other: a TypeScript module imports JavaScript and the other way round.
_FAMILIES = {"typescript": "javascript", "tsx": "javascript"}

# Folders that hold generated code, dependencies or tool caches, never the project's own sources.
_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".nox", "target", "site-packages", "dist-packages",
})  # fmt: skip


def language_of(path: str | os.PathLike[str]) -> str | None:
    """The language of a file by its suffix, or None when litm cannot read it."""
    return LANGUAGES.get(Path(path).suffix.lower())


def family_of(language: str) -> str:
    """The group of languages whose files may call into each other (JS and TS are one family)."""
    return _FAMILIES.get(language, language)


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, method or class (or a Rust ``impl`` block, kind ``"impl"``) with its exact lines.

    Lines are 1-based and inclusive. ``start`` includes decorators (and, outside Python, the doc comments
    and attributes directly above); ``header_end`` is the last line of the signature, or of the docstring
    in Python; ``name_line``/``name_col`` locate the name token (column in characters, 0-based).
    ``container`` is the qualified name of the enclosing class, ``impl`` or receiver type.
    """

    name: str
    qualname: str
    kind: str
    start: int
    end: int
    header_end: int
    name_line: int
    name_col: int
    container: str | None = None

    @property
    def callable(self) -> bool:
        return self.kind in ("function", "method")


@dataclass(frozen=True, slots=True)
class CallSite:
    """One call: the callee's simple name and where that name token is (line 1-based, column 0-based)."""

    name: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class ImportStmt:
    """An import statement's lines and the names it binds in the module."""

    start: int
    end: int
    names: frozenset[str]


@dataclass
class FileIndex:
    """One parsed file: definitions, calls, imports, identifier occurrences, top-level statements, aliases."""

    path: Path
    rel: str
    language: str
    lines: list[str]
    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportStmt] = field(default_factory=list)
    blocks: list[tuple[int, int]] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (imported name, local alias): import f as g
    # Identifier occurrences (line, name), computed on first use: only the target's file ever needs them,
    # and tokenizing every candidate file would double the cost of a search.
    names_fn: Callable[[], list[tuple[int, str]]] | None = field(default=None, repr=False)
    _names: list[tuple[int, str]] | None = field(default=None, repr=False)

    @property
    def names(self) -> list[tuple[int, str]]:
        if self._names is None:
            self._names = self.names_fn() if self.names_fn is not None else []
        return self._names

    def segment(self, start: int, end: int) -> str:
        """Lines ``start``..``end`` (1-based, inclusive) exactly as in the file, without the final newline."""
        return "".join(self.lines[start - 1 : end]).rstrip("\r\n")

    def enclosing(self, line: int, *, callable_only: bool = False) -> Definition | None:
        """The innermost definition whose lines contain ``line`` (functions before classes when asked)."""
        best: Definition | None = None
        for d in self.definitions:
            if d.kind == "impl" or (callable_only and not d.callable):
                continue
            if d.start <= line <= d.end and (best is None or d.end - d.start < best.end - best.start):
                best = d
        return best

    def block_at(self, line: int) -> tuple[int, int]:
        """The top-level statement containing ``line`` (the line itself when none is recorded)."""
        return next(((a, b) for a, b in self.blocks if a <= line <= b), (line, line))

    def calls_in(self, start: int, end: int) -> list[CallSite]:
        return [c for c in self.calls if start <= c.line <= end]

    def names_in(self, start: int, end: int) -> set[str]:
        return {name for line, name in self.names if start <= line <= end}


Indexer = Callable[[Path, str, str, str], FileIndex]


class Workspace:
    """A repository root: its source files by language family, their texts and indexes, cached.

    ``indexer(path, rel, language, text)`` builds a :class:`FileIndex`; the workspace calls it at most once
    per file. Paths outside the root (a callee in the standard library) are indexed on demand too. ``only``
    limits the files searched (:meth:`files`) to those given, instead of every source file under the root.
    """

    def __init__(
        self, root: str | os.PathLike[str], indexer: Indexer, *, only: Sequence[str | os.PathLike[str]] | None = None
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise CodeFileNotFoundError(f"root {str(root)!r} is not a directory")
        self._indexer = indexer
        self._files: dict[str, list[Path]] | None = None
        if only is not None:
            self._files = {}
            for path in sorted(Path(p).resolve() for p in only):
                lang = language_of(path)
                if lang is not None:
                    self._files.setdefault(family_of(lang), []).append(path)
        self._texts: dict[Path, str] = {}
        self._indexes: dict[Path, FileIndex] = {}

    def rel(self, path: Path) -> str:
        """``path`` relative to the root, with forward slashes; absolute when it lies outside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def files(self, family: str) -> list[Path]:
        """Every source file of ``family`` under the root, sorted, skipping dependency and cache folders."""
        if self._files is None:
            found: dict[str, list[Path]] = {}
            for folder, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(names):
                    lang = language_of(name)
                    if lang is not None:
                        found.setdefault(family_of(lang), []).append(Path(folder) / name)
            self._files = found
        return self._files.get(family, [])

    def text(self, path: Path) -> str:
        if path not in self._texts:
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                raise CodeFileNotFoundError(f"no such file: {self.rel(path)}") from None
            except IsADirectoryError:
                raise CodeFileNotFoundError(f"{self.rel(path)} is a directory, not a source file") from None
            self._texts[path] = raw.decode("utf-8", errors="replace")
        return self._texts[path]

    def index(self, path: Path) -> FileIndex:
        """The cached index of ``path`` (parsed on first use)."""
        path = path.resolve()
        if path not in self._indexes:
            language = language_of(path)
            if language is None:
                raise UnsupportedLanguageError(
                    f"{self.rel(path)}: no parser for {path.suffix or 'files without a suffix'!r} "
                    f"(supported: {', '.join(sorted(set(LANGUAGES)))})"
                )
            self._indexes[path] = self._indexer(path, self.rel(path), language, self.text(path))
        return self._indexes[path]

    def files_with_word(self, words: set[str], family: str) -> Iterator[Path]:
        """Files of ``family`` whose text contains any of ``words`` as a whole word (cheap, before parsing)."""
        if not words:
            return
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words)) + r")\b")
        for path in self.files(family):
            text = self.text(path)
            # A substring test first: it rejects most files far faster than the word-boundary regex.
            if any(w in text for w in words) and pattern.search(text):
                yield path
