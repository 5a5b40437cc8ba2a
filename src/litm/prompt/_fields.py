"""What every prompt option object shares: a validated ``replace`` and a strict reading of its dict form."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeVar

from litm.errors import PromptOptionError

__all__ = ["checked_keys", "construct", "field_values", "replace_fields"]

T = TypeVar("T")


def replace_fields(options: T, changes: Mapping[str, object]) -> T:
    """A copy of the dataclass ``options`` with ``changes`` applied; an unknown field name is refused."""
    known = {f.name for f in dataclasses.fields(options)}  # type: ignore[arg-type]
    unknown = sorted(set(changes) - known)
    if unknown:
        raise PromptOptionError(
            f"unknown {type(options).__name__} field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return dataclasses.replace(options, **changes)  # type: ignore[type-var]


def construct(cls: type[T], values: Mapping[str, object]) -> T:
    """``cls(**values)``: the option object validates each value itself (``__post_init__``), with a typed error."""
    return cls(**values)


def field_values(options: object) -> dict[str, object]:
    """Every field of the dataclass ``options`` by name (the start of each object's ``to_dict``)."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}  # type: ignore[arg-type]


def checked_keys(cls: type, data: object, label: str) -> dict[str, object]:
    """``data`` as a dict if it is a mapping whose keys are all fields of ``cls``, else a typed error.

    Unknown keys are refused rather than ignored: a misspelt key in a saved builder would otherwise
    silently fall back to a default.
    """
    if not isinstance(data, Mapping):
        raise PromptOptionError(f"{label} must be a JSON object, got {type(data).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(str(k) for k in set(data) - known)
    if unknown:
        raise PromptOptionError(f"unknown {label} field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return dict(data)
