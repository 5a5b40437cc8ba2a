"""Index JavaScript, TypeScript, Go, Rust and Java files with tree-sitter tag queries (name-based).

Grammars come from ``tree-sitter-language-pack==0.13.0``, which bundles compiled grammars in its wheel, so
nothing is downloaded at parse time (releases 1.0 and later fetch grammars on first use and fail offline;
the ``code`` extra pins 0.13.0). The queries are in :mod:`litm.code._tsqueries`.

Example:
    >>> from pathlib import Path
    >>> src = "function f(a) { return g(a) }\\nfunction g(b) { return b }\\n"
    >>> idx = index_tree_sitter(Path("m.js"), "m.js", "javascript", src)
    >>> [(d.qualname, d.start, d.end) for d in idx.definitions], [(c.name, c.line) for c in idx.calls]
    ([('f', 1, 1), ('g', 2, 2)], [('g', 1)])
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from litm.code._source import CallSite, Definition, FileIndex, ImportStmt
from litm.code._tsqueries import CLASS_LIKE, COMMENT_LIKE, QUERIES
from litm.errors import MissingDependencyError, UnsupportedLanguageError

if TYPE_CHECKING:  # tree-sitter is the optional ``code`` extra, imported when a file is parsed
    from tree_sitter import Node, Parser, Query, Tree

__all__ = ["index_tree_sitter", "parse"]

_INSTALL = "pip install 'litm[code]'  (tree-sitter-language-pack==0.13.0)"
_lock = threading.Lock()
_parsers: dict[str, Parser] = {}
_queries: dict[str, Query] = {}
# Wrappers that hold a definition without adding meaning: its lines (and doc comments) belong to the definition.
_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
_NOT_BOUND = frozenset({"require", "crate", "self", "super"})


def _load(language: str) -> tuple[Parser, Query]:
    """The parser and compiled tag query for ``language``, built once per process."""
    if language not in QUERIES:
        raise UnsupportedLanguageError(f"no tree-sitter tag query for {language!r} (have {', '.join(QUERIES)})")
    with _lock:
        if language not in _parsers:
            try:
                from tree_sitter import Query
                from tree_sitter_language_pack import get_language, get_parser
            except ImportError as exc:
                raise MissingDependencyError(f"parsing {language} needs tree-sitter: {_INSTALL}") from exc
            _parsers[language] = get_parser(language)  # type: ignore[arg-type]
            _queries[language] = Query(get_language(language), QUERIES[language])  # type: ignore[arg-type]
    return _parsers[language], _queries[language]


def parse(language: str, text: str) -> Tree:
    """The tree-sitter syntax tree of ``text`` (the language pack's bundled grammar, no download)."""
    parser, _ = _load(language)
    return parser.parse(text.encode("utf-8"))


def _line(node: Node) -> int:
    return int(node.start_point[0]) + 1


def _last_line(node: Node) -> int:
    row, col = node.end_point
    # A node that ends with its newline (a // comment in some grammars) ends at column 0 of the next row.
    return int(row) + (0 if col == 0 and row > node.start_point[0] else 1)


def _key(node: Node) -> tuple[int, int, str]:
    return (node.start_byte, node.end_byte, node.type)


def _text(node: Node) -> str:
    return bytes(node.text or b"").decode("utf-8", errors="replace")


def _first_type_name(node: Node) -> str:
    """The base type of a receiver or ``impl`` type: ``*Client`` -> Client, ``Foo<T>`` -> Foo."""
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == "type_identifier":
            return _text(n)
        stack.extend(n.named_children)
    return _text(node)


def _span_node(node: Node) -> Node:
    """The outermost wrapper whose only job is to hold ``node`` (``export const f = () => ...``)."""
    while node.parent is not None and node.parent.type in _WRAPPERS and node.parent.named_child_count == 1:
        node = node.parent
    if node.type == "type_spec" and node.parent is not None and node.parent.type == "type_declaration" \
            and node.parent.named_child_count == 1:  # fmt: skip
        node = node.parent
    return node


def _leading_start(node: Node) -> int:
    """First line of the doc comments, attributes and decorators directly above ``node``."""
    start = _line(node)
    prev = node.prev_named_sibling
    while prev is not None and prev.type in COMMENT_LIKE and _last_line(prev) >= start - 1:
        start = _line(prev)
        prev = prev.prev_named_sibling
    return start


def _body(node: Node) -> Node | None:
    for field in ("body", "value"):
        child = node.child_by_field_name(field)
        if child is not None:
            inner = child.child_by_field_name("body")
            return inner if inner is not None and field == "value" else child
    return None


def _char_col(line: bytes, byte_col: int) -> int:
    return len(line[:byte_col].decode("utf-8", errors="replace"))


class _Indexer:
    def __init__(self, idx: FileIndex, source: bytes) -> None:
        self.idx = idx
        self.byte_lines = source.split(b"\n")
        self.defs: dict[tuple[int, int, str], tuple[Node, str, str]] = {}  # key -> (node, name, kind)

    def col(self, node: Node) -> int:
        row, col = node.start_point
        return _char_col(self.byte_lines[row] if row < len(self.byte_lines) else b"", col)

    def qualname(self, node: Node, name: str) -> tuple[str, str | None]:
        chain: list[tuple[str, bool]] = []  # enclosing definitions, innermost first: (name, class-like)
        parent = node.parent
        while parent is not None:
            hit = self.defs.get(_key(parent))
            if hit is not None:
                chain.append((hit[1], parent.type in CLASS_LIKE))
            parent = parent.parent
        outer = [n for n, _ in reversed(chain)]
        inner_class = next((len(chain) - i for i, (_, cls) in enumerate(chain) if cls), 0)
        return ".".join([*outer, name]), ".".join(outer[:inner_class]) or None

    def definition(self, node: Node, name: str, kind: str) -> Definition:
        qualname, container = self.qualname(node, name)
        if node.type == "method_declaration" and self.idx.language == "go":
            receiver = node.child_by_field_name("receiver")
            container = _first_type_name(receiver) if receiver is not None else None
            qualname = f"{container}.{name}" if container else name
        if kind == "function" and container is not None:
            kind = "method"
        if kind == "method" and container is None:
            kind = "function"
        span = _span_node(node)
        body = _body(node)
        end = _last_line(span)
        # A Go or Rust type's fields are its header; other bodies start at their opening brace.
        header_end = end if node.type in ("type_spec", "struct_item", "enum_item") or body is None else _line(body)
        name_node = node.child_by_field_name("name") or node.child_by_field_name("type") or node
        return Definition(
            name=name, qualname=qualname, kind=kind, start=_leading_start(span), end=end,
            header_end=min(header_end, end), name_line=_line(name_node), name_col=self.col(name_node),
            container=container,
        )  # fmt: skip


def _bound_names(node: Node, language: str) -> frozenset[str]:
    """Names an import binds (over-inclusive: every identifier in the statement but the module string)."""
    if language == "go":
        alias = node.child_by_field_name("name")
        if alias is not None:
            return frozenset({_text(alias)})
        path = _text(node.child_by_field_name("path") or node).strip("\"`")
        last = path.rsplit("/", 1)[-1]
        return frozenset({last.split(".")[0], last})
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("string", "interpreted_string_literal", "raw_string_literal", "arguments"):
            continue
        if n.child_count == 0 and "identifier" in n.type:
            names.add(_text(n))
        stack.extend(n.children)
    if language == "java":
        dotted = node.named_children[-1] if node.named_children else node
        names = {_text(dotted).rsplit(".", 1)[-1]} - {"*"}
    return frozenset(names - _NOT_BOUND)


def index_tree_sitter(path: Path, rel: str, language: str, text: str) -> FileIndex:
    """Parse ``text`` with the ``language`` grammar and return its :class:`FileIndex`."""
    _, query = _load(language)
    from tree_sitter import QueryCursor

    source = text.encode("utf-8")
    tree = parse(language, text)
    idx = FileIndex(path=path, rel=rel, language=language, lines=text.splitlines(keepends=True))
    ix = _Indexer(idx, source)
    matches = QueryCursor(query).matches(tree.root_node)
    pending: list[tuple[Node, str, str]] = []
    for _, caps in matches:
        names = caps.get("name", [])
        kind_cap = next((k for k in caps if k.startswith("definition.")), None)
        if kind_cap and names:
            node, name_node = caps[kind_cap][0], names[0]
            name = _first_type_name(name_node) if kind_cap == "definition.impl" else _text(name_node)
            if kind_cap == "definition.function" and node.type == "assignment_expression" and name == "exports":
                continue  # module.exports = function () {...} is anonymous; its name is the file's
            ix.defs[_key(node)] = (node, name, kind_cap.split(".", 1)[1])
            pending.append((node, name, kind_cap.split(".", 1)[1]))
        elif "reference.call" in caps and names:
            idx.calls.append(CallSite(_text(names[0]), _line(names[0]), ix.col(names[0])))
        elif "import" in caps:
            fn = caps.get("import.fn")
            if fn and _text(fn[0]) != "require":
                continue
            node = caps["import"][0]
            idx.imports.append(ImportStmt(_line(node), _last_line(node), _bound_names(node, language)))
    idx.definitions = sorted((ix.definition(*p) for p in pending), key=lambda d: (d.start, -d.end))
    idx.calls.sort(key=lambda c: (c.line, c.col))
    idx.imports.sort(key=lambda i: i.start)
    idx.blocks = [(_leading_start(n), _last_line(n)) for n in tree.root_node.named_children]
    idx.names_fn = lambda: _identifiers(tree.root_node)
    return idx


def _identifiers(root: Node) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and node.child_count == 0 and node.type.endswith("identifier"):
            out.append((_line(node), _text(node)))
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while cursor.goto_parent():
            if cursor.goto_next_sibling():
                break
        else:
            return out
