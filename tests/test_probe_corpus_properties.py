"""Properties of the probe's filler corpus reader (``litm probe --corpus``, :func:`litm.probe._corpus.load_corpus`).

Any bytes in a ``.jsonl`` or ``.md`` corpus file give a corpus or a :class:`~litm.probe.ProbeError` naming the
file; never another exception, and nothing a prompt or a results file could not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.probe import ProbeError
from litm.probe._corpus import load_corpus

SENTENCES = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cc",)), min_size=1, max_size=30),
                     min_size=1, max_size=4)  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    SENTENCES,
    st.sampled_from(["corpus.jsonl", "corpus.md"]),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=3),
    st.integers(min_value=0),
)
def test_any_corpus_file_bytes_are_a_corpus_or_a_probe_error(
    tmp_path: Path, texts: list[str], name: str, flips: list[tuple[int, int]], cut: int
) -> None:
    if name.endswith(".jsonl"):
        data = bytearray("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts).encode())
    else:
        data = bytearray("\n\n".join(texts).encode())
    for at, value in flips:
        data[at % len(data)] ^= value or 0xFF
    path = tmp_path / name
    path.write_bytes(bytes(data[: cut % (len(data) + 1)]))
    try:
        corpus = load_corpus(path)
    except ProbeError as exc:
        assert path.name in str(exc) and "\n" not in str(exc)
        return
    for sentence in corpus.sentences:
        sentence.encode("utf-8")


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"[" * 100_000, "not valid JSON: nested too deeply"),
        (b'{"text": 1' + b"0" * 5000 + b"}", "Exceeds the limit"),
        (b'{"text": "a \\ud800 b"}', "unpaired UTF-16 surrogate"),
    ],
    ids=["nested-too-deep", "integer-too-long", "surrogate-escape"],
)
def test_lines_that_used_to_raise_untyped_errors(tmp_path: Path, data: bytes, fragment: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(data + b"\n")
    with pytest.raises(ProbeError, match=fragment):
        load_corpus(path)


def test_a_line_separator_inside_a_json_string_is_text(tmp_path: Path) -> None:
    # str.splitlines() used to cut this valid line in two at U+2028 and report it as "not JSON".
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"text": "Rivers flood every spring.\u2028Farmers plant after it."}, ensure_ascii=False))
    assert load_corpus(path).sentences == ("Rivers flood every spring.", "Farmers plant after it.")
