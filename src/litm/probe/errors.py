"""The probe's own error type (a :class:`~litm.errors.LitmError`, so the CLI reports it in one line)."""

from __future__ import annotations

from litm.errors import EvalError

__all__ = ["ProbeError"]


class ProbeError(EvalError):
    """A probe cannot be set up or run: bad grid, unusable corpus, mismatched resume, unknown task or layout.

    Example:
        >>> raise ProbeError("length 16 is too short for the prompt (overhead 40 tokens)")
        Traceback (most recent call last):
        ...
        litm.probe.errors.ProbeError: length 16 is too short for the prompt (overhead 40 tokens)
    """
