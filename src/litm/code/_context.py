"""``code_context``: the function being changed, its direct callers and what it calls, fitted to a budget.

The field rule for coding agents: send the function being edited plus the code that calls it directly,
not the 3,000-line file with the class definition buried in the middle. :func:`code_context` finds the
target, gathers its callers (each caller's enclosing function, or the lines around the calls when that
function is long), the signatures and docstrings of its callees, the enclosing class header and the
imports it uses, ranks them by a personalised PageRank from the target, and lets litm's token gate drop
the lowest-ranked pieces until the rendered context fits.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter as Tally
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from litm.code._fitting import fit_pieces
from litm.code._graph import personalized_pagerank
from litm.code._names import NameResolver
from litm.code._pieces import CodePiece, excerpt_piece, full_piece, header_piece, imports_piece, lines_piece
from litm.code._pysource import index_python
from litm.code._resolve import Resolver
from litm.code._result import CodeContext
from litm.code._source import CallSite, Definition, FileIndex, Workspace
from litm.code._target import locate, parse_target
from litm.code._treesitter import index_tree_sitter
from litm.errors import CodeFileNotFoundError, InvalidOptionError, InvalidOptionTypeError, UnsupportedLanguageError
from litm.prompt import PromptBuilder

__all__ = [
    "REPOSITORY_MARKERS",
    "CodeOptions",
    "Resolution",
    "code_context",
    "gather",
    "make_workspace",
    "repository_root",
]

Resolution = Literal["auto", "exact", "name"]
#: A node of the call graph: ``"target"``, or a caller's / callee's kind and (path, line, qualname).
_NodeKey = str | tuple[str, tuple[Path, int, str]]
_MODULE = "<module>"
#: Files or folders that mark a repository's (or a project's) root folder.
REPOSITORY_MARKERS = (
    ".git", ".hg", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "Cargo.toml", "pom.xml",
    "build.gradle",
)  # fmt: skip


def _index_any(path: Path, rel: str, language: str, text: str) -> FileIndex:
    if language == "python":
        return index_python(path, rel, language, text)
    return index_tree_sitter(path, rel, language, text)


def make_workspace(root: str | os.PathLike[str], *, only: list[Path] | None = None) -> Workspace:
    """A :class:`~litm.code._source.Workspace` that indexes Python with ``ast`` and the rest with tree-sitter."""
    return Workspace(root, _index_any, only=only)


def repository_root(path: str | os.PathLike[str]) -> Path | None:
    """The nearest folder above ``path`` that holds one of :data:`REPOSITORY_MARKERS`, or None.

    >>> import tempfile, pathlib
    >>> repo = pathlib.Path(tempfile.mkdtemp())
    >>> (repo / "src" / "pkg").mkdir(parents=True)
    >>> _ = (repo / "pyproject.toml").write_text("")
    >>> repository_root(repo / "src" / "pkg" / "mod.py") == repo.resolve()
    True
    """
    for folder in Path(path).resolve().parents:
        if any((folder / marker).exists() for marker in REPOSITORY_MARKERS):
            return folder
    return None


def _scope(root: str | os.PathLike[str], raw: str) -> tuple[Workspace, Path, str, tuple[str, ...]]:
    """The workspace whose files are searched for callers, the target's file, where callers are searched, and
    what to tell the user.

    A target under ``root`` is searched for under ``root``. One outside it would find no caller (not even in
    its own file) under ``root``: its repository root is searched instead, or, when there is none above it,
    its own file only, and a note says so.
    """
    ws = make_workspace(root)
    path = _target_path(ws, raw)
    if path.is_relative_to(ws.root):
        return ws, path, ws.root.as_posix(), ()
    repo = repository_root(path)
    if repo is not None:
        note = f"{path} lies outside the root {ws.root}: callers were searched under its repository root {repo}"
        return make_workspace(repo), path, repo.as_posix(), (note,)
    note = (
        f"{path} lies outside the root {ws.root} and no repository root ({', '.join(REPOSITORY_MARKERS[:3])}, ...) "
        f"is above it: callers were searched in its own file only; give the folder to search as the root"
    )
    return make_workspace(path.parent, only=[path]), path, path.as_posix(), (note,)


def _resolver(ws: Workspace, file: FileIndex, resolution: str, max_sites: int | None) -> Resolver:
    if resolution not in ("auto", "exact", "name"):
        raise InvalidOptionError(f"resolution must be 'auto', 'exact' or 'name', got {resolution!r}")
    if resolution == "name":
        return NameResolver(ws)
    if file.language == "python":
        from litm.code._pyjedi import JediResolver

        return JediResolver(ws, max_sites=max_sites)
    if resolution == "exact":
        raise UnsupportedLanguageError(
            f"{file.rel}: exact resolution is offered for Python only; {file.language} is resolved by name"
        )
    return NameResolver(ws)


@dataclass
class Gathered:
    """Every candidate piece, ranked (the target first), plus what the resolver did not accept."""

    pieces: list[CodePiece]
    resolution: str
    unresolved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


@dataclass
class _Node:
    file: FileIndex
    definition: Definition | None  # None: module-level statements
    calls: list[CallSite]  # caller: its calls of the target; callee: the target's calls of it
    piece: CodePiece


def _caller_piece(fi: FileIndex, enc: Definition | None, calls: list[CallSite], target_file: FileIndex,
                  target: Definition, res: str, max_lines: int, context: int) -> CodePiece:  # fmt: skip
    hits = [c.line for c in calls]
    if enc is None:
        blocks = [fi.block_at(h) for h in hits]
        if sum(b - a + 1 for a, b in set(blocks)) <= max_lines:
            return lines_piece("caller", fi, blocks, resolution=res, call_lines=hits, qualname=_MODULE)
        piece = excerpt_piece("caller", fi, None, (1, len(fi.lines)), hits, context=context, resolution=res)
        return dataclasses.replace(piece, qualname=_MODULE)
    encloses = fi.path == target_file.path and enc.start <= target.start and target.end <= enc.end
    if enc.end - enc.start + 1 <= max_lines and not encloses:
        return full_piece("caller", fi, enc, resolution=res, call_lines=hits)
    return excerpt_piece("caller", fi, enc, (enc.start, enc.end), hits, context=context, resolution=res,
                         exclude=(target.start, target.end) if encloses else None)  # fmt: skip


def _callee_piece(fi: FileIndex, d: Definition, calls: tuple[CallSite, ...], res: str) -> CodePiece:
    extra: list[tuple[int, int]] = []
    if d.kind == "class" and fi.language == "python":
        init = next((x for x in fi.definitions if x.qualname == f"{d.qualname}.__init__"), None)
        if init is not None:
            extra.append((init.start, init.header_end))
    return header_piece("callee", fi, d, resolution=res, extra=extra, call_lines=[c.line for c in calls])


def _container(ws: Workspace, file: FileIndex, target: Definition) -> tuple[FileIndex, Definition] | None:
    """The class (or ``impl`` block, or Go receiver type) the target belongs to."""
    if target.container is None:
        return None
    own = [d for d in file.definitions if d.qualname == target.container and d.start <= target.start <= d.end]
    if own:
        return file, min(own, key=lambda d: d.end - d.start)
    # A Go method sits outside its type: look for the type in the file, then in the rest of the package.
    for path in [file.path, *sorted(p for p in file.path.parent.glob(f"*{file.path.suffix}") if p != file.path)]:
        fi = ws.index(path)
        found = next((d for d in fi.definitions if d.qualname == target.container and d.kind == "class"), None)
        if found is not None:
            return fi, found
    return None


def _edges(nodes: dict[_NodeKey, _Node]) -> dict[tuple[_NodeKey, _NodeKey], float]:
    """Call-site counts: resolved ones to and from the target, name-matched ones among the other pieces."""
    edges: dict[tuple[_NodeKey, _NodeKey], float] = {}
    for key, node in nodes.items():
        edges[(key, "target")] = float(len(node.calls))
        called = Tally(c.name for a, b in node.piece.ranges for c in node.file.calls_in(a, b))
        for other_key, other in nodes.items():
            if other_key != key and other.definition is not None and called[other.definition.name]:
                edges[(key, other_key)] = edges.get((key, other_key), 0.0) + called[other.definition.name]
    return edges


def gather(ws: Workspace, file: FileIndex, target: Definition, resolver: Resolver, *, max_caller_lines: int = 60,
           context_lines: int = 3) -> Gathered:  # fmt: skip
    """Collect and rank the pieces around ``target``: target, class header, imports, then the callers and
    then the callees, each by personalised PageRank from the target (ties by path and line)."""
    res = "exact" if resolver.exact else "name"
    found = resolver.callers(file, target)
    groups: dict[tuple[Path, int, str], tuple[FileIndex, Definition | None, list[CallSite]]] = {}
    for site in found.sites:
        enc = site.file.enclosing(site.call.line, callable_only=True) or site.file.enclosing(site.call.line)
        key = (site.file.path, enc.start if enc else 0, enc.qualname if enc else _MODULE)
        groups.setdefault(key, (site.file, enc, []))[2].append(site.call)
    nodes: dict[_NodeKey, _Node] = {}
    for key, (fi, enc, calls) in groups.items():
        piece = _caller_piece(fi, enc, calls, file, target, res, max_caller_lines, context_lines)
        if piece.ranges:
            nodes[("caller", key)] = _Node(fi, enc, calls, piece)
    container = _container(ws, file, target)
    for callee in resolver.callees(file, target):
        d = callee.definition
        key = (callee.file.path, d.start, d.qualname)
        if key in groups or (container is not None and container[0].path == callee.file.path and container[1] == d):
            continue  # already shown in full as a caller, or as the class header
        nodes[("callee", key)] = _Node(callee.file, d, list(callee.calls), _callee_piece(callee.file, d, callee.calls,
                                                                                         res))  # fmt: skip
    scores = personalized_pagerank(["target", *nodes], _edges(nodes), source="target")
    # Callers first (the field rule: the edited function plus the code that calls it), each tier by its score.
    order = sorted(nodes, key=lambda k: (k[0] != "caller", -scores[k], nodes[k].piece.path, nodes[k].piece.start))
    head = [full_piece("target", file, target, resolution=res).ranked(1, scores["target"])]
    used = file.names_in(target.start, target.end)
    if container is not None:
        cf, cd = container
        head.append(header_piece("class", cf, cd, resolution=res))
        used |= cf.names_in(cd.start, cd.header_end) if cf is file else set()
    stmts = [s for s in file.imports if s.names & used]
    if stmts:
        head.append(imports_piece(file, stmts, resolution=res))
    ranked = [*head, *(nodes[k].piece.ranked(0, scores[k]) for k in order)]
    pieces = [p.ranked(i + 1, p.score) for i, p in enumerate(ranked)]
    return Gathered(pieces, res, unresolved=[s.label() for s in found.unresolved],
                    rejected=[s.label() for s in found.rejected], unchecked=[s.label() for s in found.unchecked],
                    unparsed=list(found.unparsed))  # fmt: skip


def _target_path(ws: Workspace, raw: str) -> Path:
    path = Path(raw)
    path = path if path.is_absolute() else ws.root / path
    if not path.is_file():
        where = "" if Path(raw).is_absolute() else f" under {ws.root}"
        raise CodeFileNotFoundError(f"no such file: {raw}{where}")
    return path.resolve()


@dataclass(frozen=True)
class CodeOptions:
    """The less common settings of :func:`code_context`, checked on construction.

    ``resolution``: ``"auto"`` (Python exactly through jedi, other languages by name), ``"exact"`` or
    ``"name"``. ``order``: the litm strategy that places the pieces (``"pyramid"`` puts the target last,
    next to a question that follows). A caller whose enclosing function is longer than ``max_caller_lines``
    is shown as the lines around its calls, ``context_lines`` either side. Exact resolution checks at most
    ``max_sites`` same-named call sites (nearest first; None: all). ``prompt_format`` is the format a
    ``builder``'s whole prompt is counted in (``"text"``, ``"openai"``, ``"anthropic"``).

    >>> CodeOptions(resolution="name", max_caller_lines=10).max_caller_lines
    10
    >>> CodeOptions(context_lines=-1)
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: context_lines must be a non-negative integer, got -1
    """

    resolution: Resolution = "auto"
    order: str = "pyramid"
    max_caller_lines: int = 60
    context_lines: int = 3
    max_sites: int | None = 300
    prompt_format: str = "text"

    def __post_init__(self) -> None:
        if self.resolution not in ("auto", "exact", "name"):
            raise InvalidOptionError(f"resolution must be 'auto', 'exact' or 'name', got {self.resolution!r}")
        for name in ("order", "prompt_format"):
            if not isinstance(getattr(self, name), str):
                raise InvalidOptionTypeError(f"{name} must be a string, got {type(getattr(self, name)).__name__}")
        for name, value in (("max_caller_lines", self.max_caller_lines), ("context_lines", self.context_lines),
                            ("max_sites", 0 if self.max_sites is None else self.max_sites)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidOptionError(f"{name} must be a non-negative integer, got {value!r}")


def code_context(
    root: str | os.PathLike[str],
    target: str,
    *,
    budget: int,
    counter: object,
    line: int | None = None,
    format: str = "text",
    builder: PromptBuilder | None = None,
    question: str = "",
    options: CodeOptions | None = None,
) -> CodeContext:
    """The target's source, its direct callers, its callees' signatures, class header and imports, in budget.

    ``target`` is ``"path::Qualified.name"`` or ``"path:LINE"`` (or a path with ``line=``), the path relative
    to ``root`` or absolute. ``counter`` counts tokens: a tokenizer from :func:`litm.tokens.get_tokenizer`, a
    model, ``callable(text) -> int``, or a model spec string. Python is resolved exactly by jedi; other
    languages match callee names (:class:`CodeOptions` ``resolution``).

    The budget covers the context rendered in ``format`` (``"text"`` or ``"markdown"``) with its pieces placed
    by ``options.order`` (a litm strategy; ``"pyramid"`` puts the target last, next to a question that
    follows), or, with ``builder`` (a :class:`litm.prompt.PromptBuilder`), the whole prompt around
    ``question`` counted in ``options.prompt_format``. Pieces are dropped lowest-ranked first; the target
    never is: a target that alone exceeds the budget raises :class:`~litm.errors.CodeTargetTooLargeError`.
    Exact resolution checks at most ``options.max_sites`` same-named call sites, listing the rest in
    ``unchecked``.

    Callers are searched under ``root`` and always in the target's own file. For a target outside ``root``,
    under its repository root (the nearest folder above it with a ``.git``, ``pyproject.toml`` or another of
    :data:`REPOSITORY_MARKERS`), or in its own file only when there is none; ``ctx.searched`` names the folder
    searched and ``ctx.notes`` says why it is not ``root``.

    Example:
        >>> import sysconfig, litm.tokens
        >>> ctx = code_context(sysconfig.get_paths()["stdlib"], "json/decoder.py::JSONDecoder.raw_decode",
        ...                    budget=1500, counter=litm.tokens.get_tokenizer("openai:gpt-4"))
        >>> ctx.target.source, ctx.resolution, ctx.tokens <= 1500
        ('json/decoder.py:343-356', 'exact', True)
        >>> [(p.kind, p.qualname) for p in ctx.pieces][:3]
        [('target', 'JSONDecoder.raw_decode'), ('class', 'JSONDecoder'), ('caller', 'JSONDecoder.decode')]
    """
    opts = CodeOptions() if options is None else options
    if not isinstance(opts, CodeOptions):
        raise InvalidOptionTypeError(f"options must be a CodeOptions, got {type(opts).__name__}")
    spec = parse_target(target, line=line)
    ws, path, searched, notes = _scope(root, spec.path)
    file = ws.index(path)
    definition = locate(file, spec)
    resolver = _resolver(ws, file, opts.resolution, opts.max_sites)
    gathered = gather(ws, file, definition, resolver, max_caller_lines=opts.max_caller_lines,
                      context_lines=opts.context_lines)  # fmt: skip
    fitted = fit_pieces(gathered.pieces, counter=counter, budget=budget, fmt=format, order=opts.order,
                        builder=builder, question=question, prompt_format=opts.prompt_format)  # fmt: skip
    if gathered.unparsed:
        shown = ", ".join(gathered.unparsed[:5]) + (" ..." if len(gathered.unparsed) > 5 else "")
        notes += (
            f"{len(gathered.unparsed)} files that name {definition.name!r} could not be parsed, so they were not "
            f"searched for callers: {shown}",
        )
    by_id = {p.id: p for p in gathered.pieces}
    tokenizer = counter if isinstance(counter, str) else getattr(counter, "name", None)
    return CodeContext(
        target=gathered.pieces[0],
        pieces=tuple(by_id[d.id] for d in fitted.kept),
        dropped=tuple(by_id[d.id] for d in fitted.dropped),
        tokens=fitted.tokens, budget=budget, resolution=gathered.resolution, format=format, order=opts.order,
        tokenizer=str(tokenizer) if tokenizer is not None else None,
        unresolved=tuple(gathered.unresolved), rejected=tuple(gathered.rejected),
        unchecked=tuple(gathered.unchecked), prompt=fitted.prompt, searched=searched,
        notes=notes,
    )  # fmt: skip
