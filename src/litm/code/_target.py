"""Read a code-context target (``path::Qualified.name`` or ``path:LINE``) and find its definition.

A name is looked up as an exact qualified name first (``JSONDecoder.raw_decode``), then as a unique
suffix (``raw_decode``). Two definitions with one name (a property and its setter, a function defined in
both branches of an ``if``) are ambiguous: the error lists them with their lines, so ``path:LINE`` picks one.

Example:
    >>> parse_target("json/decoder.py::JSONDecoder.raw_decode")
    TargetSpec(path='json/decoder.py', name='JSONDecoder.raw_decode', line=None)
    >>> parse_target("src/app.ts:42")
    TargetSpec(path='src/app.ts', name=None, line=42)
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from litm.code._source import Definition, FileIndex
from litm.errors import AmbiguousCodeTargetError, CodeTargetNotFoundError, InvalidOptionError

__all__ = ["TargetSpec", "locate", "parse_target"]

_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """A target as the user wrote it: a path plus either a (qualified) name or a 1-based line."""

    path: str
    name: str | None = None
    line: int | None = None


def parse_target(spec: str, *, line: int | None = None) -> TargetSpec:
    """Split ``PATH::NAME`` or ``PATH:LINE`` (or a bare ``PATH`` with ``line=``) into a :class:`TargetSpec`."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidOptionError(f"target must be 'PATH::NAME' or 'PATH:LINE', got {spec!r}")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        raise InvalidOptionError(f"line must be a positive integer, got {line!r}")
    if "::" in spec:
        path, name = spec.rsplit("::", 1)
        if not path or not name.strip():
            raise InvalidOptionError(f"target {spec!r}: both the path and the name are needed, as 'PATH::NAME'")
        return TargetSpec(path=path, name=name.strip(), line=line)
    match = _LINE.match(spec)
    if match and line is None:
        return TargetSpec(path=match["path"], line=int(match["line"]))
    if line is not None:
        return TargetSpec(path=spec, line=line)
    raise InvalidOptionError(f"target {spec!r} names no function: write 'PATH::NAME' or 'PATH:LINE'")


def _listing(defs: list[Definition], rel: str) -> tuple[str, ...]:
    return tuple(f"{rel}:{d.start} {d.qualname}" for d in defs)


def locate(index: FileIndex, spec: TargetSpec) -> Definition:
    """The definition ``spec`` names in ``index``; raises a typed error when there is none or several."""
    targets = [d for d in index.definitions if d.kind != "impl"]
    if spec.name is None:
        line = spec.line or 0
        if not 1 <= line <= len(index.lines):
            raise CodeTargetNotFoundError(f"{index.rel} has {len(index.lines)} lines; line {line} is not in it")
        found = index.enclosing(line)
        if found is None:
            raise CodeTargetNotFoundError(f"line {line} of {index.rel} is outside every function and class")
        return found
    exact = [d for d in targets if d.qualname == spec.name]
    by_suffix = [d for d in targets if d.qualname.endswith("." + spec.name)]
    # With a line as well, it picks among same-named definitions (a property and its setter).
    for group in (exact, by_suffix):
        if spec.line is not None:
            group = [d for d in group if d.start <= spec.line <= d.end]
        if len(group) == 1:
            return group[0]
        if len(group) > 1:
            listing = _listing(group, index.rel)
            raise AmbiguousCodeTargetError(
                f"{spec.name!r} matches {len(group)} definitions in {index.rel} ({'; '.join(listing)}); "
                f"name one by its line as {index.rel}:LINE",
                candidates=listing,
            )
    # Match a misspelt method name against simple names as well, and suggest the qualified names.
    spelled = {d.name: d.qualname for d in targets}
    spelled.update({d.qualname: d.qualname for d in targets})
    close = dict.fromkeys(spelled[m] for m in difflib.get_close_matches(spec.name, list(spelled), n=3, cutoff=0.6))
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise CodeTargetNotFoundError(f"{index.rel} defines no function or class {spec.name!r}{hint}")
