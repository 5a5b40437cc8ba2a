"""Index a Python file with :mod:`ast`: exact spans, call sites, imports and names.

Spans match :func:`inspect.getsourcelines`: a definition starts at its first decorator and ends at its last
line. Call-site columns are converted from ``ast``'s UTF-8 byte offsets to characters, the unit jedi
expects. Identifier occurrences come from :mod:`tokenize`, so words in strings and comments do not count.

Example:
    >>> from pathlib import Path
    >>> src = "class A:\\n    @staticmethod\\n    def f():\\n        return g()\\n"
    >>> idx = index_python(Path("m.py"), "m.py", "python", src)
    >>> [(d.qualname, d.start, d.end) for d in idx.definitions], [(c.name, c.line) for c in idx.calls]
    ([('A', 1, 4), ('A.f', 2, 4)], [('staticmethod', 2), ('g', 4)])
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from pathlib import Path

from litm.code._source import CallSite, Definition, FileIndex, ImportStmt
from litm.errors import CodeParseError

__all__ = ["index_python"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def index_python(path: Path, rel: str, language: str, text: str) -> FileIndex:
    """Parse ``text`` and return its :class:`FileIndex`; a syntax error raises :class:`CodeParseError`."""
    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError) as exc:
        where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
        raise CodeParseError(f"{rel}:{where} cannot be parsed as Python ({exc.__class__.__name__})") from None
    lines = text.splitlines(keepends=True)
    idx = FileIndex(path=path, rel=rel, language=language, lines=lines)
    _Collector(idx).visit(tree)
    idx.imports = _module_imports(tree.body)
    idx.blocks = [(stmt.lineno if not _decorators(stmt) else _decorators(stmt)[0].lineno, _end(stmt))
                  for stmt in tree.body]  # fmt: skip
    idx.names_fn = lambda: _names(text)
    return idx


def _decorators(node: ast.stmt) -> list[ast.expr]:
    return list(node.decorator_list) if isinstance(node, _Def) else []


def _end(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None)
    return int(end if end is not None else getattr(node, "lineno", 1))


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


class _Collector(ast.NodeVisitor):
    """Walk the tree once, keeping the chain of enclosing definitions for qualified names."""

    def __init__(self, idx: FileIndex) -> None:
        self.idx = idx
        self.stack: list[tuple[str, str]] = []  # (qualname, kind) of the enclosing definitions

    def _line(self, lineno: int) -> str:
        return self.idx.lines[lineno - 1] if 0 < lineno <= len(self.idx.lines) else ""

    def _define(self, node: _Def) -> None:
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        container = next((q for q, k in reversed(self.stack) if k == "class"), None)
        if kind == "function" and self.stack and self.stack[-1][1] == "class":
            kind = "method"
        qualname = f"{self.stack[-1][0]}.{node.name}" if self.stack else node.name
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        self.idx.definitions.append(Definition(
            name=node.name, qualname=qualname, kind=kind, start=start, end=_end(node),
            header_end=_header_end(node), name_line=node.lineno, name_col=self._name_col(node),
            container=container,
        ))  # fmt: skip
        for deco in node.decorator_list:
            # A bare decorator (@cache) calls the decorator with the function; @cache(...) is a Call below.
            if isinstance(deco, ast.Name | ast.Attribute):
                self._record(deco)
        self.stack.append((qualname, "class" if isinstance(node, ast.ClassDef) else "function"))
        self.generic_visit(node)
        self.stack.pop()

    def _name_col(self, node: _Def) -> int:
        line = self._line(node.lineno)
        keyword_at = _char_col(line, node.col_offset)
        # The name follows "def", "async def" or "class" and whatever whitespace the author put there.
        return line.index(node.name, keyword_at + (5 if isinstance(node, ast.ClassDef) else 3))

    def _record(self, func: ast.expr) -> None:
        if isinstance(func, ast.Name):
            self.idx.calls.append(CallSite(func.id, func.lineno, _char_col(self._line(func.lineno), func.col_offset)))
        elif isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_col_offset is not None:
            line = self._line(func.end_lineno)
            col = _char_col(line, func.end_col_offset) - len(func.attr)
            self.idx.calls.append(CallSite(func.attr, func.end_lineno, col))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._define(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._define(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._define(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.idx.aliases.extend((a.name, a.asname) for a in node.names if a.asname and a.asname != a.name)

    def visit_Call(self, node: ast.Call) -> None:
        self._record(node.func)
        self.generic_visit(node)


def _header_end(node: _Def) -> int:
    """Last line of the signature, or of the docstring when the body opens with one."""
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return _end(first)
    return max(node.lineno, first.lineno - 1)


def _module_imports(body: list[ast.stmt]) -> list[ImportStmt]:
    """Module-level imports, also inside top-level ``if``/``try`` blocks (TYPE_CHECKING, fallbacks)."""
    out: list[ImportStmt] = []
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            names = {a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"}
            if names:
                out.append(ImportStmt(stmt.lineno, _end(stmt), frozenset(names)))
        elif isinstance(stmt, ast.If | ast.Try):
            nested = [*stmt.body, *stmt.orelse]
            if isinstance(stmt, ast.Try):
                nested += [s for h in stmt.handlers for s in h.body] + stmt.finalbody
            out.extend(_module_imports(nested))
    return out


def _names(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):  # ast accepted the file, so this is an edge of tokenize itself
        pass
    return out
