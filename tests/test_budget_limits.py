"""A token budget read from a measured position profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from litm.budget._limits import max_input_tokens_from
from litm.errors import InvalidOptionError, InvalidProfileError
from litm.placement._profile import PositionProfile


def test_budget_from_a_measured_profile(tmp_path: Path) -> None:
    measured = PositionProfile.from_weights([1.0, 0.7, 0.95], metadata={"recommended_max_input_tokens": 2048})
    path = tmp_path / "profile.json"
    measured.save(path)
    assert max_input_tokens_from(path, reserve_output_tokens=48) == 2000
    assert max_input_tokens_from(measured, context_window=1024) == 1024
    assert max_input_tokens_from(measured, cap=1500, reserve_output_tokens=100) == 1400
    with pytest.raises(InvalidProfileError, match="litm probe"):
        max_input_tokens_from(PositionProfile.pyramid())
    with pytest.raises(InvalidOptionError, match="leaves no input budget"):
        max_input_tokens_from(measured, reserve_output_tokens=4096)
