"""What a resolver answers: where the target is called, and what the target calls.

Two resolvers implement :class:`Resolver`: :class:`~litm.code._pyjedi.JediResolver` (Python, exact: every
candidate call site is resolved through imports and aliases by jedi) and
:class:`~litm.code._names.NameResolver` (any language, name-based: a call whose callee has the target's
simple name counts, the way aider's repo map matches tags). Both start from the same cheap pre-filter,
the files that contain the name as a word, so they differ only in what they accept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from litm.code._source import CallSite, Definition, FileIndex, Workspace

__all__ = ["Callee", "Callers", "Resolver", "Site", "call_sites_named", "sites_inside"]


@dataclass(frozen=True, slots=True)
class Site:
    """One call site in one file."""

    file: FileIndex
    call: CallSite

    def label(self) -> str:
        return f"{self.file.rel}:{self.call.line} {self.call.name}"


@dataclass
class Callers:
    """Call sites of the target, plus the same-named sites an exact resolver did not accept.

    ``unresolved``: the resolver could not tell what the name refers to (an untyped parameter's method);
    ``rejected``: it resolved to another definition (``unicodedata.normalize`` for a local ``normalize``),
    exactly the false callers a name match keeps; ``unchecked``: candidates beyond the resolver's limit on
    sites per target, never looked at. A name-based resolver leaves all three empty. ``unparsed``: files that
    name the target but could not be parsed, so were not searched (by either resolver).
    """

    sites: list[Site] = field(default_factory=list)
    unresolved: list[Site] = field(default_factory=list)
    rejected: list[Site] = field(default_factory=list)
    unchecked: list[Site] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Callee:
    """A definition the target calls, and the target's call sites that reach it."""

    file: FileIndex
    definition: Definition
    calls: tuple[CallSite, ...]


class Resolver(Protocol):
    """Finds callers and callees of one definition within a workspace."""

    exact: bool

    def callers(self, file: FileIndex, target: Definition) -> Callers:
        """Call sites of ``target`` (defined in ``file``) anywhere under the workspace root."""
        ...

    def callees(self, file: FileIndex, target: Definition) -> list[Callee]:
        """Definitions that ``target`` calls, with the call sites inside it."""
        ...


def sites_inside(file: FileIndex, target: Definition) -> list[CallSite]:
    """The calls made inside the target (recursion included)."""
    return file.calls_in(target.start, target.end)


def call_sites_named(ws: Workspace, names: set[str], family: str, target_file: FileIndex,
                     target: Definition, *, unparsed: list[str] | None = None) -> list[Site]:  # fmt: skip
    """Every call under the root whose callee is one of ``names``, outside the target itself.

    The target's own file is always searched, even when the walk of the root leaves it out (it lies in a
    ``site-packages`` or hidden folder, or outside the root). Files that do not parse (a Python 2 file in a
    test-data folder) are skipped, and their paths added to ``unparsed``, so that the skip can be reported.
    """
    out: list[Site] = []
    paths = list(ws.files_with_word(names, family))
    if all(p.resolve() != target_file.path for p in paths):
        paths.insert(0, target_file.path)
    for path in paths:
        try:
            fi = ws.index(path)
        except (ValueError, LookupError):
            if unparsed is not None:
                unparsed.append(ws.rel(path))
            continue
        for call in fi.calls:
            if call.name not in names:
                continue
            if fi.path == target_file.path and target.start <= call.line <= target.end:
                continue
            out.append(Site(fi, call))
    return out
