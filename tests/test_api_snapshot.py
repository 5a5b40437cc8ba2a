"""The public API (every name ``litm`` and its public package ``__init__``s export, with kinds and signatures) equals
the committed snapshot, so a change to it is deliberate and shows up as a diff in review."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import api_metrics

REGENERATE = "python scripts/api_metrics.py --write-snapshot"


def test_the_public_api_matches_the_snapshot() -> None:
    committed = api_metrics.SNAPSHOT.read_text(encoding="utf-8")
    current = api_metrics.snapshot()
    if current != committed:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                current.splitlines(keepends=True),
                "tests/data/api_snapshot.txt (committed)",
                "the API now",
                n=1,
            )
        )
        raise AssertionError(
            f"the public API changed; if that is intended, run `{REGENERATE}` and commit the snapshot:\n{diff}"
        )


def test_the_snapshot_sees_signatures() -> None:
    # Guard against a snapshot that lists names only: a signature change must show.
    text = api_metrics.snapshot()
    assert "def place(" in text and "\nclass PromptBuilder\n    PromptBuilder(" in text
    assert "[litm.placement]" in text and "[litm.budget._guard]" not in text


def test_architecture_lists_each_packages_public_names() -> None:
    text = api_metrics.ARCHITECTURE.read_text(encoding="utf-8")
    assert api_metrics.architecture_with_surface(text) == text, (
        f"docs/architecture.md's table of public names is stale: run `{REGENERATE}`"
    )
