"""Does placement help? A strategy benchmark on real multi-document QA, with plots and a report.

The data: the bundled NQ-Open (one gold passage), HotpotQA and 2WikiMultihopQA (several gold paragraphs; see
``docs/bench.md``), or your own JSON Lines file (``litm bench --data``, format in ``docs/bench-data.md``).

``litm bench --model local`` (or :func:`run_bench` + :meth:`BenchRun.write_outputs`) measures accuracy
with the gold passage in each final slot among BM25-mined distractors, derives each placement strategy's accuracy
for each gold retrieval rank from where :func:`litm.place` puts that rank, checks the derivation with direct
end-to-end runs, and adds closed-book and oracle controls and an anchor ablation. ``profile`` is driven by a
profile measured on the other half of the questions. Install the extras with ``pip install 'litm[bench]'``.

Example:
    >>> from litm.models import load_model                                             # doctest: +SKIP
    >>> from litm.bench import BenchConfig, run_bench                                  # doctest: +SKIP
    >>> run = run_bench(load_model("local"), BenchConfig(questions=20), "out/")        # doctest: +SKIP
    >>> run.write_outputs().summary["by_k"]["10"]["questions"]                         # doctest: +SKIP
    20

:func:`load_bench_items` loads any data source as :class:`QAItem` (pass them to :func:`run_bench` as ``items``);
:func:`summarize` re-analyses rows without writing; :func:`refresh_outputs` rewrites a run's outputs from its rows.
"""

from litm.bench._analysis import summarize
from litm.bench._config import BenchConfig
from litm.bench._data import QAItem, load_items
from litm.bench._outputs import BenchOutputs, refresh_outputs
from litm.bench._runner import BenchRun, run_bench
from litm.bench._sources import load_bench_items
from litm.errors import BenchError

__all__ = [
    "BenchConfig",
    "BenchError",
    "BenchOutputs",
    "BenchRun",
    "QAItem",
    "load_bench_items",
    "load_items",
    "refresh_outputs",
    "run_bench",
    "summarize",
]
