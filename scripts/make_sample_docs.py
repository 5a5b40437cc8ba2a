"""Build src/litm/data/sample_docs.jsonl: one NQ-Open question, its gold passage and 7 distractors.

The distractors are the passages of other NQ-Open questions that share the most words with the
question and contain none of its answers; the score is that word-overlap fraction. Run from the
repository root with the NQ-Open oracle file as the argument (see data/README.md for attribution).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

QUESTION_INDEX = 0
K = 8


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def main(src: str) -> None:
    with gzip.open(src, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    target = rows[QUESTION_INDEX]
    q = words(target["question"])
    answers = [a.lower() for a in target["answers"]]

    def score(text: str) -> float:
        return round(len(q & words(text)) / max(1, len(q)), 4)

    gold = target["ctxs"][0]
    candidates = []
    for i, row in enumerate(rows):
        ctx = row["ctxs"][0]
        if i == QUESTION_INDEX or any(a in ctx["text"].lower() for a in answers):
            continue
        candidates.append((score(ctx["title"] + " " + ctx["text"]), i, ctx))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    docs = [(score(gold["title"] + " " + gold["text"]), QUESTION_INDEX, gold), *candidates[: K - 1]]
    docs.sort(key=lambda d: -d[0])
    out = Path("src/litm/data/sample_docs.jsonl")
    with out.open("w", encoding="utf-8") as f:
        for s, i, ctx in docs:
            rec = {"id": f"nq-{i}", "title": ctx["title"], "text": ctx["text"], "score": s,
                   "source": "NQ-Open (Liu et al. 2023 release)", "gold": i == QUESTION_INDEX}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    meta = {"question": target["question"], "answers": target["answers"]}
    Path("src/litm/data/sample_question.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {len(docs)} documents to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
