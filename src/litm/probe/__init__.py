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
"""

from litm.errors import ProbeError
from litm.eval._results import ResultsLog, read_rows
from litm.probe._analysis import DeadZone, TaskAnalysis, analyze
from litm.probe._corpus import Corpus, load_corpus
from litm.probe._estimate import ProbeEstimate, estimate
from litm.probe._export import ProfileDiff, accuracy_table, diff_profiles, recommended_max_input_tokens, to_profile
from litm.probe._grid import ProbeConfig, plan
from litm.probe._outputs import ProbeOutputs, write_outputs
from litm.probe._recipe import rebuild_prompt, verify_row
from litm.probe._registry import get_task
from litm.probe._rescore import rescore_rows
from litm.probe._runner import ProbeRun, run_probe
from litm.probe._sequential import StoppingRule, simulate

__all__ = [
    "Corpus",
    "DeadZone",
    "ProbeConfig",
    "ProbeError",
    "ProbeEstimate",
    "ProbeOutputs",
    "ProbeRun",
    "ProfileDiff",
    "ResultsLog",
    "StoppingRule",
    "TaskAnalysis",
    "accuracy_table",
    "analyze",
    "diff_profiles",
    "estimate",
    "get_task",
    "load_corpus",
    "plan",
    "read_rows",
    "rebuild_prompt",
    "recommended_max_input_tokens",
    "rescore_rows",
    "run_probe",
    "simulate",
    "to_profile",
    "verify_row",
    "write_outputs",
]
