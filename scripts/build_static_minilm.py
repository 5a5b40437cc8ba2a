"""Build ``src/litm/retrieve/data/minilm-static.npz``: all-MiniLM-L6-v2 reduced to one vector per WordPiece token.

The ``static`` compression scorer embeds a sentence as the sum of its tokens' vectors, with no transformer pass,
which is what makes it fast enough for the fast path (issue 39: >= 20k document tokens/s on 2 cores; the full
MiniLM pass gives about 2.4k). How the table is made, in the manner of model2vec's distillation:

1. every token of the 30,522-token vocabulary goes through the pinned int8 ONNX model alone, as
   ``[CLS] token [SEP]``, and its output vector at the token's position is kept;
2. the vectors are centred and projected on their first 256 principal components;
3. each token's vector is scaled by a smooth inverse frequency weight, ``a / (a + p(token))`` with
   ``a = 1e-3``, where ``p`` is the token's share of the bundled HotpotQA and 2WikiMultihopQA paragraphs
   (Wikipedia, and none of the NQ-Open items the benchmark scores), so that frequent pieces (``the``, ``,``)
   barely move a sum;
4. each row is stored as int8 with one float32 scale (rounding moves a cosine by about 1e-3).

Run from the repository root; it prints the file's SHA-256, which ``litm.retrieve._static`` pins:

    .venv/bin/python scripts/build_static_minilm.py
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path

import numpy as np

from litm.retrieve._embedder import MiniLM
from litm.retrieve._model_files import load_tokenizer

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/litm/retrieve/data/minilm-static.npz"
DATA = ROOT / "src/litm/data"
DIM = 256
SIF_A = 1e-3
CLS, SEP = 101, 102


def paragraphs() -> list[str]:
    """The bundled multi-hop paragraphs: title and text."""
    texts = []
    with gzip.open(DATA / "hotpotqa-dev-distractor-first103.json.gz", "rt", encoding="utf-8") as f:
        for example in json.load(f):
            texts += [f"{title} {''.join(sentences)}" for title, sentences in example["context"]]
    with gzip.open(DATA / "2wikimultihopqa-dev-first200.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            ctx = json.loads(line)["metadata"]["context"]
            pairs = zip(ctx["title"], ctx["content"], strict=True)
            texts += [f"{title} {' '.join(content)}" for title, content in pairs]
    return texts


def token_vectors(model: MiniLM, size: int, batch: int = 1024) -> np.ndarray:
    """The model's output at the token's position for ``[CLS] token [SEP]``, for every token id."""
    out = np.zeros((size, 384), dtype=np.float32)
    for lo in range(0, size, batch):
        ids = np.arange(lo, min(size, lo + batch))
        inputs = np.stack([np.full(len(ids), CLS), ids, np.full(len(ids), SEP)], axis=1).astype(np.int64)
        out[lo : lo + len(ids)] = model.hidden(inputs)[:, 1]
    return out


def main() -> None:
    tokenizer = load_tokenizer()
    size = tokenizer.get_vocab_size()
    vectors = token_vectors(MiniLM(), size)
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ components[:DIM].T
    counts = np.zeros(size)
    for encoding in tokenizer.encode_batch(paragraphs(), add_special_tokens=False):
        np.add.at(counts, encoding.ids, 1)
    weighted = projected * (SIF_A / (SIF_A + counts / counts.sum()))[:, None]
    scales = np.maximum(np.abs(weighted).max(axis=1), 1e-12) / 127.0
    quantised = np.round(weighted / scales[:, None]).astype(np.int8)
    buf = io.BytesIO()
    np.savez_compressed(buf, vectors=quantised, scales=scales.astype(np.float32))
    OUT.write_bytes(buf.getvalue())
    data = buf.getvalue()
    print(f"{OUT.relative_to(ROOT)}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"corpus: {int(counts.sum()):,} tokens; table {quantised.shape}")


if __name__ == "__main__":
    main()
