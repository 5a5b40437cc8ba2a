"""Prompt layouts: the text around the haystack, varied so an edge artefact can be told from a dead zone.

A small base model asked ``Document: <needle> ...`` tends to repeat the question when the needle sits
right after ``Document:`` or right before ``Question:``: a dip at depth 0 and 1 that is an artefact of
the layout, not a blind spot of attention. The ``buffered`` layout puts a neutral sentence before the
haystack and a closing sentence and a separator after it, so the edges of the haystack are no longer
the edges of the prompt. If the edges recover under ``buffered``, the dip was the layout's.

Placeholders: ``{instruction}`` (a task's instruction line, may be empty), ``{doc_label}``,
``{document}``, ``{question}`` and ``{answer_prefix}`` (the completion cue, ``Answer:``). A custom
template needs ``{document}`` and ``{question}``; without ``{answer_prefix}`` the cue follows the question.

Example:
    >>> LAYOUTS["plain"].render(document="Text.", question="Question: Why?", answer_prefix="Answer:")
    'Document:\\nText.\\n\\nQuestion: Why?\\nAnswer:'
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from litm.errors import ProbeError

__all__ = ["CLOSED_BOOK", "LAYOUTS", "Layout", "get_layout"]

_FIELDS = ("instruction", "doc_label", "document", "question", "answer_prefix")


@dataclass(frozen=True)
class Layout:
    """A named prompt template (plain completion text, which base and instruct models both accept)."""

    name: str
    template: str

    def __post_init__(self) -> None:
        for required in ("{document}", "{question}"):
            if required not in self.template:
                raise ProbeError(f"layout {self.name!r} needs a {required} placeholder")

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()[:12]

    def render(
        self,
        *,
        document: str,
        question: str,
        answer_prefix: str = "Answer:",
        instruction: str = "",
        doc_label: str = "Document:",
    ) -> str:
        """Fill the template. Placeholders are replaced literally, so templates may contain braces."""
        if "{answer_prefix}" not in self.template:
            question = f"{question}\n{answer_prefix}"
        values = {
            "instruction": f"{instruction}\n\n" if instruction else "",
            "doc_label": doc_label,
            "document": document,
            "question": question,
            "answer_prefix": answer_prefix,
        }
        out = self.template
        # {document} last: filler text may itself contain a literal "{question}".
        for key in (*(f for f in _FIELDS if f != "document"), "document"):
            out = out.replace("{" + key + "}", values[key])
        return out


LAYOUTS: dict[str, Layout] = {
    "plain": Layout("plain", "{instruction}{doc_label}\n{document}\n\n{question}\n{answer_prefix}"),
    "buffered": Layout(
        "buffered",
        "{instruction}{doc_label}\nThe reference text starts here.\n\n{document}\n\n"
        "The reference text ends here.\n---\n\n{question}\n{answer_prefix}",
    ),
}

# The closed-book control: the same question and cue with no document at all.
CLOSED_BOOK = Layout("closed-book", "{instruction}{question}\n{answer_prefix}{document}")


def get_layout(name: str) -> Layout:
    """A built-in layout by name (``plain``, ``buffered``)."""
    if name not in LAYOUTS:
        raise ProbeError(f"unknown layout {name!r}; choose from {', '.join(LAYOUTS)} or pass a template file")
    return LAYOUTS[name]
