"""The error contract: every litm error is a LitmError and also the matching built-in exception."""

from __future__ import annotations

import builtins
import importlib
import inspect

import pytest

import litm.errors
from litm.errors import LitmError

# Import every package that defines errors of its own, so that their subclasses are registered too.
PACKAGES = ("litm", "litm.bench", "litm.budget", "litm.eval", "litm.models", "litm.placement", "litm.probe")
for _name in PACKAGES:
    importlib.import_module(_name)

_GENERIC = (BaseException, Exception)


def _builtin_bases(cls: type) -> list[type]:
    """The built-in exception types ``cls`` derives from, beyond the catch-alls Exception/BaseException."""
    return [
        base
        for base in cls.__mro__
        if base.__module__ == "builtins" and issubclass(base, BaseException) and base not in _GENERIC
    ]


def _all_subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    todo = [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


ERROR_CLASSES = [
    obj
    for _, obj in inspect.getmembers(litm.errors, inspect.isclass)
    if obj.__module__ == "litm.errors" and issubclass(obj, BaseException)
]


def test_litm_errors_defines_the_classes_other_modules_rely_on() -> None:
    names = {c.__name__ for c in ERROR_CLASSES}
    assert {"LitmError", "InvalidOptionError", "InvalidOptionTypeError", "InvalidStrategyError"} <= names


@pytest.mark.parametrize("cls", [c for c in ERROR_CLASSES if c is not LitmError], ids=lambda c: c.__name__)
def test_every_error_in_litm_errors_is_a_litm_error_and_a_builtin(cls: type) -> None:
    assert issubclass(cls, LitmError)
    assert _builtin_bases(cls), f"{cls.__name__} derives from no built-in beyond Exception"
    assert cls.__doc__, f"{cls.__name__} says nowhere when it is raised"


def test_every_litm_error_anywhere_is_also_a_builtin() -> None:
    subclasses = _all_subclasses(LitmError)
    # The walk reaches subclasses of subclasses (EvalError -> ProbeError, InputFormatError -> UnreadableFileError).
    assert {"ProbeError", "BenchError", "UnreadableFileError"} <= {c.__name__ for c in subclasses}
    missing = sorted(f"{c.__module__}.{c.__name__}" for c in subclasses if not _builtin_bases(c))
    assert not missing


def test_option_errors_are_value_errors_and_type_errors_where_the_type_is_wrong() -> None:
    assert issubclass(litm.errors.InvalidOptionError, ValueError)
    assert issubclass(litm.errors.InvalidOptionTypeError, litm.errors.InvalidOptionError)
    assert issubclass(litm.errors.InvalidOptionTypeError, TypeError)
    assert issubclass(litm.errors.InvalidStrategyError, TypeError)
    assert issubclass(litm.errors.InvalidDocumentError, TypeError)


def test_no_litm_error_shadows_a_builtin_name() -> None:
    assert not [c.__name__ for c in ERROR_CLASSES if hasattr(builtins, c.__name__)]


def test_every_error_class_is_importable_from_litm() -> None:
    # A caller catching SpendBudgetExceeded or PriceUnknownError writes `from litm import ...`, like any other.
    import litm

    missing = sorted(c.__name__ for c in ERROR_CLASSES if getattr(litm, c.__name__, None) is not c)
    assert not missing, f"export these from src/litm/__init__.py (import and __all__): {', '.join(missing)}"
    assert {c.__name__ for c in ERROR_CLASSES} <= set(litm.__all__)


def test_redis_ledger_is_in_litm_spend_next_to_sqlite_ledger() -> None:
    import litm.spend
    from litm.spend import RedisLedger

    assert litm.spend.RedisLedger is RedisLedger and "RedisLedger" in litm.spend.__all__
    assert "SQLiteLedger" in litm.spend.__all__
    with pytest.raises(AttributeError, match="no attribute 'NoSuchLedger'"):
        litm.spend.NoSuchLedger  # noqa: B018
