"""Settings kept per model spec: a model's measured position profile (``auto`` placement) and its anchors.

Both are looked up by the spec a caller gives (``"local"``, ``"openai:gpt-4o"``), compared after stripping
surrounding blanks, and may be set from any thread; this is the one place that holds that rule.

Example:
    >>> notes = ByModel()
    >>> notes.set(" local ", "measured")
    >>> notes.get("local"), notes.get("openai:gpt-4o"), notes.get(None)
    ('measured', None, None)
    >>> notes.remove("local"); notes.copy()
    {}
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from litm.errors import InvalidOptionError, InvalidOptionTypeError

__all__ = ["ByModel", "model_spec"]

T = TypeVar("T")


def model_spec(spec: object) -> str:
    """``spec`` as a registry key: a non-empty string, stripped; anything else is a typed error.

    Example:
        >>> model_spec(" local ")
        'local'
    """
    if not isinstance(spec, str):
        raise InvalidOptionTypeError(f"a model spec must be a string, got {type(spec).__name__}")
    if not spec.strip():
        raise InvalidOptionError("a model spec must be a non-empty string")
    return spec.strip()


class ByModel(Generic[T]):
    """One value per model spec, thread-safe; setting a spec again replaces its value."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()

    def set(self, spec: object, value: T) -> None:
        key = model_spec(spec)
        with self._lock:
            self._items[key] = value

    def remove(self, spec: object) -> None:
        """Forget ``spec``'s value (a spec with none is ignored)."""
        key = model_spec(spec)
        with self._lock:
            self._items.pop(key, None)

    def get(self, spec: object) -> T | None:
        """``spec``'s value, or None (also for ``spec=None``)."""
        if spec is None:
            return None
        key = model_spec(spec)
        with self._lock:
            return self._items.get(key)

    def copy(self) -> dict[str, T]:
        """Every value by spec, as a new dict."""
        with self._lock:
            return dict(self._items)
