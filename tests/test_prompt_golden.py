"""Golden prompts: every format x language for six documents, byte for byte, plus structural checks.

Regenerate the golden files after an intended wording change with
``LITM_UPDATE_GOLDEN=1 pytest tests/test_prompt_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from litm.placement import place
from litm.prompt import AnchorOptions, ChatTemplate, Escaping, Prompt, PromptBuilder, PromptTemplate, Wording
from litm.prompt._parse import parse_prompt
from litm.util._records import read_records

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "prompt_golden"
QUESTIONS = {"en": "Who won the first Nobel Prize in Physics?", "zh": "谁获得了第一届诺贝尔物理学奖？"}  # noqa: RUF001
SYSTEMS = {"en": "You answer from the documents only.", "zh": "你只根据文档回答。"}
FORMATS = ["text", "openai", "anthropic", "chatml", "jinja"]


def llama3_template() -> ChatTemplate:
    source = (DATA / "prompt_chat_templates" / "llama3.jinja").read_text(encoding="utf-8")
    return ChatTemplate(source, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", name="llama3")


def golden_prompt(lang: str, style: str = "xml", *, full: bool = True) -> Prompt:
    """The golden prompt: every anchor element on (``full``), else the default anchors (the id and title)."""
    anchors = AnchorOptions(style=style)  # type: ignore[arg-type]
    if full:
        full_set = {"positions": True, "scores": True, "closing_ids": True, "recap": True}
        anchors = anchors.replace(**full_set, middle_marker=style != "liu")
    builder = PromptBuilder(
        wording=Wording(lang=lang, system=SYSTEMS[lang]),
        anchors=anchors,
        escaping=Escaping(chat_template=llama3_template()),
    )
    return builder.build(place(read_records(DATA / "prompt_docs.jsonl"), "pyramid", rank_by="score"), QUESTIONS[lang])


def serialise(rendered: Any) -> str:
    return rendered if isinstance(rendered, str) else json.dumps(rendered, ensure_ascii=False, indent=2) + "\n"


def user_text(rendered: Any) -> str:
    """The string holding the documents: the whole prompt, or the user message's content."""
    if isinstance(rendered, str):
        return rendered
    messages = rendered["messages"] if isinstance(rendered, dict) else rendered
    return str(next(m["content"] for m in messages if m["role"] == "user"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(fmt: str, lang: str) -> None:
    prompt = golden_prompt(lang)
    got = serialise(prompt.render(fmt))
    path = GOLDEN / f"{fmt}-{lang}.txt"
    if os.environ.get("LITM_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path.name}: run with LITM_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("style", ["bracket", "liu"])
def test_golden_other_anchor_styles(style: str, lang: str) -> None:
    got = golden_prompt(lang, style).text
    path = GOLDEN / f"text-{lang}-{style}.txt"
    if os.environ.get("LITM_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path.name}: run with LITM_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_golden_default_anchors(lang: str) -> None:
    # The prompt a user gets without anchor options: the id and title in the header, a bare closing tag.
    prompt = golden_prompt(lang, full=False)
    got = prompt.text
    path = GOLDEN / f"text-{lang}-default.txt"
    if os.environ.get("LITM_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path.name}: run with LITM_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")
    t = PromptTemplate.for_lang(lang)
    assert f" {t.position_attr}=" not in got and f" {t.score_attr}=" not in got and "[nobel-1901]" not in got
    assert got.count(f"\n</{t.tag}>") == 6
    assert parse_prompt(got, template=t, neutralizer=prompt.neutralizer).ids == prompt.ids


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_document_once_in_plan_order_with_anchors(fmt: str, lang: str) -> None:
    prompt = golden_prompt(lang)
    t = PromptTemplate.for_lang(lang)
    text = user_text(prompt.render(fmt))
    plan_ids = [s.doc.id for s in prompt.plan.slots]
    assert prompt.ids == plan_ids and len(plan_ids) == 6
    # pyramid by score: the best document (nobel-1901, 0.92) last, the second best (curie) first.
    assert plan_ids[-1] == "nobel-1901" and plan_ids[0] == "curie"
    positions = []
    for slot, doc in enumerate(prompt.documents, start=1):
        header = re.compile(rf'<{t.tag} {t.id_attr}="{re.escape(doc.id)}" {t.position_attr}="{slot}/6"[^\n]*>\n')
        closing = f'\n</{t.tag} {t.id_attr}="{doc.id}">'
        assert len(header.findall(text)) == 1, doc.id
        assert text.count(closing) == 1, doc.id
        assert text.count(doc.text) == 1, doc.id
        h = header.search(text)
        assert h is not None
        # The block is header, text, closing, with nothing else in between.
        assert text[h.end() : h.end() + len(doc.text) + len(closing)] == doc.text + closing
        positions.append(h.start())
    assert positions == sorted(positions)
    assert text.count(f"<{t.tag} ") == 6 and text.count(f"</{t.tag} ") == 6
    # The question comes after the last document; the recap lists the ids in plan order.
    assert text.rindex(QUESTIONS[lang]) > text.rindex(f"</{t.tag} ")
    assert " ".join(f"[{i}]" for i in plan_ids) in text
    parsed = parse_prompt(prompt.render(fmt), template=t, neutralizer=prompt.neutralizer)
    assert parsed.ids == plan_ids
    assert parsed.texts == [d.text for d in prompt.documents]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_content_is_identical_across_formats(lang: str) -> None:
    prompt = golden_prompt(lang)
    user = prompt.user
    for fmt in FORMATS:
        rendered = prompt.render(fmt)
        assert user in user_text(rendered) if isinstance(rendered, str) else user_text(rendered) == user
    assert prompt.to_openai()[0] == {"role": "system", "content": SYSTEMS[lang]}
    assert prompt.to_anthropic()["system"] == SYSTEMS[lang]
    assert prompt.text.endswith(PromptTemplate.for_lang(lang).answer_cue)


def test_header_fields_scores_middle_marker() -> None:
    prompt = golden_prompt("en")
    text = prompt.text
    assert '<document id="curie" position="1/6" score="0.758" source="wiki/Curie">' in text
    cup = 'id="cup-1878" position="4/6" score="0.177" title="Melbourne Cup" source="wiki/Melbourne_Cup" zone="middle">'
    assert cup in text
    assert [b.slot for b in prompt.blocks if b.middle] == [3, 4]
    assert 'Documents marked zone="middle"' in text
