"""Print what each anchor arm of the benchmark costs, in tokens per document beyond the plain prompt.

For the first questions of the two runs the anchor ablation extends (NQ k = 20 with the gold passage in slot 10,
and 2Wiki k = 10 with the gold documents in the middle design), every arm's prompt is built exactly as the
benchmark builds it (:func:`litm.bench._design.build_prompt`, with the run's instruction) and counted with each
model's own tokenizer (the embedded Gemma 3 270M, Qwen2.5-Coder 0.5B): the table gives the mean tokens per
document above ``plain``, and each anchor element's cost (``default`` minus the arm without it;
``default+middle`` minus ``default``).

    python scripts/anchor_tokens.py --questions 20          # seconds; loads both GGUF files, runs no model

Counts only: the numbers do not depend on the machine.
"""

from __future__ import annotations

import argparse
from statistics import mean

from litm.bench._data import Passage
from litm.bench._design import (
    ANCHOR_ELEMENT_ARMS,
    LIU_INSTRUCTION,
    MULTIHOP_INSTRUCTION,
    QUOTE_ARM,
    arm_tokens_per_doc,
    gold_slots,
)
from litm.bench._sources import load_bench_items
from litm.tokens import get_tokenizer

ARMS = ("plain", "default", "bracket", *ANCHOR_ELEMENT_ARMS, QUOTE_ARM)
MODELS = ("local", "local:qwen2.5-coder-0.5b")
#: What each element arm removes (or, for the middle marker, adds) relative to ``default``.
ELEMENTS = {
    "default-position": "position attribute",
    "default-score": "score attribute",
    "default-recap": "recap line",
    "default-closing": "id in the closing tag",
    "default+middle": "middle marker (added)",
}
Prompt = tuple[list[Passage], str, str]


def _runs(questions: int) -> dict[str, list[Prompt]]:
    """Per run: the documents in prompt order, the question and the instruction of its first questions."""
    nq, _ = load_bench_items("nq", questions=questions, k=20, retriever="auto")
    wiki, _ = load_bench_items("2wiki", questions=questions, k=10, retriever="auto")
    return {
        "NQ k=20, gold in slot 10": [(it.ranked(10, 20), it.question, LIU_INSTRUCTION) for it in nq],
        "2Wiki k=10, middle design": [
            (it.golds_at(gold_slots("middle", 10, len(it.golds)), 10), it.question, MULTIHOP_INSTRUCTION)
            for it in wiki
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    runs = _runs(args.questions)
    for spec in MODELS:
        count = get_tokenizer(spec).count
        for run, prompts in runs.items():
            costs = [arm_tokens_per_doc(d, q, count, ARMS, instruction=i) for d, q, i in prompts]
            means = {arm: mean(c[arm] for c in costs) for arm in ARMS}
            print(f"\n{spec}, {run} ({len(prompts)} questions): tokens per document beyond plain")
            for arm in ARMS:
                print(f"  {arm:18s} {means[arm]:6.2f}")
            print("  anchor elements (tokens per document):")
            for arm, what in ELEMENTS.items():
                cost = means[arm] - means["default"] if arm == "default+middle" else means["default"] - means[arm]
                print(f"    {what:24s} {cost:6.2f}")


if __name__ == "__main__":
    main()
