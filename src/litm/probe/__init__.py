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
from litm.eval._runs import model_mode
from litm.eval._scoring import MISS_CLASSES, Score, normalize, score_output
from litm.eval._stats import Cell, fisher_less, fisher_two_sided, wilson
from litm.probe._analysis import DeadZone, EdgeCheck, TaskAnalysis, analyze, dead_zone, effective_length
from litm.probe._corpus import Corpus, default_corpus, load_corpus, split_sentences
from litm.probe._estimate import Estimate, estimate
from litm.probe._export import ProfileDiff, accuracy_table, diff_profiles, recommended_max_input_tokens, to_profile
from litm.probe._grid import ProbeConfig, TrialSpec, parse_depths, parse_lengths, plan
from litm.probe._insert import build_exact, fill_exact, insert_units
from litm.probe._layouts import LAYOUTS, Layout, get_layout
from litm.probe._outputs import ProbeOutputs, write_outputs
from litm.probe._recipe import rebuild_prompt, verify_row
from litm.probe._registry import TASKS, get_task
from litm.probe._rescore import rescore_rows
from litm.probe._rows import PROBE_VERSION
from litm.probe._runner import ProbeRun, run_probe
from litm.probe._schedule import PrefillCost
from litm.probe._sequential import StoppingRule, simulate
from litm.probe._tasks import Task, TaskInstance

__all__ = [
    "LAYOUTS",
    "MISS_CLASSES",
    "PROBE_VERSION",
    "TASKS",
    "Cell",
    "Corpus",
    "DeadZone",
    "EdgeCheck",
    "Estimate",
    "Layout",
    "PrefillCost",
    "ProbeConfig",
    "ProbeError",
    "ProbeOutputs",
    "ProbeRun",
    "ProfileDiff",
    "ResultsLog",
    "Score",
    "StoppingRule",
    "Task",
    "TaskAnalysis",
    "TaskInstance",
    "TrialSpec",
    "accuracy_table",
    "analyze",
    "build_exact",
    "dead_zone",
    "default_corpus",
    "diff_profiles",
    "effective_length",
    "estimate",
    "fill_exact",
    "fisher_less",
    "fisher_two_sided",
    "get_layout",
    "get_task",
    "insert_units",
    "load_corpus",
    "model_mode",
    "normalize",
    "parse_depths",
    "parse_lengths",
    "plan",
    "read_rows",
    "rebuild_prompt",
    "recommended_max_input_tokens",
    "rescore_rows",
    "run_probe",
    "score_output",
    "simulate",
    "split_sentences",
    "to_profile",
    "verify_row",
    "wilson",
    "write_outputs",
]
