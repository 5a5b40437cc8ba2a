"""The static MiniLM table: pinned, made from the model it claims to be, ranking by meaning, and usable as the
``static`` compression scorer (the fast path of issue 39)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from litm.compress import compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import SCORERS, StaticScorer, get_scorer
from litm.errors import LitmError, ModelIntegrityError, ModelNotFoundError
from litm.placement import Doc
from litm.retrieve._embedder import MiniLM
from litm.retrieve._static import STATIC_FILE, STATIC_SHA256, StaticMiniLM
from litm.util._files import sha256_file
from retrieve_reference import TEXTS


@pytest.fixture(scope="module")
def static() -> StaticMiniLM:
    return StaticMiniLM()


def test_the_bundled_table_has_the_pinned_hash() -> None:
    assert sha256_file(STATIC_FILE) == STATIC_SHA256


def test_a_changed_or_missing_table_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "table.npz"
    shutil.copyfile(STATIC_FILE, copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError) as info:
        StaticMiniLM(copy)
    assert isinstance(info.value, LitmError)
    with pytest.raises(ModelNotFoundError, match="cannot read"):
        StaticMiniLM(tmp_path / "absent.npz")


def test_each_row_is_the_token_alone_through_the_model_projected(static: StaticMiniLM) -> None:
    # Rebuild a few rows the way scripts/build_static_minilm.py does, up to the projection and the weight:
    # a row's direction must agree with the model's own output for that token in the table's subspace, so the
    # shipped file is what it claims to be (not, say, a table for another vocabulary or model).
    table = static._table
    ids = np.array([2154, 4937, 2103, 12779, 7852])  # day, cat, city, volcano, bread
    inputs = np.stack([np.full(len(ids), 101), ids, np.full(len(ids), 102)], axis=1).astype(np.int64)
    own = MiniLM().hidden(inputs)[:, 1]
    # Directions between tokens are kept by a projection on the leading components: compare the tokens'
    # pairwise cosines in both spaces.
    def cosines(m: np.ndarray) -> np.ndarray:
        m = m - m.mean(axis=0)
        m = m / np.linalg.norm(m, axis=1, keepdims=True)
        return m @ m.T

    assert np.corrcoef(cosines(own).ravel(), cosines(table[ids]).ravel())[0, 1] > 0.8


def test_vectors_are_unit_length_rank_meaning_and_empty_text_is_zero(static: StaticMiniLM) -> None:
    vectors = static.embed([*TEXTS, "", "   "])
    assert vectors.shape == (len(TEXTS) + 2, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[: len(TEXTS)], axis=1), 1.0, atol=1e-5)
    assert not vectors[-2:].any()
    question, passage, cat = vectors[1], vectors[2], vectors[0]
    assert question @ passage > question @ cat
    assert static.embed([]).shape == (0, 256)


def test_a_batch_gives_what_one_text_at_a_time_gives(static: StaticMiniLM) -> None:
    batch = static.embed(TEXTS)
    np.testing.assert_allclose(np.stack([static.embed_one(t) for t in TEXTS]), batch, atol=1e-6)


def test_static_is_a_compression_scorer_that_keeps_the_relevant_document() -> None:
    assert "static" in SCORERS and isinstance(get_scorer("static"), StaticScorer)
    docs = [
        Doc(text="The bakery opens at seven. Its rye bread sells out by noon.", id="a", title="Bakery"),
        Doc(text="Etna is an active volcano in Sicily. It erupted in 2021. People hike it.", id="b", title="Etna"),
        Doc(text="Chess openings have names. The Sicilian Defence is popular.", id="c", title="Chess"),
    ]
    out = compress(docs, "When did the volcano Etna last erupt?", tokenizer=TargetCounter.of("openai:gpt-4o"),
                   ratio=3, scorer="static")  # fmt: skip
    # A bag of token vectors finds the document about the question; within it, it prefers the sentence that
    # shares the question's words (here not the one with the date, which MiniLM's full pass would pick).
    assert [c.original.id for c in out.kept] == ["b"]
    assert out.tokens < out.original_tokens
