"""Does placement help? A strategy benchmark on real multi-document QA (NQ-Open), with plots and a report.

``litm bench --model local`` (or :func:`run_bench` + :func:`write_outputs`) measures accuracy with the gold
passage in each final slot among BM25-mined distractors, derives each placement strategy's accuracy for each
gold retrieval rank from where :func:`litm.place` puts that rank, checks the derivation with direct
end-to-end runs, and adds closed-book and oracle controls and an anchor ablation. ``profile`` is driven by a
profile measured on the other half of the questions. Install the extras with ``pip install 'litm[bench]'``.

Example:
    >>> from litm.models import load_model                                             # doctest: +SKIP
    >>> from litm.bench import BenchConfig, run_bench, write_outputs                   # doctest: +SKIP
    >>> run = run_bench(load_model("local"), BenchConfig(questions=20), "out/")        # doctest: +SKIP
    >>> write_outputs("out/", run.rows, run.settings).summary["by_k"]["10"]["questions"]  # doctest: +SKIP
    20
"""

from litm.bench.analysis import (
    RANK_DISTRIBUTIONS,
    dead_zone_test,
    derived_cells,
    direct_check,
    fold_profiles,
    gain_intervals,
    gap_recovered,
    rank_weights,
    slot_cells,
    summarize,
)
from litm.bench.data import Passage, QAItem, contains_answer, eligible_questions, load_items, mine_distractors
from litm.bench.design import ARMS, STRATEGIES, arrangement, build_prompt, closed_book_prompt, gold_slot
from litm.bench.outputs import BenchOutputs, refresh_outputs, write_outputs
from litm.bench.runner import BENCH_VERSION, BenchConfig, BenchError, BenchRun, run_bench

__all__ = [
    "ARMS",
    "BENCH_VERSION",
    "RANK_DISTRIBUTIONS",
    "STRATEGIES",
    "BenchConfig",
    "BenchError",
    "BenchOutputs",
    "BenchRun",
    "Passage",
    "QAItem",
    "arrangement",
    "build_prompt",
    "closed_book_prompt",
    "contains_answer",
    "dead_zone_test",
    "derived_cells",
    "direct_check",
    "eligible_questions",
    "fold_profiles",
    "gain_intervals",
    "gap_recovered",
    "gold_slot",
    "load_items",
    "mine_distractors",
    "rank_weights",
    "refresh_outputs",
    "run_bench",
    "slot_cells",
    "summarize",
    "write_outputs",
]
