"""Measure the public API against the goals of docs/architecture.md ("API goals"), and write its snapshot.

The figures:

* ``public_names``: distinct names exported by ``litm`` and every public package ``__init__`` under ``src/litm``
  (its ``__all__``; a package without one exports its non-underscore, non-module attributes; a package with
  ``_`` in its path is private).
* ``names_bound_twice``: exported names bound to different objects in different packages (the framework
  subpackages of ``litm.integrations`` name their components alike on purpose and are not compared).
* ``alias_modules``: modules that only forward to another one (they call ``alias_module``).
* ``any_uses``: the ``Any`` annotations in ``src/litm`` (each ``Any`` / ``typing.Any`` outside imports).
* ``wide_callables``: public functions and methods with more than 12 parameters (public: in a public module, or
  exported by a package; a CLI command in a private module is not).
* ``module_shadows``: package attributes that are a function or class named like a submodule of that package,
  so ``import litm.pkg.name`` and ``litm.pkg.name`` disagree.
* ``errors_not_in_litm``: :class:`litm.errors.LitmError` subclasses that ``import litm`` does not export.
* ``readme_lines``: lines of ``README.md``.

The snapshot (``tests/data/api_snapshot.txt``) lists every exported name of ``litm`` and each package
``__init__`` with its kind and signature (classes with their public methods), so a change to the public API
shows up as a diff in review; ``tests/test_api_snapshot.py`` fails when it is stale.

Usage:
    python scripts/api_metrics.py                    # print the figures
    python scripts/api_metrics.py --json             # the same, as JSON
    python scripts/api_metrics.py --write-snapshot   # rewrite tests/data/api_snapshot.txt and the table of
                                                     # public names in docs/architecture.md
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
SNAPSHOT = ROOT / "tests" / "data" / "api_snapshot.txt"
MAX_PARAMETERS = 12


def packages() -> list[str]:
    """Every public package under src/litm (a folder with an ``__init__.py``, no ``_`` in its path), sorted."""
    root = SRC / "litm"
    found = {
        ".".join(("litm", *parts))
        for parts in (p.parent.relative_to(root).parts for p in root.rglob("__init__.py"))
        if not any(part.startswith("_") for part in parts)
    }
    return sorted(found)


#: Each framework's subpackage offers the same components under the same names, one per framework, on purpose:
#: the import path picks the framework (``litm.integrations.langchain.LitmCompressor``).
SAME_NAME_PER_FRAMEWORK = (
    "litm.integrations.haystack",
    "litm.integrations.langchain",
    "litm.integrations.llamaindex",
)


def exports(package: str) -> list[str]:
    """The names a package exports: its ``__all__``, else its public non-module attributes."""
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)]
    return sorted(names)


def public_names() -> dict[str, list[str]]:
    return {package: exports(package) for package in packages()}


def names_bound_twice(surface: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each name exported by two packages that are not the same object, with the packages."""
    seen: dict[str, dict[int, list[str]]] = {}
    for package, names in surface.items():
        if package in SAME_NAME_PER_FRAMEWORK:
            continue
        module = importlib.import_module(package)
        for name in names:
            seen.setdefault(name, {}).setdefault(id(getattr(module, name)), []).append(package)
    return {
        name: sorted(p for packages in by_object.values() for p in packages)
        for name, by_object in sorted(seen.items())
        if len(by_object) > 1
    }


def _source_files() -> Iterator[Path]:
    yield from sorted((SRC / "litm").rglob("*.py"))


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _is_alias(path: Path) -> bool:
    """A module whose body calls ``alias_module(__name__, ...)``: it only forwards to another module."""
    return any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "alias_module"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
    )


def alias_modules() -> list[str]:
    return [_module_name(p) for p in _source_files() if _is_alias(p)]


def any_uses() -> dict[str, int]:
    """``Any`` in annotations and expressions per top-level package (imports of it not counted)."""
    counts: dict[str, int] = {}
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        n = sum(
            1
            for node in ast.walk(tree)
            if (isinstance(node, ast.Name) and node.id == "Any")
            or (isinstance(node, ast.Attribute) and node.attr == "Any")
        )
        # A string annotation (quoted, or a forward reference) holds its Any as text.
        n += sum(
            len(re.findall(r"\bAny\b", node.value))
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_annotation_text(node.value)
        )
        if n:
            key = ".".join(_module_name(path).split(".")[:2])
            counts[key] = counts.get(key, 0) + n
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _is_annotation_text(text: str) -> bool:
    return bool(re.fullmatch(r"[\w\[\]., |]*\bAny\b[\w\[\]., |]*", text))


def wide_callables(surface: dict[str, list[str]] | None = None) -> dict[str, int]:
    """Public functions and methods with more than MAX_PARAMETERS parameters (``self`` / ``cls`` not counted).

    Public: defined in a public module, or exported by a package (itself, or its class). A function of a
    private module that no package exports (a Typer command in ``litm.cli._bench``) is not a Python API."""
    exported = {name for names in (surface or public_names()).values() for name in names}
    out: dict[str, int] = {}
    for path in _source_files():
        module = _module_name(path)
        private_module = any(part.startswith("_") for part in module.split("."))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for owner, node in _functions(tree):
            if node.name.startswith("_") and node.name != "__init__":
                continue
            if owner is not None and owner.startswith("_"):
                continue
            if private_module and (owner or node.name) not in exported:
                continue
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if params and owner is not None and params[0].arg in ("self", "cls"):
                params = params[1:]
            count = len(params) + (1 if args.vararg else 0) + (1 if args.kwarg else 0)
            if count > MAX_PARAMETERS:
                out[f"{module}:{owner + '.' if owner else ''}{node.name}"] = count
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _functions(tree: ast.Module) -> Iterator[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield None, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield node.name, item


def module_shadows() -> list[str]:
    """``package.name`` where ``name`` is also a submodule but the attribute is not that module."""
    out = []
    for package in packages():
        module = importlib.import_module(package)
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        for info in pkgutil.iter_modules(path):
            value = vars(module).get(info.name)
            if value is not None and not isinstance(value, types.ModuleType):
                out.append(f"{package}.{info.name}")
    return sorted(out)


def _import_everything() -> None:
    """Import every litm module so every error class is defined (modules whose extras are missing are skipped)."""
    for path in _source_files():
        name = _module_name(path)
        if name.endswith("__main__") or _is_alias(path):
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def error_classes() -> list[type[BaseException]]:
    """Every :class:`~litm.errors.LitmError` subclass defined in ``litm`` (after importing all modules)."""
    from litm.errors import LitmError

    _import_everything()
    found: dict[str, type[BaseException]] = {}
    stack: list[type[BaseException]] = [LitmError]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("litm"):
            found[f"{cls.__module__}.{cls.__qualname__}"] = cls
        stack.extend(cls.__subclasses__())
    return [found[k] for k in sorted(found)]


def errors_not_in_litm() -> list[str]:
    import litm

    return [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in error_classes()
        if getattr(litm, cls.__name__, None) is not cls or cls.__name__ not in litm.__all__
    ]


def readme_lines() -> int:
    return len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())


def measure() -> dict[str, object]:
    surface = public_names()
    distinct = set().union(*surface.values())
    twice = names_bound_twice(surface)
    anys = any_uses()
    wide = wide_callables(surface)
    return {
        "public_names": len(distinct),
        "public_names_by_package": {p: len(n) for p, n in surface.items()},
        "names_bound_twice": len(twice),
        "names_bound_twice_detail": twice,
        "alias_modules": alias_modules(),
        "any_uses": sum(anys.values()),
        "any_uses_by_package": anys,
        "wide_callables": len(wide),
        "wide_callables_outside_cli": len([k for k in wide if not k.startswith("litm.cli")]),
        "wide_callables_detail": wide,
        "module_shadows": module_shadows(),
        "errors_not_in_litm": errors_not_in_litm(),
        "readme_lines": readme_lines(),
    }


# --- the snapshot ---------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _signature(obj: object) -> str:
    try:
        text = str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(?)"
    return _ADDRESS.sub("", text)


def _describe(name: str, obj: object) -> list[str]:
    if inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        lines = [f"class {name}({bases})" if bases else f"class {name}"]
        if not issubclass(obj, BaseException):
            lines.append(f"    {name}{_signature(obj)}")
        for attr, value in sorted(vars(obj).items()):
            if attr.startswith("_"):
                continue
            if isinstance(value, property):
                lines.append(f"    property {attr}")
            elif isinstance(value, staticmethod | classmethod):
                lines.append(f"    {type(value).__name__} {attr}{_signature(value.__func__)}")
            elif inspect.isfunction(value):
                lines.append(f"    def {attr}{_signature(value)}")
        return lines
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return [f"def {name}{_signature(obj)}"]
    if callable(obj) and not isinstance(obj, type):
        return [f"{name}: {type(obj).__name__}{_signature(obj)}"]
    return [f"{name}: {type(obj).__name__}"]


def snapshot() -> str:
    """The public API as text: each package, its exported names, their kinds and signatures."""
    out: list[str] = []
    for package in packages():
        module = importlib.import_module(package)
        out.append(f"[{package}]")
        for name in exports(package):
            out.extend(_describe(name, getattr(module, name)))
        out.append("")
    return "\n".join(out)


ARCHITECTURE = ROOT / "docs" / "architecture.md"
SURFACE_START = "<!-- public-names: generated by scripts/api_metrics.py --write-snapshot -->"
SURFACE_END = "<!-- public-names: end -->"


def surface_table() -> str:
    """Each public package and the names it exports besides the errors (which every package that raises them
    re-exports, and ``litm`` exports all of), as the Markdown table of docs/architecture.md."""
    from litm.errors import LitmError

    rows = ["| package | names (errors not listed) |", "| --- | --- |"]
    for package in packages():
        module = importlib.import_module(package)
        objects = {n: getattr(module, n) for n in exports(package)}
        names = [n for n, v in objects.items() if not (isinstance(v, type) and issubclass(v, LitmError))]
        errors = len(exports(package)) - len(names)
        shown = ", ".join(f"`{n}`" for n in names) or "-"
        counted = f" (+ {errors} error{'s' if errors > 1 else ''})" if errors else ""
        rows.append(f"| `{package}` | {shown}{counted} |")
    return "\n".join(rows)


def architecture_with_surface(text: str) -> str:
    """``text`` (docs/architecture.md) with the table between the markers replaced by :func:`surface_table`."""
    head, sep, rest = text.partition(SURFACE_START)
    _, sep2, tail = rest.partition(SURFACE_END)
    if not sep or not sep2:
        raise SystemExit(f"{ARCHITECTURE.relative_to(ROOT)} lacks the public-names markers")
    return f"{head}{SURFACE_START}\n{surface_table()}\n{SURFACE_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--write-snapshot", action="store_true", help=f"rewrite {SNAPSHOT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.write_snapshot:
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(snapshot(), encoding="utf-8")
        ARCHITECTURE.write_text(architecture_with_surface(ARCHITECTURE.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(ROOT)} and the public-names table of {ARCHITECTURE.relative_to(ROOT)}")
        return 0
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for key, value in figures.items():
        if key.endswith(("_detail", "_by_package")):
            continue
        shown = len(value) if isinstance(value, list) else value
        print(f"{key}: {shown}")
        if isinstance(value, list) and value:
            for item in value:
                print(f"    {item}")
    for key in ("names_bound_twice_detail", "wide_callables_detail", "any_uses_by_package"):
        print(f"{key}:")
        for k, v in figures[key].items():  # type: ignore[attr-defined]
            print(f"    {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
