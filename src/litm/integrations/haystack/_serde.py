"""Saving and loading the Haystack components: ``{"type", "init_parameters"}`` with JSON values only.

Haystack's ``default_from_dict`` imports any nested ``{"type": "module.Class"}`` it finds, and a saved
:class:`~litm.prompt.PromptBuilder` has that shape (``litm.prompt.PromptBuilder``), which Haystack's import
allowlist refuses; the components therefore read their parameters themselves: the class path is checked,
and every parameter goes to the constructor, which validates it like a new one.

Example:
    >>> class Thing:
    ...     def __init__(self, size: int = 1) -> None:
    ...         self.size = size
    >>> load(Thing, {"type": qualified_name(Thing), "init_parameters": {"size": 3}}).size
    3
    >>> load(Thing, {"type": "other.Thing", "init_parameters": {}})
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: cannot load a 'other.Thing' as ...Thing
"""

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from litm.errors import InvalidOptionError, InvalidOptionTypeError

__all__ = ["dump", "load", "qualified_name"]

T = TypeVar("T")


def qualified_name(cls: type) -> str:
    """The class path Haystack saves a component under (its ``__module__`` and name)."""
    return f"{cls.__module__}.{cls.__name__}"


def dump(obj: object, **init_parameters: object) -> dict[str, Any]:
    """The saved form of ``obj``: its class path and the parameters that rebuild it."""
    return {"type": qualified_name(type(obj)), "init_parameters": init_parameters}


def load(cls: type[T], data: object, **rebuild: Callable[[object], object]) -> T:
    """The component ``data`` describes, built by ``cls``'s constructor (which checks every parameter).

    ``rebuild`` maps a parameter to what turns its saved form back into the value the constructor takes
    (``placement=PlacementOptions.from_dict``); a parameter saved as None is passed as None.
    """
    if not isinstance(data, dict):
        raise InvalidOptionTypeError(f"a saved {cls.__name__} is a mapping, got {type(data).__name__}")
    if data.get("type") != qualified_name(cls):
        raise InvalidOptionError(f"cannot load a {data.get('type')!r} as {qualified_name(cls)}")
    params = data.get("init_parameters") or {}
    if not isinstance(params, dict):
        raise InvalidOptionTypeError(f"init_parameters of a saved {cls.__name__} must be a mapping")
    # The constructor's own signature: a component class's metaclass call takes (*args, **kwargs).
    known = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InvalidOptionError(
            f"{cls.__name__}: unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    params = {
        name: rebuild[name](value) if name in rebuild and value is not None else value for name, value in params.items()
    }
    return cls(**params)
