"""litm.placement, litm.prompt and the root package keep small surfaces and honest types (issue 43).

The names are the API a user calls, implements or annotates; everything else lives in private modules. ``Any``
stays only where a value is the caller's own object or arbitrary JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import litm
import litm.placement
import litm.prompt
from litm.errors import InvalidDocumentError, LitmError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import api_metrics

SRC = Path(__file__).resolve().parents[1] / "src" / "litm"

PLACEMENT = {
    "Doc", "PlacementOptions", "PlacementPlan", "PositionProfile", "Strategy", "place", "register_profile",
    "register_strategy", "strategy_names",
}  # fmt: skip
PROMPT = {
    "AnchorOptions", "ChatTemplate", "Escaping", "Layout", "Prompt", "PromptBuilder", "PromptTemplate", "Wording",
    "anchors_for", "build_prompt", "parse_quoted_answer", "register_anchors",
}  # fmt: skip


def _non_errors(module: object) -> set[str]:
    names = set(getattr(module, "__all__", ()))
    return {n for n in names if not (isinstance(obj := getattr(module, n), type) and issubclass(obj, LitmError))}


def test_placement_and_prompt_export_what_a_user_needs() -> None:
    # Before: 28 and 38 non-error names (the strategy classes, constants, helpers, result parts).
    assert _non_errors(litm.placement) == PLACEMENT
    assert _non_errors(litm.prompt) == PROMPT


def test_the_root_exports_at_most_15_names_each_also_exported_by_its_package() -> None:
    names = _non_errors(litm) - {"__version__"}
    assert len(names) <= 15, sorted(names)
    homes = [litm.placement, litm.prompt, __import__("litm.budget", fromlist=["_"])]
    for name in names:
        assert any(name in getattr(home, "__all__", ()) and getattr(home, name) is getattr(litm, name)
                   for home in homes), name  # fmt: skip


@pytest.mark.parametrize("package", ["placement", "prompt"])
def test_implementation_modules_are_private(package: str) -> None:
    public = sorted(p.name for p in (SRC / package).glob("*.py") if not p.name.startswith("_"))
    assert public == [], public


def test_any_is_kept_for_callers_objects_and_json_only() -> None:
    counts = api_metrics.any_uses()
    # Before: 59 in placement, 70 in prompt.
    assert counts.get("litm.placement", 0) + counts.get("litm.prompt", 0) <= 35, counts


def test_metadata_that_is_not_a_mapping_is_a_typed_error() -> None:
    # Before: dict("tags") raised a bare ValueError from deep in the reader.
    with pytest.raises(InvalidDocumentError, match="item 0: metadata must be a mapping, got str") as err:
        litm.place([{"text": "a", "metadata": "tags"}])
    assert err.value.field == "metadata" and isinstance(err.value, TypeError)
