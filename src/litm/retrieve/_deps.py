"""Optional third-party packages of the retrieval layer, imported on first use.

``import litm.retrieve`` stays light: bm25s, PyStemmer, onnxruntime, tokenizers, numpy, FAISS and pypdf are
imported only by the code that needs them, and a missing one raises
:class:`~litm.errors.MissingDependencyError` naming the extra that brings it.

>>> RAG_INSTALL
"pip install 'litm[rag]'"
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from litm.errors import MissingDependencyError

__all__ = ["FAISS_INSTALL", "PDF_INSTALL", "RAG_INSTALL", "LazyModule", "require"]

RAG_INSTALL = "pip install 'litm[rag]'"
FAISS_INSTALL = "pip install 'litm[faiss]'"
PDF_INSTALL = "pip install 'litm[pdf]'"


def require(module: str, purpose: str, install: str = RAG_INSTALL) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` saying what needs it and how to install it.

    >>> require("json", "reading manifests").__name__
    'json'
    >>> require("no_such_module_xyz", "testing")
    Traceback (most recent call last):
    ...
    litm.errors.MissingDependencyError: testing needs no_such_module_xyz: pip install 'litm[rag]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"{purpose} needs {module}: {install}") from exc


class LazyModule:
    """A stand-in for a module that imports it on first attribute access.

    Modules bind numpy as ``np = LazyModule("numpy", ...)`` at run time and ``import numpy as np`` under
    ``TYPE_CHECKING``: the type checker sees the real module, ``import litm.retrieve`` does not import numpy,
    and a missing numpy surfaces as :class:`MissingDependencyError` at the first use, naming the extra.

    >>> LazyModule("json", "reading manifests").dumps([1])
    '[1]'
    """

    def __init__(self, name: str, purpose: str, install: str = RAG_INSTALL) -> None:
        self._name = name
        self._purpose = purpose
        self._install = install
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = require(self._name, self._purpose, self._install)
        return getattr(self._module, attr)
