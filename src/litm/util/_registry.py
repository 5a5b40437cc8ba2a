"""Named plugins with one rule: a name is taken once, and other packages add theirs by entry point.

Placement strategies (``litm.strategies``) and model backends (``litm.backends``) are both registries of
factories by name. Each follows the same rules, so they live here once: registering a taken name is
refused unless ``replace=True``; entry points published by other packages are loaded on the first lookup
of a name litm does not know, and never replace a name registered in code; registration is thread-safe.

Example:
    >>> colours = Registry("colour", "example.colours")
    >>> colours.register("red", lambda: "#f00")
    >>> colours.get("red")()
    '#f00'
    >>> colours.register("red", lambda: "#e00")
    Traceback (most recent call last):
    ...
    litm.errors.AlreadyRegisteredError: colour 'red' is already registered (pass replace=True to replace it)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Generic, TypeVar

from litm.errors import AlreadyRegisteredError

__all__ = ["Registry"]

F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[F]):
    """Factories by name; ``kind`` names them in messages, ``group`` is the entry-point group."""

    def __init__(self, kind: str, group: str, builtins: Mapping[str, F] | None = None) -> None:
        self.kind = kind
        self.group = group
        self._items: dict[str, F] = dict(builtins or {})
        self._lock = threading.Lock()
        self._plugins_loaded = False
        #: A read-only view of every registered factory (entry points included once loaded).
        self.view: Mapping[str, F] = MappingProxyType(self._items)

    def register(self, name: str, factory: F, *, replace: bool = False) -> None:
        """Add ``factory`` under ``name``; a taken name raises :class:`~litm.errors.AlreadyRegisteredError`."""
        with self._lock:
            if name in self._items and not replace:
                raise AlreadyRegisteredError(
                    f"{self.kind} {name!r} is already registered (pass replace=True to replace it)"
                )
            self._items[name] = factory

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a missing name is ignored)."""
        with self._lock:
            self._items.pop(name, None)

    def load_plugins(self) -> None:
        """Register what other packages publish under :attr:`group` (once per process)."""
        with self._lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True
            found = [ep for ep in entry_points(group=self.group) if ep.name not in self._items]
        for ep in found:
            with self._lock:
                # A name registered in code since the scan wins over the plugin.
                self._items.setdefault(ep.name, ep.load())

    def names(self) -> list[str]:
        """Every registered name, plugins included, in registration order."""
        self.load_plugins()
        with self._lock:
            return list(self._items)

    def get(self, name: str) -> F | None:
        """The factory for ``name`` (looking at plugins when the name is not registered), or None."""
        with self._lock:
            found = self._items.get(name)
        if found is None:
            self.load_plugins()
            with self._lock:
                found = self._items.get(name)
        return found
