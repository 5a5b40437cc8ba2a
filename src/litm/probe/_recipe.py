"""Rebuild the exact prompt of a results row from its recipe (no model or tokenizer needed).

Every row stores the recipe of its prompt: the layout template, the question lines, and the document as
corpus sentence ranges plus inserted text (haystack tasks), or the item parameters (kv, docqa). With
the same corpus, :func:`rebuild_prompt` returns the prompt byte for byte; ``prompt_sha256`` in the row
checks it.

Example:
    >>> row = read_rows("out/results.jsonl")[0]                                      # doctest: +SKIP
    >>> verify_row(row)                                                               # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from litm.errors import ProbeError
from litm.probe._corpus import Corpus, Unit, default_corpus
from litm.probe._insert import text_of
from litm.probe._items import DocQATask, KVTask
from litm.probe._layouts import Layout
from litm.probe._tasks import TaskInstance

__all__ = ["rebuild_document", "rebuild_prompt", "verify_row"]


def rebuild_document(recipe: Mapping[str, Any], corpus: Corpus | None = None) -> str:
    """The haystack / item text of a recipe."""
    doc = recipe.get("document") or {}
    kind = doc.get("kind")
    if kind == "none":
        return ""
    if kind == "sentences":
        corpus = corpus or default_corpus()
        if corpus.fingerprint != doc.get("corpus_fingerprint"):
            raise ProbeError(
                f"recipe was built from corpus {doc.get('corpus')!r} ({doc.get('corpus_fingerprint')}); "
                f"got {corpus.name!r} ({corpus.fingerprint})"
            )
        units: list[Unit] = []
        for part in doc["units"]:
            if isinstance(part, str):
                units.append(Unit(part))
            else:
                units.extend(corpus.unit(i) for i in range(int(part[0]), int(part[1])))
        return text_of(units)
    if kind in ("kv", "docqa"):
        params = {k: v for k, v in doc.items() if k not in ("kind", "n", "gold_index")}
        inst = TaskInstance(task=kind, question="", answers=(), params=params)
        n, depth = int(doc["n"]), float(params["depth"])
        if kind == "kv":
            kv = KVTask()
            return kv.render_items(kv.arrange(inst, n, depth)[0])
        docqa = DocQATask()
        return docqa.render_items(docqa.arrange(inst, n, depth)[0])
    raise ProbeError(f"unknown recipe document kind {kind!r}")


def rebuild_prompt(recipe: Mapping[str, Any], corpus: Corpus | None = None) -> str:
    """The exact prompt text a row was run with."""
    lay = recipe["layout"]
    layout = Layout(str(lay["name"]), str(lay["template"]))
    return layout.render(
        document=rebuild_document(recipe, corpus),
        question=str(recipe["question"]),
        answer_prefix=str(recipe["answer_prefix"]),
        instruction=str(recipe.get("instruction", "")),
        doc_label=str(recipe.get("doc_label", "Document:")),
    )


def verify_row(row: Mapping[str, Any], corpus: Corpus | None = None) -> bool:
    """Whether the row's recipe rebuilds a prompt with the row's ``prompt_sha256``."""
    prompt = rebuild_prompt(row["recipe"], corpus)
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest() == row.get("prompt_sha256")
