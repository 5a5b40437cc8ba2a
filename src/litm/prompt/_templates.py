"""Prompt wording: the labels and texts of a prompt, in English and Chinese, overridable without code.

A :class:`PromptTemplate` holds every word litm puts into a prompt: the document tag and its
attribute names (the anchors), the instruction, the middle-zone note, the citation recap, the
question line and the completion cue. Texts are :meth:`str.format` templates with named fields
(``{ids}``, ``{question}``); unknown fields are refused when the template is made, not when a prompt
is rendered. Override any part with :meth:`PromptTemplate.replace`, or from a JSON file with
:meth:`PromptTemplate.load` (keys are the field names, ``"lang"`` picks the base).

The anchor *shape* is fixed by the anchor style (see :mod:`litm.prompt._styles`; for the default ``xml``
style ``<tag attr="value">`` ... ``</tag id="value">``) so that prompts can be parsed back and forged
anchors escaped; only the names inside it are words you can change.

Example:
    >>> t = PromptTemplate.for_lang("en").replace(question="Q: {question}")
    >>> t.question.format(question="why?")
    'Q: why?'
    >>> PromptTemplate.for_lang("zh").tag
    '文档'
"""

from __future__ import annotations

import dataclasses
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from litm.errors import PromptError
from litm.prompt._fields import replace_fields

__all__ = ["LANGS", "Lang", "PromptTemplate"]

Lang = Literal["en", "zh"]
LANGS: tuple[str, ...] = ("en", "zh")

# A tag or attribute name: a letter, then letters, digits, "_", "-", "." or ":" (XML-like, any script).
_NAME = re.compile(r"[^\W\d_][\w.:-]*")

# The format fields each text may use; anything else is a typo caught at construction.
# ``instruction`` and ``answer_cue`` are plain text (braces are literal).
_FIELDS: dict[str, frozenset[str]] = {
    "middle_note": frozenset({"tag", "zone", "middle", "marker"}),
    "recap": frozenset({"ids", "count"}),
    "recap_id": frozenset({"id"}),
    "question": frozenset({"question"}),
    "quote_instruction": frozenset({"quote", "answer"}),
}

_NAME_FIELDS = (
    "tag", "id_attr", "position_attr", "score_attr", "title_attr", "source_attr", "zone_attr", "rank_attr",
)


@dataclass(frozen=True)
class PromptTemplate:
    """Every word of a prompt. Build one with :meth:`for_lang`, then :meth:`replace` what you need.

    Anchor names: ``tag`` (the document element), ``id_attr``, ``position_attr``, ``score_attr``,
    ``rank_attr`` (rank-only headers), ``title_attr``, ``source_attr``, ``zone_attr`` and ``middle`` (the
    zone value marking a middle-zone document). Texts: ``instruction``; ``liu_instruction`` (the
    instruction of the ``liu`` style, whose numbered search results have no ids or closing tags);
    ``middle_note`` (appended to the instruction when a document is marked; ``{marker}`` is the marker
    exactly as the anchor style prints it, ``zone="middle"`` or ``ZONE: MIDDLE``); ``chat_instruction``
    (what a chat model is told instead of ``instruction``: the answer first, then the cited ids, see
    :meth:`~litm.prompt.PromptBuilder.for_chat`); ``reread`` (the follow-up when a chat model replied with
    ids alone); ``recap``
    (``{ids}``: the recap ids joined by spaces, ``{count}``) with ``recap_id`` (one id, ``{id}``);
    ``question`` (``{question}``); ``answer_cue`` (ends a plain-text completion prompt; empty for
    none). Quote-first prompts (:attr:`~litm.prompt.Wording.quote_first`) add ``quote_instruction``
    (``{quote}``: ``quote_cue``, ``{answer}``: ``answer_marker``) to the instruction, end the plain-text
    form with ``quote_cue`` instead of ``answer_cue``, and are answered after ``answer_marker``.
    ``lang`` records the base language. The names are used by the ``xml`` anchor style; the
    ``bracket`` and ``liu`` styles are fixed formats with their own labels.
    """

    lang: str = "en"
    tag: str = "document"
    id_attr: str = "id"
    position_attr: str = "position"
    score_attr: str = "score"
    title_attr: str = "title"
    source_attr: str = "source"
    zone_attr: str = "zone"
    middle: str = "middle"
    instruction: str = (
        "Answer the question using only the documents below. Each document opens with a header that "
        "gives its id. Cite the ids of the documents you use "
        "in square brackets, for example [id]."
    )
    middle_note: str = (
        "Documents marked {marker} sit in the middle of the context, where facts are easiest "
        "to miss: read them as carefully as the first and the last."
    )
    recap: str = "Documents above, for citations: {ids}"
    recap_id: str = "[{id}]"
    question: str = "Question: {question}"
    answer_cue: str = "Answer:"
    rank_attr: str = "rank"
    # What a chat model is told instead of ``instruction`` (see PromptBuilder.for_chat): small chat models asked
    # to cite answered with the citation alone ("[notes.md#0]"), so the answer comes first and ids alone are
    # ruled out in as many words.
    chat_instruction: str = (
        "Answer the question using only the documents below. Each document opens with a header that "
        "gives its id. Write the answer first, in words; after "
        "it, cite the ids of the documents you used in square brackets, for example: It was built in "
        "1901 [id]. Never reply with ids alone."
    )
    # The follow-up when a chat model's reply held document ids and nothing else.
    reread: str = (
        "Your reply gave document ids but no answer. Write the answer to the question in words, then "
        "the ids in square brackets."
    )
    # Liu et al. (2024)'s instruction for multi-document QA, word for word.
    liu_instruction: str = (
        "Write a high-quality answer for the given question using only the provided search results "
        "(some of which might be irrelevant)."
    )
    # Quote-first (Wording.quote_first): the request appended to the instruction, the label a quote-first reply
    # starts with (the prefill of the formats that allow one) and the marker the answer follows.
    quote_instruction: str = (
        "First copy, word for word, the one sentence from the documents that best answers the question, after "
        '"{quote}". Then write the answer on its own line, after "{answer}".'
    )
    quote_cue: str = "Quote:"
    answer_marker: str = "Answer:"

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, str):
                raise PromptError(f"template field {f.name!r} must be a string, got {type(value).__name__}")
        for name in _NAME_FIELDS:
            if not _NAME.fullmatch(getattr(self, name)):
                raise PromptError(
                    f"template field {name!r} must be a name (a letter, then letters, digits, _ - . :), "
                    f"got {getattr(self, name)!r}"
                )
        names = [getattr(self, n) for n in _NAME_FIELDS[1:]]
        if len(set(names)) != len(names):
            raise PromptError(f"template attribute names must be distinct, got {names}")
        for name, allowed in _FIELDS.items():
            _check_fields(name, getattr(self, name), allowed)

    @classmethod
    def for_lang(cls, lang: str) -> PromptTemplate:
        """The built-in template for ``lang`` (``"en"`` or ``"zh"``)."""
        if lang == "en":
            return cls()
        if lang == "zh":
            return _ZH
        raise PromptError(f"unknown prompt language {lang!r}; choose from {', '.join(LANGS)}")

    def replace(self, **changes: object) -> PromptTemplate:
        """A copy with ``changes`` applied (validated like a new template)."""
        return replace_fields(self, changes)

    @classmethod
    def from_dict(cls, data: object, *, lang: str = "en") -> PromptTemplate:
        """A template from a mapping (anything else is a :class:`~litm.errors.PromptError`): its ``lang`` key
        (else ``lang``) picks the base template, every other key overrides a field."""
        if not isinstance(data, Mapping):
            raise PromptError(f"a prompt template must be a JSON object, got {type(data).__name__}")
        base = cls.for_lang(str(data.get("lang", lang)))
        return base.replace(**{k: v for k, v in data.items() if k != "lang"})

    @classmethod
    def load(cls, path: str | Path, *, lang: str = "en") -> PromptTemplate:
        """Read a template from a JSON file (see :meth:`from_dict`)."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PromptError(f"template file not found: {p}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PromptError(f"cannot read template {p}: {exc}") from None
        return cls.from_dict(data, lang=lang)

    def to_dict(self) -> dict[str, str]:
        """Every field, JSON-ready; :meth:`from_dict` reads it back."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _check_fields(name: str, text: str, allowed: frozenset[str]) -> None:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise PromptError(f"template field {name!r} is not a valid format string: {exc}") from None
    for _, field, spec, conv in parsed:
        if field is None:
            continue
        if field not in allowed or spec or conv:
            hint = ", ".join("{" + a + "}" for a in sorted(allowed)) or "none (write {{ and }} for braces)"
            raise PromptError(f"template field {name!r} uses {{{field}}}; allowed fields: {hint}")


_ZH = PromptTemplate(
    lang="zh",
    tag="文档",
    id_attr="编号",
    position_attr="位置",
    score_attr="相关度",
    title_attr="标题",
    source_attr="来源",
    zone_attr="区域",
    middle="中部",
    instruction=(
        "请仅根据下面的文档回答问题。每篇文档以注明编号的标题行开始。"
        "请用方括号注明你所引用文档的编号，例如 [编号]。"  # noqa: RUF001
    ),
    middle_note=(
        "标记为 {marker} 的文档位于上下文中部，"  # noqa: RUF001
        "其中的信息最容易被忽略，请像对待首尾文档一样仔细阅读。"  # noqa: RUF001
    ),
    recap="以上文档的编号（供引用）：{ids}",  # noqa: RUF001
    recap_id="[{id}]",
    question="问题：{question}",  # noqa: RUF001
    answer_cue="答案：",  # noqa: RUF001
    rank_attr="排名",
    chat_instruction=(
        "请仅根据下面的文档回答问题。每篇文档以注明编号的标题行开始。"
        "请先用文字写出答案，然后在答案后用方括号注明你所引用文档的编号，例如：它建于1901年 [编号]。"  # noqa: RUF001
        "不要只回复编号。"
    ),
    reread="你的回复只有文档编号，没有答案。请先用文字写出问题的答案，然后用方括号注明编号。",  # noqa: RUF001
    liu_instruction="请仅根据所提供的搜索结果（其中一些可能无关）为给定的问题写出高质量的答案。",  # noqa: RUF001
    quote_instruction=(
        "请先从文档中逐字摘录最能回答问题的一句话，写在“{quote}”之后；"  # noqa: RUF001
        "然后另起一行，在“{answer}”之后写出答案。"  # noqa: RUF001
    ),
    quote_cue="引文：",  # noqa: RUF001
    answer_marker="答案：",  # noqa: RUF001
)
