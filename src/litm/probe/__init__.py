"""The dead-zone probe: measure where *your* model loses facts, with your prompt layout, on real filler.

``litm probe --model local`` (or :func:`run_probe` + :func:`write_outputs`) runs a grid of context
lengths x needle depths x trials for tasks of graded difficulty (``needle``, ``paraphrase``, ``chain``,
``multi``, ``kv``, ``docqa``, and the non-literal ``nolima`` family of :mod:`litm.probe._nolima`), with a
closed-book control and two prompt layouts, scores answers deterministically (Liu et al.'s normalised
first-line match) and classes every miss. The analysis gives accuracy with Wilson intervals, the dead zone
(depths significantly below the better edge), the effective context length, a recommended
``max_input_tokens`` and a :class:`~litm.placement._profile.PositionProfile` that the ``profile`` placement
strategy and the token gate consume.

Example:
    >>> from litm.models import load_model                                       # doctest: +SKIP
    >>> from litm.probe import ProbeConfig, run_probe, write_outputs             # doctest: +SKIP
    >>> run = run_probe(load_model("local"), ProbeConfig(lengths=(512, 1024), trials=4), "out/")  # doctest: +SKIP
    >>> write_outputs("out/", run.rows, run.settings).profile.metadata["effective_context_length"]  # doctest: +SKIP
    1024

Before a run, :func:`estimate` says what it will cost; after it, :func:`to_profile` turns analyses into a profile,
:func:`diff_profiles` compares two and :func:`recommended_max_input_tokens` reads the token budget off a task's
analysis (``ProbeOutputs.analyses[task]``).
"""

from litm.errors import ProbeError
from litm.probe._estimate import estimate
from litm.probe._export import diff_profiles, recommended_max_input_tokens, to_profile
from litm.probe._grid import ProbeConfig
from litm.probe._outputs import ProbeOutputs, write_outputs
from litm.probe._runner import ProbeRun, run_probe

__all__ = [
    "ProbeConfig",
    "ProbeError",
    "ProbeOutputs",
    "ProbeRun",
    "diff_profiles",
    "estimate",
    "recommended_max_input_tokens",
    "run_probe",
    "to_profile",
    "write_outputs",
]
