"""matplotlib for the probe's and the benchmark's PNG plots, imported on first use with the Agg backend.

Importing litm never imports matplotlib: it is an optional dependency (the ``bench`` extra), and the
Agg backend needs no display.
"""

from __future__ import annotations

from types import ModuleType

from litm.errors import MissingDependencyError

__all__ = ["pyplot"]


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` with the Agg backend; :class:`~litm.errors.MissingDependencyError` without it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("plots need matplotlib: pip install 'litm[bench]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
