"""Keep an old import path working for one release, with a warning that names the new one.

A moved module's old file becomes two lines that call :func:`alias_module`; ``import litm.old`` then
returns the new module object itself (so identity checks and monkeypatching still see one module), and
a :class:`DeprecationWarning` points at the caller's import.

Example (inside ``litm/old.py``)::

    from litm.util.deprecation import alias_module
    alias_module(__name__, "litm.new.place")
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["alias_module"]


def alias_module(old: str, new: str, *, removed_in: str = "0.3") -> None:
    """Make module ``old`` an alias of ``new`` and warn the importer that it moved."""
    warnings.warn(
        f"{old} moved to {new}; import it from there ({old} goes in litm {removed_in})",
        DeprecationWarning,
        stacklevel=3,
    )
    sys.modules[old] = importlib.import_module(new)
