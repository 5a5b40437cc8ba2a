"""The estimate tokenizer's ASCII fast path (what the gateway counts every request with) counts exactly what
the general per-character path counts."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from litm.models.tokenizers._estimate import CLASSES, _any_counts, _ascii_counts, script_counts

NOT_ASCII = {"letter2", "letter3", "cjk", "hangul", "emoji", "xword"}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=400))
def test_ascii_fast_path_matches_the_general_path(text: str) -> None:
    assert _ascii_counts(text, dict.fromkeys(CLASSES, 0)) == _any_counts(text, dict.fromkeys(CLASSES, 0))


def test_every_ascii_character_lands_in_the_same_class_on_both_paths() -> None:
    everything = "".join(chr(c) for c in range(128)) + " word" + string.printable
    assert script_counts(everything) == _any_counts(everything, dict.fromkeys(CLASSES, 0))
    counts = script_counts("Ab 12, cd\te\x1f!")
    assert {k: v for k, v in counts.items() if k not in NOT_ASCII} == {
        "letter": 5, "word": 3, "digit": 2, "punct": 2, "space": 4}  # fmt: skip
    assert all(counts[k] == 0 for k in NOT_ASCII)
