"""The command line is a thin layer (docs/architecture.md): ``litm.cli`` exports ``app`` and ``main``, each command
lives in a private module, and no command module imports another command's module: what two commands share is
either a shared CLI helper (options, input, interrupts, config files, help panels) or library code."""

from __future__ import annotations

import ast
from pathlib import Path

import litm.cli

CLI = Path(litm.cli.__file__).parent
#: The CLI's shared helpers; every other module of the package is one command (or one command group).
SHARED = {"_options", "_input", "_interrupt", "_config", "_help"}


def _command_modules() -> list[Path]:
    return sorted(p for p in CLI.glob("*.py") if p.stem != "__init__" and p.stem not in SHARED)


def test_the_package_exports_app_and_main_and_every_module_is_private() -> None:
    assert litm.cli.__all__ == ["app", "main"]
    assert all(p.name.startswith("_") for p in CLI.glob("*.py")), sorted(p.name for p in CLI.glob("*.py"))
    assert len(_command_modules()) >= 15


def test_no_command_module_imports_another_one() -> None:
    commands = {f"litm.cli.{p.stem}" for p in _command_modules()}
    found = []
    for path in _command_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {f"{node.module}.{a.name}" for a in node.names} | {node.module}
                found += [f"{path.name}: {n}" for n in sorted(names & commands) if n != f"litm.cli.{path.stem}"]
    assert not found, found
