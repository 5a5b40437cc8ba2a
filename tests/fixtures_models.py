"""The embedded default model (Gemma 3 270M) for the tests that run it, loaded once per test module."""

from __future__ import annotations

import pytest

from litm.models import load_model
from litm.models._local import LocalModel


@pytest.fixture(scope="module", name="gemma")
def gemma_fixture() -> LocalModel:
    model = load_model("local")
    assert isinstance(model, LocalModel)
    return model
