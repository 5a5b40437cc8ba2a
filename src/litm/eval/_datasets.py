"""The datasets bundled with litm, read from the package (never from the network).

* NQ-Open oracle rows (Liu et al.'s release, MIT; Natural Questions, CC BY-SA 3.0): question, accepted
  answers, and the gold Wikipedia passage in ``ctxs[0]``. Used by the benchmark, the probe's ``docqa``
  task and the default filler corpus.
* Liu et al.'s key-value retrieval examples (75 UUID pairs each), used by the probe's ``kv`` task.

See ``src/litm/data/README.md`` for provenance and licences.

Example:
    >>> row = nq_rows()[0]
    >>> sorted(row), len(kv_examples()[0]["ordered_kv_records"])
    (['answers', 'ctxs', 'nq_annotated_gold', 'question'], 75)
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib import resources
from typing import TypedDict, cast

__all__ = ["KVExample", "NQContext", "NQRow", "kv_examples", "nq_rows"]


class NQContext(TypedDict):
    """A passage of an NQ-Open row (``ctxs[0]`` is the gold one)."""

    title: str
    text: str
    hasanswer: bool
    isgold: bool


class NQRow(TypedDict):
    """One bundled NQ-Open oracle row."""

    question: str
    answers: list[str]
    ctxs: list[NQContext]
    nq_annotated_gold: dict[str, object]


class KVExample(TypedDict):
    """One of Liu et al.'s key-value retrieval examples: the pairs in order, and the asked key and its value."""

    key: str
    value: str
    ordered_kv_records: list[list[str]]


def _jsonl_gz(name: str) -> list[object]:
    raw = (resources.files("litm") / "data" / name).read_bytes()
    return [json.loads(line) for line in gzip.decompress(raw).decode("utf-8").splitlines() if line.strip()]


def nq_rows() -> list[NQRow]:
    """The bundled NQ-Open oracle rows (question, answers, one gold Wikipedia passage each)."""
    # The file ships in the wheel and its shape is pinned by the doctest above, so it is not re-validated.
    return cast(list[NQRow], _jsonl_gz("nq-open-oracle.jsonl.gz"))


@lru_cache(maxsize=1)
def kv_examples() -> tuple[KVExample, ...]:
    """Liu et al.'s key-value retrieval examples (75 pairs each), read once per process."""
    return tuple(cast(list[KVExample], _jsonl_gz("kv-retrieval-75_keys.jsonl.gz")))
