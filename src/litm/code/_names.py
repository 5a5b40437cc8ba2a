"""Name-based resolution, for every language: a call whose callee has the target's name is a caller.

This is what tree-sitter tags give (aider's repo map works this way): fast, language-independent, and
wrong whenever two definitions share a name, so every piece it yields is labelled ``resolution="name"``.
A callee is looked up by name in the target's own file first, then across the repository; a name with
more than :data:`MAX_SAME_NAME` definitions is left out rather than guessed.

Example:
    >>> from litm.code._context import make_workspace
    >>> from litm.code._target import locate, parse_target
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.js").write_text("function f() { return g() }\\nfunction g() { return 1 }\\n")
    >>> ws = make_workspace(root)
    >>> fi = ws.index(root / "a.js")
    >>> [s.label() for s in NameResolver(ws).callers(fi, locate(fi, parse_target("a.js::g"))).sites]
    ['a.js:1 g']
"""

from __future__ import annotations

from collections import defaultdict

from litm.code._resolve import Callee, Callers, call_sites_named, sites_inside
from litm.code._source import CallSite, Definition, FileIndex, Workspace, family_of

__all__ = ["MAX_SAME_NAME", "NameResolver"]

#: A callee name defined more often than this across the repository is too ambiguous to include.
MAX_SAME_NAME = 3


class NameResolver:
    """Callers and callees by simple-name matching over tree-sitter (or ``ast``) tags."""

    exact = False

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def callers(self, file: FileIndex, target: Definition) -> Callers:
        family = family_of(file.language)
        out = Callers()
        out.sites = call_sites_named(self.ws, {target.name}, family, file, target, unparsed=out.unparsed)
        return out

    def callees(self, file: FileIndex, target: Definition) -> list[Callee]:
        by_name: dict[str, list[CallSite]] = defaultdict(list)
        for call in sites_inside(file, target):
            by_name[call.name].append(call)
        if not by_name:
            return []
        defs = self._definitions(file, set(by_name))
        out: list[Callee] = []
        for name, calls in by_name.items():
            found = [(fi, d) for fi, d in defs.get(name, []) if not (fi.path == file.path and d == target)]
            if 0 < len(found) <= MAX_SAME_NAME:
                out.extend(Callee(fi, d, tuple(calls)) for fi, d in found)
        return out

    def _definitions(self, file: FileIndex, names: set[str]) -> dict[str, list[tuple[FileIndex, Definition]]]:
        """Definitions of each name: the target's own file when it has one, else the whole repository."""
        local: dict[str, list[tuple[FileIndex, Definition]]] = defaultdict(list)
        for d in file.definitions:
            if d.name in names and d.kind != "impl":
                local[d.name].append((file, d))
        missing = names - set(local)
        if missing:
            for path in self.ws.files_with_word(missing, family_of(file.language)):
                if path == file.path:
                    continue
                try:
                    fi = self.ws.index(path)
                except (ValueError, LookupError):
                    continue
                for d in fi.definitions:
                    if d.name in missing and d.kind != "impl":
                        local[d.name].append((fi, d))
        return local
