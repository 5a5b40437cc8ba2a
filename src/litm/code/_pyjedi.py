"""Exact resolution for Python: jedi decides where every candidate call site goes.

Candidates are the calls whose callee is the target's name, or an alias bound to it by
``from m import name as alias`` anywhere under the root (followed transitively). jedi resolves each one
through imports, aliases, ``self`` and inferred instance types; it counts as a caller only when it lands
on the target's own definition. Sites it resolves elsewhere are *rejected* (``unicodedata.normalize`` is
not a local ``normalize``); sites it cannot resolve (a method on an untyped parameter) are *unresolved*
and reported, not guessed. Unlike ``jedi.Script.get_references``, which stops after parsing 30 files that
contain the name, every candidate file under the root is checked, up to ``max_sites`` candidate sites
(nearest first; jedi takes 0.05-0.3 s a site): the rest are reported as *unchecked*, never dropped silently.

Example:
    >>> from litm.code._context import make_workspace
    >>> from litm.code._target import locate, parse_target
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.py").write_text("def normalize(s):\\n    return s.strip()\\n")
    >>> _ = (root / "b.py").write_text(
    ...     "import unicodedata\\nfrom a import normalize as norm\\n\\n"
    ...     "def clean(s):\\n    return norm(unicodedata.normalize('NFC', s))\\n")
    >>> ws = make_workspace(root)
    >>> fi = ws.index(root / "a.py")
    >>> found = JediResolver(ws).callers(fi, locate(fi, parse_target("a.py::normalize")))
    >>> [s.label() for s in found.sites], [s.label() for s in found.rejected]
    (['b.py:5 norm'], ['b.py:5 normalize'])
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from litm.code._resolve import Callee, Callers, Site, call_sites_named, sites_inside
from litm.code._source import CallSite, Definition, FileIndex, Workspace
from litm.errors import MissingDependencyError

if TYPE_CHECKING:  # jedi is the optional ``code`` extra
    from jedi import Script

__all__ = ["JediResolver"]

_INSTALL = "pip install 'litm[code]'  (jedi)"
# jedi names that stand for a value rather than a definition; inference says which definition that is.
_INDIRECT = frozenset({"statement", "param", "instance"})
_ALIAS_ROUNDS = 3


class Hit(NamedTuple):
    """A definition jedi resolved a name to: its file, the line of its name, its dotted full name."""

    path: Path
    line: int
    full_name: str | None


def _stub(path: object) -> bool:
    return path is not None and str(path).endswith(".pyi")


def _import_jedi() -> ModuleType:
    try:
        return importlib.import_module("jedi")
    except ImportError as exc:
        raise MissingDependencyError(f"exact Python resolution needs jedi: {_INSTALL}") from exc


class JediResolver:
    """Callers and callees of a Python definition, resolved by jedi (offline, pure Python)."""

    exact = True

    def __init__(self, ws: Workspace, *, max_sites: int | None = None) -> None:
        self.ws = ws
        self.max_sites = max_sites
        self._jedi = _import_jedi()
        self._project = self._jedi.Project(str(ws.root))
        self._scripts: dict[Path, Script] = {}
        self._resolved: dict[tuple[Path, int, int], list[Hit]] = {}

    def _script(self, path: Path) -> Script:
        if path not in self._scripts:
            self._scripts[path] = self._jedi.Script(code=self.ws.text(path), path=str(path), project=self._project)
        return self._scripts[path]

    def resolve(self, path: Path, line: int, col: int) -> list[Hit]:
        """Where the name at ``line``/``col`` of ``path`` is defined, by jedi's goto (and inference)."""
        key = (path, line, col)
        if key not in self._resolved:
            script = self._script(path)
            try:
                names = list(script.goto(line, col, follow_imports=True))
                # A value (x = f; x()) or a typeshed stub where the source exists: inference finds the source.
                if not names or any(n.type in _INDIRECT or _stub(n.module_path) for n in names):
                    names += list(script.infer(line, col))
            except Exception:  # jedi raises bare errors on code it cannot follow; such a site stays unresolved
                names = []
            self._resolved[key] = [
                Hit(Path(n.module_path).resolve(), int(n.line), n.full_name)
                for n in names
                if n.module_path is not None and n.line is not None and n.type not in _INDIRECT
            ]
        return self._resolved[key]

    def _names(self, target: Definition) -> set[str]:
        """The target's name plus every alias bound to it (or to an alias of it) by ``import ... as``."""
        names = {target.name}
        for _ in range(_ALIAS_ROUNDS):
            found = set(names)
            for path in self.ws.files_with_word(names, "python"):
                try:
                    fi = self.ws.index(path)
                except (ValueError, LookupError):
                    continue
                found.update(alias for orig, alias in fi.aliases if orig in names)
            if found == names:
                break
            names = found
        return names

    def callers(self, file: FileIndex, target: Definition) -> Callers:
        out = Callers()
        this = self.resolve(file.path, target.name_line, target.name_col)
        full_name = next((h.full_name for h in this if h.full_name), None)

        def is_target(hit: Hit) -> bool:
            if (hit.path, hit.line) == (file.path, target.name_line):
                return True
            # jedi may stop at the stub of the very same definition (typeshed covers the standard library).
            return _stub(hit.path) and full_name is not None and hit.full_name == full_name

        sites = call_sites_named(self.ws, self._names(target), "python", file, target, unparsed=out.unparsed)
        # Nearest first, so a limit cuts the sites least likely to reach the target: the target's own file,
        # its package, files that name its module or class, then the rest.
        hints = {file.path.stem, *(target.container or "").split(".")} - {"", "__init__"}

        def distance(site: Site) -> int:
            if site.file.path == file.path:
                return 0
            if site.file.path.parent == file.path.parent:
                return 1
            return 2 if any(h in self.ws.text(site.file.path) for h in hints) else 3

        sites.sort(key=distance)
        if self.max_sites is not None:
            sites, out.unchecked = sites[: self.max_sites], sites[self.max_sites :]
        for site in sites:
            hits = self.resolve(site.file.path, site.call.line, site.call.col)
            if any(is_target(h) for h in hits):
                out.sites.append(site)
            elif hits:
                out.rejected.append(site)
            else:
                out.unresolved.append(site)
        return out

    def callees(self, file: FileIndex, target: Definition) -> list[Callee]:
        calls: dict[tuple[Path, int], list[CallSite]] = defaultdict(list)
        defs: dict[tuple[Path, int], tuple[FileIndex, Definition]] = {}
        for call in sites_inside(file, target):
            for path, line, _ in self.resolve(file.path, call.line, call.col):
                if path.suffix != ".py":  # compiled builtins and typeshed stubs: no source to show
                    continue
                key = (path, line)
                if key not in defs:
                    found = self._definition_at(path, line)
                    if found is None or (found[0].path == file.path and found[1] == target):
                        continue
                    defs[key] = found
                calls[key].append(call)
        return [Callee(defs[k][0], defs[k][1], tuple(v)) for k, v in calls.items()]

    def _definition_at(self, path: Path, line: int) -> tuple[FileIndex, Definition] | None:
        try:
            fi = self.ws.index(path)
        except (ValueError, LookupError, OSError):
            return None
        d = next((d for d in fi.definitions if d.name_line == line), None)
        return None if d is None else (fi, d)
