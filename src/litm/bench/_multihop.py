"""The bundled multi-hop sets (HotpotQA, 2WikiMultihopQA) and NQ as benchmark data records.

Each loader turns its dataset's own format into litm's data-file format (:mod:`litm.bench._datafile`) and
validates it through the same parser a user's file goes through, so every source obeys one schema:

* ``hotpotqa``: the first 103 dev questions, distractor setting: 10 paragraphs each, gold = the paragraphs
  whose title is in ``supporting_facts`` (always 2); ``type`` bridge or comparison. One question has only its 2
  gold paragraphs and is left out at any ``k`` above 2.
* ``2wiki``: the first 200 dev questions of 2WikiMultihopQA (FlashRAG's format): 10 paragraphs, 2 or 4 gold;
  ``type`` compositional, comparison, inference or bridge_comparison; answers with their aliases.
* ``nq``: the bundled NQ-Open questions (one gold passage); their distractors are mined from the other
  questions' passages by :mod:`litm.bench._data`, so NQ is not read through here.

Provenance and licences: ``litm/data/README.md``. The documents come in the dataset's order (HotpotQA and
2Wiki shuffle gold and distractor paragraphs); the benchmark ranks them with a retriever.

Example:
    >>> records = load_records("hotpotqa")
    >>> len(records), records[0].kind, [d.title for d in records[0].golds]
    (103, 'comparison', ['Scott Derrickson', 'Ed Wood'])
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from litm.bench._datafile import DataRecord, parse_record
from litm.errors import InvalidOptionError

__all__ = ["BUNDLED", "hotpotqa_records", "load_records", "twowiki_records"]

#: Bundled multi-hop sets: name -> (file in litm/data, description).
BUNDLED: dict[str, tuple[str, str]] = {
    "hotpotqa": ("hotpotqa-dev-distractor-first103.json.gz", "HotpotQA dev, distractor setting, first 103"),
    "2wiki": ("2wikimultihopqa-dev-first200.jsonl.gz", "2WikiMultihopQA dev, first 200"),
}


def _read(name: str) -> str:
    return gzip.decompress((resources.files("litm") / "data" / name).read_bytes()).decode("utf-8")


def _records(rows: Iterable[Mapping[str, Any]], source: str) -> list[DataRecord]:
    return [parse_record(row, line=i, path=source) for i, row in enumerate(rows, start=1)]


def hotpotqa_row(row: Mapping[str, Any]) -> dict[str, object]:
    """One HotpotQA row (official format) as a data record."""
    gold = {str(title) for title, _ in row["supporting_facts"]}
    docs = [
        {"title": str(title), "text": "".join(sentences).strip(), "gold": str(title) in gold}
        for title, sentences in row["context"]
    ]
    for i, d in enumerate(docs, start=1):
        d["id"] = f"p{i}"
    return {"id": str(row["_id"]), "question": row["question"], "answers": [row["answer"]], "type": row["type"],
            "documents": docs}  # fmt: skip


def twowiki_row(row: Mapping[str, Any]) -> dict[str, object]:
    """One 2WikiMultihopQA row (FlashRAG's format) as a data record."""
    meta = row["metadata"]
    gold = set(meta["supporting_facts"]["title"])
    ctx = meta["context"]
    docs = [
        {"id": f"p{i}", "title": str(title), "text": " ".join(s.strip() for s in sentences).strip(),
         "gold": title in gold}
        for i, (title, sentences) in enumerate(zip(ctx["title"], ctx["content"], strict=True), start=1)
    ]  # fmt: skip
    return {"id": str(row["id"]), "question": row["question"], "answers": list(row["golden_answers"]),
            "type": meta["type"], "documents": docs}  # fmt: skip


@lru_cache(maxsize=2)
def _hotpotqa() -> tuple[DataRecord, ...]:
    rows = json.loads(_read(BUNDLED["hotpotqa"][0]))
    return tuple(_records((hotpotqa_row(r) for r in rows), "hotpotqa"))


@lru_cache(maxsize=2)
def _twowiki() -> tuple[DataRecord, ...]:
    rows = [json.loads(line) for line in _read(BUNDLED["2wiki"][0]).splitlines() if line.strip()]
    return tuple(_records((twowiki_row(r) for r in rows), "2wiki"))


def hotpotqa_records() -> list[DataRecord]:
    """The bundled HotpotQA questions as validated records."""
    return list(_hotpotqa())


def twowiki_records() -> list[DataRecord]:
    """The bundled 2WikiMultihopQA questions as validated records."""
    return list(_twowiki())


def load_records(name: str) -> list[DataRecord]:
    """A bundled multi-hop set by name (``hotpotqa``, ``2wiki``)."""
    if name == "hotpotqa":
        return hotpotqa_records()
    if name == "2wiki":
        return twowiki_records()
    raise InvalidOptionError(f"unknown bundled data set {name!r}; choose from {', '.join(BUNDLED)} (or nq)")
