"""The evaluation core the probe and the benchmark share.

Scoring (Liu et al.'s normalised first-line match and miss classes), small-sample statistics (Wilson
intervals, exact tests, :class:`Cell`), the append-only results log that makes runs resumable, the bundled
datasets, what a run records about its model, and the pieces of the offline HTML reports and plots.
"""

from litm.errors import DataFileError, EvalError

__all__ = [
    "DataFileError",
    "EvalError",
]
