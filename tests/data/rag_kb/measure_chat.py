"""Measure how often a chat model answers with a citation only, on this small knowledge base.

Run from the repository root (a few minutes on two cores with Qwen2.5-Coder 0.5B):

    python tests/data/rag_kb/measure_chat.py local:qwen2.5-coder-0.5b

It indexes ``docs/`` (BM25, no vectors) in a temporary folder, asks every question of ``questions.jsonl``
through :class:`litm.rag.Pipeline` (k = 5, litm's defaults otherwise) and prints one line per question and a
summary: first replies that held nothing but bracketed groups (``[id]`` citations, or the answer in brackets),
answers printed with no text but brackets, answers that contain an expected answer, and answers with litm's
attribution. It runs on litm before and after the fix for a chat model's citation-only replies (issue 40,
defect 9), so it reads only what both have.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

from litm.models import load_model
from litm.rag import Pipeline
from litm.retrieve import Index

HERE = Path(__file__).resolve().parent
_CITATION = re.compile(r"[\[\u3010\uff3b][^\]\u3011\uff3d\n]{1,200}[\]\u3011\uff3d]")


def _norm(text: str) -> str:
    return " ".join(text.casefold().replace(",", "").split())


def main(spec: str) -> None:
    items = [json.loads(line) for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    model = load_model(spec)
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.create(Path(tmp) / "idx", dense=False)
        index.sync(HERE / "docs")
        rag = Pipeline.from_index(index, retriever="bm25", model=model, k=5)
        first_bare = shown_bare = correct = attributed = 0
        start = time.perf_counter()
        for item in items:
            answer = rag.ask(item["question"])
            earlier = getattr(answer, "earlier", ())
            first = (earlier[0] if earlier else answer.completion).text.strip()
            first_bare += _bare(first)
            shown_bare += _bare(answer.text)
            right = any(_norm(a) in _norm(answer.text) for a in item["answers"])
            correct += right
            attributed += bool(answer.attribution)
            flags = ("BRACKETS-ONLY " if _bare(first) else "") + ("ok" if right else "wrong")
            note = getattr(answer, "note", "")
            print(f"{flags:>19} | {item['question']} -> {answer.text!r} (first reply {first!r}) {note}", flush=True)
        took = time.perf_counter() - start
    n = len(items)
    print(f"{spec}: {n} questions; {first_bare} first replies held only brackets, {shown_bare} answers shown with no "
          f"text but brackets; {correct} answers contain an expected answer; {attributed} have litm's attribution; "
          f"{took:.0f} s")


def _bare(text: str) -> bool:
    """Nothing but bracketed groups (and punctuation): ``[notes.md#0]``, ``[1991]``, or an empty answer."""
    return not _CITATION.sub("", text).strip(" .,;:\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "local:qwen2.5-coder-0.5b")
