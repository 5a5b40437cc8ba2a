"""Filler corpora: sentence splitting, the bundled default, and users' own files."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest

from litm.errors import ProbeError
from litm.probe._corpus import Corpus, default_corpus, load_corpus, split_sentences
from litm.probe._layouts import LAYOUTS, Layout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three?", ["One.", "Two!", "Three?"]),
        ("Dr. Who met Mr. Smith. Then he left.", ["Dr. Who met Mr. Smith.", "Then he left."]),
        ("It is in the U.S. Army today. Yes it is.", ["It is in the U.S. Army today.", "Yes it is."]),
        ("J. R. R. Tolkien wrote it. Done.", ["J. R. R. Tolkien wrote it.", "Done."]),
        ('He said "Stop." Then silence.', ['He said "Stop."', "Then silence."]),
        ("no capital after. the end", ["no capital after. the end"]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_default_corpus_is_real_wikipedia_prose() -> None:
    c = default_corpus()
    assert c.name == "nq-wikipedia" and len(c) > 5000
    text = " ".join(c.sentences[:2000]).lower()
    assert "lorem" not in text and "ipsum" not in text
    assert all(s[-1] in ".!?\"')]\u201d\u2019" for s in c.sentences[:2000])
    assert len(set(c.sentences)) == len(c)
    assert c.fingerprint == default_corpus().fingerprint


def test_stream_is_seeded_and_paragraphs_keep_their_order() -> None:
    c = Corpus.from_texts(["Alpha one is here. Alpha two is here.", "Beta one is here. Beta two is here."], name="t")
    a = [u.text for u in c.stream(1)]
    assert a == [u.text for u in c.stream(1)]
    assert sorted(a) == sorted(u.text for u in c.stream(2))
    for first, second in (("Alpha one", "Alpha two"), ("Beta one", "Beta two")):
        i = next(i for i, t in enumerate(a) if first in t)
        assert second in a[i + 1] and a[i].startswith("\n\n") and a[i + 1].startswith(" ")


def test_stream_excludes_task_terms() -> None:
    c = default_corpus()
    units = list(islice(c.stream(0, exclude=["the"]), 200))
    assert units and all("the" not in u.text.lower() for u in units)


def test_load_corpus_from_a_directory_of_markup(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Title\n\nThe first paragraph has two sentences. It ends right here.\n\n```python\nx = 1\n```\n\n"
        "- A bullet point is a sentence too.\n",
        encoding="utf-8",
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.rst").write_text(
        "Heading\n=======\n\n.. note:: skipped\n\nRestructured text is prose as well.\n", encoding="utf-8"
    )
    (tmp_path / "c.txt").write_text("Plain text works fine too.\n", encoding="utf-8")
    (tmp_path / "ignored.py").write_text("print('not prose')\n", encoding="utf-8")
    c = load_corpus(tmp_path)
    assert set(c.sentences) == {
        "The first paragraph has two sentences.",
        "It ends right here.",
        "A bullet point is a sentence too.",
        "Restructured text is prose as well.",
        "Plain text works fine too.",
    }


def test_load_corpus_from_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    lines = [
        {"text": "A first document has words. It has two sentences."},
        {"content": "Another one is here."},
        "Bare.",
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    c = load_corpus(path)
    assert "Another one is here." in c.sentences and len(c) == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [("not json\n", "bad.jsonl:1 is not valid JSON"), ('{"title": "no text"}\n', "'text' field")],
)
def test_bad_jsonl_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ProbeError, match=message):
        load_corpus(path)


def test_missing_or_empty_corpus_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="not found"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(ProbeError, match=r"no \.txt"):
        load_corpus(tmp_path)
    (tmp_path / "x.txt").write_text("too short\n", encoding="utf-8")
    with pytest.raises(ProbeError, match="no usable sentences"):
        load_corpus(tmp_path)


def test_layouts_render_and_custom_templates_need_placeholders() -> None:
    text = LAYOUTS["buffered"].render(document="Doc {question}.", question="Question: Q?", answer_prefix="Answer:")
    assert text.endswith("---\n\nQuestion: Q?\nAnswer:") and "Doc {question}." in text
    custom = Layout("mine", '{"context": "{document}"}\n{question}')
    assert custom.render(document="D", question="Q", answer_prefix="A:") == '{"context": "D"}\nQ\nA:'
    with pytest.raises(ProbeError, match="question"):
        Layout("bad", "{document} only")


def test_default_corpus_is_the_one_the_committed_probe_results_were_built_from() -> None:
    # Every committed probe row names the corpus its prompt was built from; the shared splitter must keep
    # the default corpus identical, or those rows could no longer be rebuilt, verified or rescored.
    results = sorted((Path(__file__).resolve().parents[1] / "docs" / "results").glob("probe-*/results.jsonl"))
    assert results
    named = {
        json.loads(line)["recipe"]["document"]["corpus_fingerprint"]
        for path in results
        for line in path.read_text(encoding="utf-8").splitlines()
        if '"corpus_fingerprint"' in line
    }
    assert named == {default_corpus().fingerprint}
