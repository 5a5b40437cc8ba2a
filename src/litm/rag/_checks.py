"""The pipeline's argument checks, Haystack-style: every argument is validated when the pipeline is made.

Each check returns the value in its canonical form or raises a typed error naming the bad value.

Example:
    >>> positive("k", 10), stops("\\n\\n")
    (10, ('\\n\\n',))
    >>> positive("k", 0)
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: k must be >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.errors import InvalidOptionError, InvalidOptionTypeError, UnsupportedTypeError
from litm.models import Model
from litm.models._spec import parse_spec
from litm.placement import PositionProfile
from litm.rag._defaults import DEFAULT_RETRIEVER
from litm.retrieve import Index, Retriever
from litm.retrieve._retrievers import make_retriever

__all__ = ["IndexSource", "model_spec", "positive", "profile_of", "retriever_of", "stops"]


@dataclass(frozen=True)
class IndexSource:
    """How a retriever was made from an index, kept so the pipeline can be saved and rebuilt."""

    path: str
    kind: str
    rerank: str | None
    backend: str

    def to_dict(self) -> dict[str, object]:
        return {"index": self.path, "kind": self.kind, "rerank": self.rerank, "backend": self.backend}


def positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise InvalidOptionError(f"{name} must be >= 1, got {value}")
    return value


def stops(stop: object) -> tuple[str, ...] | None:
    if stop is None:
        return None
    items = [stop] if isinstance(stop, str) else stop
    if not isinstance(items, Sequence) or not all(isinstance(s, str) for s in items):
        raise InvalidOptionTypeError(f"stop must be a string or a list of strings, got {stop!r}")
    return tuple(items)


def profile_of(value: object) -> PositionProfile | None:
    if value is None or isinstance(value, PositionProfile):
        return value
    if isinstance(value, (str, Path)):
        return PositionProfile.load(value)
    raise InvalidOptionTypeError(f"profile must be a PositionProfile or a path, got {type(value).__name__}")


def retriever_of(value: object) -> tuple[Retriever, IndexSource | None]:
    if isinstance(value, (Index, str, Path)):
        index = value if isinstance(value, Index) else Index.open(value)
        return make_retriever(index, DEFAULT_RETRIEVER), IndexSource(str(index.path), DEFAULT_RETRIEVER, None, "numpy")
    if isinstance(value, Retriever):
        return value, None
    raise UnsupportedTypeError(
        f"retriever must be a litm retriever (anything with name and search(query, k)), an Index or an index "
        f"path, got {type(value).__name__}"
    )


def model_spec(model: object) -> str:
    if isinstance(model, Model):
        return model.spec or type(model).__name__
    if isinstance(model, str):
        return str(parse_spec(model))  # validates the spec now; the model loads on first use
    raise UnsupportedTypeError(f"model must be a litm model spec string or a Model, got {type(model).__name__}")
