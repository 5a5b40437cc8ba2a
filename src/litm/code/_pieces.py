"""The pieces of a code context: exact source lines with their path, line ranges, kind and rank.

A piece is one of ``target`` (the definition being changed, in full), ``caller`` (a function that calls
it, in full or, when longer than a limit, its signature plus the lines around each call), ``callee``
(the signature and docstring of something the target calls), ``class`` (the enclosing class's header)
and ``imports`` (the import statements whose names the target uses). Text is copied from the file
line for line; omitted stretches are marked with a comment naming how many lines were left out.

Example:
    >>> from pathlib import Path
    >>> from litm.code._pysource import index_python
    >>> fi = index_python(Path("m.py"), "m.py", "python", "def f(x):\\n    '''Doc.'''\\n    a = 1\\n    return x\\n")
    >>> p = header_piece("callee", fi, fi.definitions[0])
    >>> print(p.text)
    def f(x):
        '''Doc.'''
        # ... (2 lines omitted)
    >>> p.source, p.to_doc().id
    ('m.py:1-2', 'callee:m.py:1-2')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from litm.code._source import Definition, FileIndex, ImportStmt
from litm.placement._documents import Doc

__all__ = [
    "KINDS",
    "CodePiece",
    "excerpt_piece",
    "full_piece",
    "header_piece",
    "imports_piece",
    "lines_piece",
    "merge_ranges",
]

KINDS = ("target", "caller", "callee", "class", "imports")
Range = tuple[int, int]


@dataclass(frozen=True)
class CodePiece:
    """One piece of context. ``ranges`` are the 1-based inclusive line ranges shown, in file order."""

    kind: str
    path: str
    language: str
    qualname: str | None
    ranges: tuple[Range, ...]
    text: str
    resolution: str
    call_lines: tuple[int, ...] = ()
    score: float | None = None
    rank: int = 0
    omitted: int = 0  # lines of the definition (or statement) left out of ``text``

    @property
    def start(self) -> int:
        return self.ranges[0][0]

    @property
    def end(self) -> int:
        return self.ranges[-1][1]

    @property
    def source(self) -> str:
        """``path:start-end``: where the piece comes from, as a prompt header or a citation shows it."""
        return f"{self.path}:{self.start}-{self.end}"

    @property
    def excerpt(self) -> bool:
        return self.omitted > 0

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.source}"

    def ranked(self, rank: int, score: float | None) -> CodePiece:
        return dataclasses.replace(self, rank=rank, score=score)

    def to_doc(self) -> Doc:
        """This piece as a :class:`litm.placement._documents.Doc`, ready for ``place``, ``fit`` and ``build_prompt``."""
        title = f"{self.kind}: {self.qualname}" if self.qualname else self.kind
        return Doc(text=self.text, id=self.id, title=title, source=self.source, metadata=self.metadata())

    def metadata(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "path": self.path, "qualname": self.qualname, "language": self.language,
            "lines": [list(r) for r in self.ranges], "call_lines": list(self.call_lines),
            "rank": self.rank, "score": self.score, "resolution": self.resolution, "omitted": self.omitted,
        }  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "text": self.text, **self.metadata()}


def merge_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Sort and merge overlapping or adjacent ranges."""
    out: list[Range] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _comment(language: str) -> str:
    return "#" if language == "python" else "//"


def _render(file: FileIndex, ranges: list[Range], stop: int) -> tuple[str, int]:
    """The lines of ``ranges`` with a marker for each gap and for lines cut after the last range; the count cut."""
    parts: list[str] = []
    omitted = 0
    for i, (a, b) in enumerate(ranges):
        parts.append(file.segment(a, b))
        gap_end = ranges[i + 1][0] - 1 if i + 1 < len(ranges) else stop
        if gap_end > b:
            # Indented like the first omitted line, so the excerpt still reads as the same block.
            nxt = file.lines[b] if b < len(file.lines) and file.lines[b].strip() else file.lines[b - 1]
            indent = nxt[: len(nxt) - len(nxt.lstrip())]
            n = gap_end - b
            omitted += n
            parts.append(f"{indent}{_comment(file.language)} ... ({n} line{'s' if n > 1 else ''} omitted)")
    return "\n".join(parts), omitted


def _piece(kind: str, file: FileIndex, d: Definition | None, ranges: list[Range], stop: int, resolution: str,
           call_lines: Iterable[int] = ()) -> CodePiece:  # fmt: skip
    text, omitted = _render(file, ranges, stop)
    return CodePiece(
        kind=kind, path=file.rel, language=file.language, qualname=d.qualname if d else None,
        ranges=tuple(ranges), text=text, resolution=resolution, call_lines=tuple(sorted(set(call_lines))),
        omitted=omitted,
    )  # fmt: skip


def full_piece(kind: str, file: FileIndex, d: Definition, *, resolution: str = "exact",
               call_lines: Iterable[int] = ()) -> CodePiece:  # fmt: skip
    """The whole definition, decorators (and doc comments) included."""
    return _piece(kind, file, d, [(d.start, d.end)], d.end, resolution, call_lines)


def lines_piece(kind: str, file: FileIndex, ranges: Iterable[Range], *, resolution: str,
                call_lines: Iterable[int] = (), qualname: str | None = None) -> CodePiece:  # fmt: skip
    """Whole line ranges of ``file`` (module-level statements, for instance), gaps marked."""
    merged = merge_ranges(ranges)
    piece = _piece(kind, file, None, merged, merged[-1][1], resolution, call_lines)
    return dataclasses.replace(piece, qualname=qualname)


def header_piece(kind: str, file: FileIndex, d: Definition, *, resolution: str = "exact",
                 extra: Iterable[Range] = (), call_lines: Iterable[int] = ()) -> CodePiece:  # fmt: skip
    """The signature and docstring (Python) or the lines up to the opening brace; ``extra`` adds ranges."""
    ranges = merge_ranges([(d.start, d.header_end), *extra])
    return _piece(kind, file, d, ranges, d.end, resolution, call_lines)


def excerpt_piece(kind: str, file: FileIndex, d: Definition | None, span: Range, hits: Iterable[int], *,
                  context: int, resolution: str, exclude: Range | None = None) -> CodePiece:  # fmt: skip
    """The header of ``d`` (when given) plus ``context`` lines around each hit, clipped to ``span``.

    ``exclude`` removes lines shown elsewhere (the target, when a caller encloses it).
    """
    hit_lines = sorted(set(hits))
    lo, hi = span
    wanted = [(max(lo, h - context), min(hi, h + context)) for h in hit_lines]
    if d is not None:
        wanted.append((d.start, d.header_end))
    ranges = merge_ranges(wanted)
    if exclude is not None:
        ranges = [r for a, b in ranges for r in _minus((a, b), exclude)]
    return _piece(kind, file, d, ranges, hi, resolution, hit_lines)


def _minus(r: Range, cut: Range) -> list[Range]:
    a, b = r
    if cut[1] < a or cut[0] > b:
        return [r]
    return [x for x in ((a, cut[0] - 1), (cut[1] + 1, b)) if x[0] <= x[1]]


def imports_piece(file: FileIndex, stmts: list[ImportStmt], *, resolution: str) -> CodePiece:
    """The given import statements of ``file``, each exactly as written."""
    return lines_piece("imports", file, ((s.start, s.end) for s in stmts), resolution=resolution)
