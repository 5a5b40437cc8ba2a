"""`litm compress`: JSON Lines in and out, a summary on stderr, one-line errors, no partial output file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from litm.compress import CompressionError
from litm.compress._records import compress_records

RECORDS = [
    {"question": "When did the Eiffel Tower open?", "documents": [
        {"id": "t", "title": "Eiffel Tower", "text": "The Eiffel Tower is a tower in Paris. It opened to the public "
         "on 31 March 1889. It is 330 metres tall."},
        "Berlin is the capital of Germany. It has many museums. Its zoo is old."]},
    {"question": "埃菲尔铁塔有多高\uff1f",
     "docs": ["埃菲尔铁塔位于巴黎。它高330米。它于1889年开放。", "柏林是德国的首都。"]},
]  # fmt: skip


def litm(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "litm", *args], input=stdin, capture_output=True, timeout=300)


def test_jsonl_in_jsonl_out_with_a_summary_line(tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    out = tmp_path / "c.jsonl"
    done = litm("compress", str(src), "--goal", "2x", "--tokenizer", "openai:gpt-4o", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 and all(x["tokens"] <= x["budget"] for x in lines)
    tower = lines[0]["docs"][0]
    assert tower["id"] == "t" and "1889" in tower["text"]
    original = RECORDS[0]["documents"][0]["text"]  # type: ignore[index]
    assert all(original[a:b] in tower["text"] for a, b in tower["spans"])
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1 and err[0].startswith("compressed 2 question(s)")
    # stdin to stdout gives the same records.
    piped = litm("compress", "--goal", "2x", "--tokenizer", "openai:gpt-4o", stdin=src.read_bytes())
    assert [json.loads(x)["docs"] for x in piped.stdout.decode().splitlines()] == [x["docs"] for x in lines]


@pytest.mark.parametrize(
    ("args", "stdin", "words"),
    [
        (["--goal", "half"], b'{"question": "q", "documents": ["a b."]}\n', "a ratio ('4x')"),
        (["--goal", "2x", "--scorer", "tfidf"], b'{"question": "q", "documents": ["a."]}\n', "unknown scorer"),
        (["--goal", "2x"], b'{"question": 3, "documents": []}\n', "record 1: 'question'"),
        (["--goal", "2x"], b'{"question": "q", "documents": []}\n', "record 1: no documents"),
        (["--goal", "2x"], b"\xff\xfe not utf-8\n", "UTF-8"),
        (["--goal", "2x"], b"{not json\n", "line 1"),
    ],
)
def test_bad_input_is_one_line_and_leaves_no_file(tmp_path: Path, args: list[str], stdin: bytes, words: str) -> None:
    out = tmp_path / "c.jsonl"
    done = litm("compress", *args, "--tokenizer", "openai:gpt-4o", "--out", str(out), stdin=stdin)
    err = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and words in err[0], err
    assert not out.exists()


def test_records_name_the_bad_one_and_load_the_scorer_once() -> None:
    good = {"question": "q?", "documents": ["One. Two."]}
    with pytest.raises(CompressionError, match="record 2: 'documents'"):
        list(compress_records([good, {"question": "q?"}], tokenizer=len, ratio=2, scorer="retriever"))
