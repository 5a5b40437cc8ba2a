"""Does placement help? A strategy benchmark on real multi-document QA, with plots and a report.

The data: the bundled NQ-Open (one gold passage), HotpotQA and 2WikiMultihopQA (several gold paragraphs; see
:mod:`litm.bench.goldsets`), or your own JSON Lines file (:mod:`litm.bench.datafile`, ``litm bench --data``).

``litm bench --model local`` (or :func:`run_bench` + :func:`litm.bench.outputs.write_outputs`) measures accuracy
with the gold passage in each final slot among BM25-mined distractors, derives each placement strategy's accuracy
for each gold retrieval rank from where :func:`litm.place` puts that rank, checks the derivation with direct
end-to-end runs, and adds closed-book and oracle controls and an anchor ablation. ``profile`` is driven by a
profile measured on the other half of the questions. Install the extras with ``pip install 'litm[bench]'``.

Example:
    >>> from litm.models import load_model                                             # doctest: +SKIP
    >>> from litm.bench import BenchConfig, run_bench                                  # doctest: +SKIP
    >>> from litm.bench.outputs import write_outputs                                   # doctest: +SKIP
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
from litm.bench.datafile import DataDoc, DataRecord, read_records
from litm.bench.design import (
    ARMS,
    GOLD_DESIGNS,
    arrangement,
    closed_book_prompt,
    gold_slot,
    gold_slots,
)
from litm.bench.goldsets import goldset_summary
from litm.bench.multihop import load_records
from litm.bench.outputs import BenchOutputs, refresh_outputs
from litm.bench.runner import BENCH_VERSION, BenchConfig, BenchError, BenchRun, run_bench
from litm.bench.sources import load_bench_items

__all__ = [
    "ARMS",
    "BENCH_VERSION",
    "GOLD_DESIGNS",
    "RANK_DISTRIBUTIONS",
    "BenchConfig",
    "BenchError",
    "BenchOutputs",
    "BenchRun",
    "DataDoc",
    "DataRecord",
    "Passage",
    "QAItem",
    "arrangement",
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
    "gold_slots",
    "goldset_summary",
    "load_bench_items",
    "load_items",
    "load_records",
    "mine_distractors",
    "rank_weights",
    "read_records",
    "refresh_outputs",
    "run_bench",
    "slot_cells",
    "summarize",
]
