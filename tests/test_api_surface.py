"""The public surface keeps the rules of docs/architecture.md ("Public API"), measured as scripts/api_metrics.py does.

Every error is importable from ``litm`` and from the package that raises it; no name is bound to two objects; no
package attribute is a function named like one of its submodules; no alias modules are left.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import litm
from litm.errors import LitmError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import api_metrics

#: Errors any layer raises for bad input: importable from ``litm`` (and ``litm.errors``) only.
GENERIC = {
    "LitmError",
    "InvalidOptionError",
    "InvalidOptionTypeError",
    "UnsupportedTypeError",
    "MissingDependencyError",
    "InputFormatError",
    "CommandConfigError",  # a CLI command's --config file: the CLI exports only app and main
}

#: Every other error, by the package whose API raises it; that package exports it too.
HOME = {
    "litm.placement": {
        "AlreadyRegisteredError",
        "DuplicateIdError",
        "InvalidDocumentError",
        "InvalidProfileError",
        "InvalidScoreError",
        "InvalidStrategyError",
        "UnknownStrategyError",
    },
    "litm.prompt": {"PromptError", "PromptOptionError"},
    "litm.models": {
        "ContextWindowExceededError",
        "LogprobsUnavailableError",
        "ModelError",
        "ModelIntegrityError",
        "ModelNotFoundError",
        "UnknownModelSpecError",
    },
    "litm.retrieve": {
        "CorruptIndexError",
        "IndexMismatchError",
        "IndexNotFoundError",
        "IndexVersionError",
        "RetrievalError",
        "UnreadableFileError",
    },
    "litm.spend": {
        "CorruptLedgerError",
        "LedgerNotFoundError",
        "LedgerBusyError",
        "LedgerUnavailableError",
        "PriceTableError",
        "PriceUnknownError",
        "ReservationError",
        "ReserveUncertainError",
        "SpendBudgetExceeded",
        "SpendLimitNotSetError",
        "SpendRequestError",
    },
    "litm.compress": {"CompressionError"},
    "litm.budget": {"ContextBudgetExceeded", "UngatedRequestError"},
    "litm.code": {
        "AmbiguousCodeTargetError",
        "CodeFileNotFoundError",
        "CodeParseError",
        "CodeTargetNotFoundError",
        "CodeTargetTooLargeError",
        "UnsupportedLanguageError",
    },
    "litm.eval": {"DataFileError", "EvalError"},
    "litm.serve": {"GatewayConfigError", "VirtualKeyError"},
    "litm.probe": {"ProbeError"},
    "litm.bench": {"BenchError"},
}

ERRORS = api_metrics.error_classes()


def test_the_error_list_is_complete() -> None:
    names = [cls.__name__ for cls in ERRORS]
    assert len(names) == len(set(names)), "two error classes share a name"
    homed = set(GENERIC).union(*HOME.values())
    assert set(names) == homed, (
        f"classify new errors in GENERIC or HOME: {sorted(set(names) - homed)}; gone: {sorted(homed - set(names))}"
    )


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_is_importable_from_litm(cls: type[LitmError]) -> None:
    assert getattr(litm, cls.__name__, None) is cls
    assert cls.__name__ in litm.__all__


@pytest.mark.parametrize(("package", "name"), [(p, n) for p, names in HOME.items() for n in sorted(names)])
def test_every_error_is_importable_from_its_package(package: str, name: str) -> None:
    module = importlib.import_module(package)
    assert getattr(module, name, None) is getattr(litm, name)
    assert name in module.__all__, f"{package}.__all__ lacks {name}"


def test_no_name_is_bound_to_two_objects() -> None:
    assert api_metrics.names_bound_twice(api_metrics.public_names()) == {}


def test_no_function_is_named_like_its_module() -> None:
    # ``import litm.budget.fit`` used to give the function fit; now every submodule path gives a module.
    assert api_metrics.module_shadows() == []


def test_no_alias_modules() -> None:
    assert api_metrics.alias_modules() == []
    for old in ("litm.documents", "litm.plan", "litm.profile", "litm.records", "litm.probe.stats"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
